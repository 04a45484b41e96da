#include "calibrate/confirm_logs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "calibrate/megatron_log.hpp"
#include "core/error.hpp"

namespace parasim::calibrate {
namespace {

std::optional<double> as_number(const std::string& s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool same_value(const std::string& wanted, const std::string& printed) {
  const auto a = as_number(wanted), b = as_number(printed);
  if (a && b) return *a == *b;
  return wanted == printed;
}

std::vector<std::filesystem::path> node_logs(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> logs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".log") logs.push_back(entry.path());
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// torchtitan logs local rank 0 of every node: node 0's log is rank 0's, the one with the whole run.
void measure_torchtitan(const ConfirmedPlan& plan, ConfirmMeasurement& m) {
  const auto log = read_torchtitan_log(m.logs.front());
  if (const auto mismatch = argument_mismatch(plan.arguments, torchtitan_settings(log))) {
    m.problem = "the logs are another plan's run: " + *mismatch;
    return;
  }
  m.measured_s = torchtitan_step_seconds(log, &m.steps_used);
  if (const auto peak = torchtitan_peak_reserved_gib(log)) m.peak_mib = *peak * 1024;
}

ConfirmMeasurement measure(const ConfirmedPlan& plan, const std::filesystem::path& dir) {
  ConfirmMeasurement m;
  m.logs = node_logs(dir / plan.dir);
  if (m.logs.empty()) {
    m.problem = fmt::format("not run: no {}/*.log", plan.dir);
    return m;
  }
  if (plan.framework == "torchtitan") {
    try {
      measure_torchtitan(plan, m);
    } catch (const InputError& e) {
      m.problem = e.what();
    }
    return m;
  }
  try {
    const auto log = read_megatron_logs(m.logs);
    std::vector<std::pair<std::string, std::string>> dump;
    for (const auto& [name, value] : log.arguments) dump.emplace_back(name, value.value);
    if (const auto mismatch = argument_mismatch(plan.arguments, dump)) {
      m.problem = "the logs are another plan's run: " + *mismatch;
      return m;
    }
    m.measured_s = steady_step_seconds(log, &m.steps_used);
    m.peak_mib = peak_allocated_mib(log);
  } catch (const InputError& e) {
    m.problem = e.what();
  }
  return m;
}

}  // namespace

std::string argument_dest(const std::string& flag) {
  std::string out = flag.starts_with("--") ? flag.substr(2) : flag;
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

std::optional<std::string> argument_mismatch(const std::vector<std::pair<std::string, std::string>>& wanted,
                                             const std::vector<std::pair<std::string, std::string>>& dump) {
  for (const auto& [flag, value] : wanted) {
    const auto dest = argument_dest(flag);
    const auto it = std::find_if(dump.begin(), dump.end(), [&](const auto& d) { return d.first == dest; });
    if (it == dump.end() || it->second.starts_with("[")) continue;
    const std::string expected = value.empty() ? "True" : value;
    if (!same_value(expected, it->second)) return fmt::format("{} is {}, not {}", dest, it->second, expected);
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> torchtitan_settings(const TorchtitanLog& log) {
  const std::pair<const char*, const char*> degrees[] = {{"dp_replicate", "data_parallel_replicate_degree"}, {"dp_shard", "data_parallel_shard_degree"},
                                                         {"tp", "tensor_parallel_degree"}, {"cp", "context_parallel_degree"}, {"pp", "pipeline_parallel_degree"}};
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [dimension, key] : degrees) {
    int size = 1;
    for (const auto& [name, n] : log.mesh) {
      if (name == dimension) size = n;
    }
    out.emplace_back(key, std::to_string(size));
  }
  if (log.local_batch) out.emplace_back("local_batch_size", std::to_string(*log.local_batch));
  if (log.seq_len) out.emplace_back("seq_len", std::to_string(*log.seq_len));
  return out;
}

ConfirmReading read_confirmed(const std::vector<ConfirmedPlan>& plans, const std::filesystem::path& dir) {
  ConfirmReading r;
  for (const auto& p : plans) r.measured.push_back(measure(p, dir));
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (!r.measured[i].measured_s) continue;
    if (!r.fastest || *r.measured[i].measured_s < *r.measured[*r.fastest].measured_s) r.fastest = i;
    for (std::size_t j = i + 1; j < plans.size(); ++j) {
      if (!r.measured[j].measured_s) continue;
      const double predicted = plans[i].predicted_s - plans[j].predicted_s, measured = *r.measured[i].measured_s - *r.measured[j].measured_s;
      if (std::fabs(predicted) <= kPredictedTie * std::max(plans[i].predicted_s, plans[j].predicted_s)) {
        ++r.tied;
        continue;
      }
      ++r.pairs;
      r.agreeing += (predicted < 0) == (measured < 0);
    }
  }
  return r;
}

}  // namespace parasim::calibrate
