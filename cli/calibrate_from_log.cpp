#include "cli/calibrate_from_log.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/table.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"
#include "core/units.hpp"
#include "sim/megatron_log_run.hpp"
#include "sim/validation.hpp"

namespace parasim::cli {
namespace {

struct ReadLog {
  calibrate::MegatronLog log;
  sim::LogRun run;
};

/// The --gpu name as a bundled hardware file: the file of that name, or the only one whose name begins
/// with it and a dash (`h200` -> h200-sxm-141gb), as scenario files name them; else an error.
std::string resolve_gpu(const std::string& gpu, const std::filesystem::path& dir) {
  std::vector<std::string> names, matches;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    if (n == gpu) return n;
    if (n.rfind(gpu + "-", 0) == 0) matches.push_back(n);
  }
  if (matches.size() == 1) return matches.front();
  const std::string what = matches.empty() ? fmt::format("is not a bundled GPU{}", did_you_mean(gpu, names))
                                           : fmt::format("names several bundled GPUs: {}", fmt::join(matches, ", "));
  throw InputError({"--gpu", 0, 0}, {}, fmt::format("'{}' {}; bundled: {}", gpu, what, fmt::join(names, ", ")));
}

std::string signed_percent(double x) { return fmt::format("{:+.1f}%", 100 * x); }

std::string model_line(const sim::MeasuredRun& r) {
  std::string s = fmt::format("{} {} layers, hidden {}, {} heads", r.arch, r.layers, r.hidden, r.heads);
  if (r.kv_heads) s += fmt::format(" ({} kv)", *r.kv_heads);
  if (r.ffn_hidden) s += fmt::format(", ffn {}", *r.ffn_hidden);
  if (r.experts) s += fmt::format(", {} experts top {}", *r.experts, r.top_k.value_or(0));
  if (r.vocab) s += fmt::format(", vocab {}", *r.vocab);
  return s + fmt::format(", seq {}, {} {}, dropout {:g}", r.seq_len, r.precision, r.attention, r.dropout.value_or(0));
}

std::string text_report(const std::vector<ReadLog>& logs, const sim::ValidationReport& report) {
  Table t({"log", "GPUs", "measured", "predicted", "error", "peak printed", "modelled", "error"},
          {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right,
           Table::Align::right, Table::Align::right});
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto& l = logs[i];
    const auto& row = report.rows[i];
    const auto& r = l.run.run;
    const std::string printed = r.published_memory_bytes ? format_bytes(Bytes(*r.published_memory_bytes)) : "-";
    if (row.skipped) {
      t.add({r.id, fmt::format("{}", r.gpus), format_duration(Seconds(r.measured_iteration_s)), "-", "-", printed, "-", "-"});
      t.add_note("not simulated: " + *row.skipped);
    } else {
      t.add({r.id, fmt::format("{}", r.gpus), format_duration(Seconds(r.measured_iteration_s)), format_duration(Seconds(row.predicted_s)),
             signed_percent(row.error), printed, format_bytes(Bytes(row.predicted_memory_bytes)),
             row.memory_error ? signed_percent(*row.memory_error) : "-"});
      t.add_note(row.plan + (row.fits ? "" : " · does not fit"));
    }
    t.add_note(model_line(r));
    t.add_note(fmt::format("{}: {} step lines, measured = median of the last {}; {} memory lines (max allocated)", l.log.file.string(),
                           l.log.steps.size(), l.run.steps_used, l.log.memory.size()));
    for (const auto& n : l.run.notes) t.add_note("approximate: " + n);
  }
  return t.render() +
         "\nThe plan, model and precision are the log's argument dump; fields it cannot give (the fabric, the GPU) are\n"
         "--gpu, --gpus-per-node and --nic-gbps, and the rest of validate's fill policy (parasim validate --help).\n";
}

nlohmann::json json_report(const std::vector<ReadLog>& logs, const sim::ValidationReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto& l = logs[i];
    const auto& row = report.rows[i];
    const auto& r = l.run.run;
    nlohmann::json j = {{"log", l.log.file.string()},
                        {"id", r.id},
                        {"gpus", r.gpus},
                        {"model", model_line(r)},
                        {"step_lines", l.log.steps.size()},
                        {"steps_used", l.run.steps_used},
                        {"measured_iteration_s", r.measured_iteration_s},
                        {"notes", l.run.notes}};
    j["peak_allocated_bytes"] = r.published_memory_bytes ? nlohmann::json(*r.published_memory_bytes) : nlohmann::json(nullptr);
    if (row.skipped) {
      j["skipped"] = *row.skipped;
    } else {
      j["plan"] = row.plan;
      j["predicted_iteration_s"] = row.predicted_s;
      j["error"] = row.error;
      j["fits"] = row.fits;
      j["predicted_memory_bytes"] = row.predicted_memory_bytes;
      j["memory_error"] = row.memory_error ? nlohmann::json(*row.memory_error) : nlohmann::json(nullptr);
    }
    out.push_back(j);
  }
  return {{"logs", out}};
}

}  // namespace

int run_from_log(const FromLogOptions& o) {
  const sim::LogCluster cluster{resolve_gpu(o.gpu, o.hardware_dir), o.gpus_per_node, o.nic_gbps};
  std::vector<ReadLog> logs;
  std::vector<sim::MeasuredRun> runs;
  std::vector<std::string> file_of;
  for (const auto& f : o.logs) {
    auto log = calibrate::read_megatron_log(f);
    auto run = sim::megatron_log_run(log, cluster);
    runs.push_back(run.run);
    file_of.push_back(f);
    logs.push_back({std::move(log), std::move(run)});
  }
  sim::ValidateOptions options;
  options.hardware_dir = o.hardware_dir;
  options.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto report = sim::validate(runs, file_of, options);
  std::cout << (o.json ? json_report(logs, report).dump(2) + "\n" : text_report(logs, report));
  return 0;
}

}  // namespace parasim::cli
