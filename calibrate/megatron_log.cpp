#include "calibrate/megatron_log.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <regex>

#include "calibrate/log_failure.hpp"
#include "calibrate/steady_steps.hpp"
#include "core/error.hpp"

namespace parasim::calibrate {
namespace {

constexpr std::string_view kDumpStart = "------------------------ arguments ------------------------";
constexpr std::string_view kDumpEnd = "-------------------- end of arguments ---------------------";
// megatron/core/optimizer/__init__.py, where neither FusedAdam can be imported.
constexpr std::string_view kTorchOptimizer = "Falling back to Torch optimizers";

std::optional<double> number_after(const std::string& line, std::string_view label) {
  const auto at = line.find(label);
  if (at == std::string::npos) return std::nullopt;
  std::size_t from = at + label.size();
  while (from < line.size() && line[from] == ' ') ++from;
  double v = 0;
  const auto [end, ec] = std::from_chars(line.data() + from, line.data() + line.size(), v);
  if (ec != std::errc() || end == line.data() + from) return std::nullopt;
  return v;
}

// "  num_layers ...................................... 12": the name, a run of dots, the value.
// Megatron-DeepSpeed marks each value "...........default" or "...........updated" after it.
bool read_argument(const std::string& line, int number, MegatronLog& log) {
  static const std::regex argument(R"(^\s*(?:\S+:\s+)?([A-Za-z_][A-Za-z0-9_]*) \.+ (.*?)(?:\.{3,}(?:default|updated))?\s*$)");
  std::smatch m;
  if (!std::regex_search(line, m, argument)) return false;
  log.arguments[m[1].str()] = {m[2].str(), number};
  return true;
}

void read_step(const std::string& line, int number, MegatronLog& log) {
  const auto seconds = number_after(line, "elapsed time per iteration (ms):");
  if (!seconds) return;
  static const std::regex iteration(R"(iteration\s+(\d+)\s*/)");
  std::smatch m;
  const long it = std::regex_search(line, m, iteration) ? std::stol(m[1].str()) : static_cast<long>(log.steps.size()) + 1;
  log.steps.push_back({it, *seconds / 1e3, number});
}

void read_memory(const std::string& line, int number, MegatronLog& log) {
  if (line.find("memory (MB)") == std::string::npos) return;
  const auto allocated = number_after(line, "| allocated:"), max_allocated = number_after(line, "max allocated:");
  const auto reserved = number_after(line, "| reserved:"), max_reserved = number_after(line, "max reserved:");
  if (!allocated || !max_allocated) return;
  log.memory.push_back({*allocated, *max_allocated, reserved.value_or(0), max_reserved.value_or(0), number});
}

}  // namespace

std::optional<std::string> MegatronLog::argument(const std::string& name) const {
  const auto it = arguments.find(name);
  if (it == arguments.end() || it->second.value == "None") return std::nullopt;
  return it->second.value;
}

namespace {

void read_one(const std::filesystem::path& file, MegatronLog& log, bool& dump_seen, int& last_line) {
  std::ifstream in(file);
  if (!in) throw InputError({file.string(), 0, 0}, {}, "cannot read the log");
  std::string line;
  int number = 0;
  bool in_dump = false;
  while (std::getline(in, line)) {
    ++number;
    if (line.find(kDumpStart) != std::string::npos) {
      in_dump = dump_seen = true;
      continue;
    }
    if (line.find(kDumpEnd) != std::string::npos) {
      in_dump = false;
      continue;
    }
    if (in_dump) {
      read_argument(line, number, log);
      continue;
    }
    read_step(line, number, log);
    read_memory(line, number, log);
    if (line.find(kTorchOptimizer) != std::string::npos) log.torch_optimizer = true;
    if (!log.failure && is_failure_line(line)) log.failure = LoggedFailure{file, number, line.substr(0, 200)};
  }
  last_line = number;
}

}  // namespace

MegatronLog read_megatron_log(const std::filesystem::path& file) { return read_megatron_logs({file}); }

MegatronLog read_megatron_logs(const std::vector<std::filesystem::path>& files) {
  if (files.empty()) throw InputError({"", 0, 0}, {}, "no log to read");
  MegatronLog log;
  log.file = files.front();
  bool dump_seen = false;
  int last_line = 0;
  for (const auto& file : files) read_one(file, log, dump_seen, last_line);
  const std::string where = log.failure ? fmt::format("{}:{}: {}", log.failure->file.string(), log.failure->line, log.failure->text) : "";
  if (!dump_seen || log.arguments.empty()) {
    throw InputError({files.front().string(), 1, 1}, {},
                     fmt::format("no argument dump ('{}'): Megatron-LM prints one on rank 0 at start-up; {}", kDumpStart,
                                 log.failure ? "the run failed before it, at " + where : std::string("keep the log from its first line")));
  }
  if (log.steps.empty()) {
    throw InputError({files.back().string(), last_line, 1}, {},
                     "no step line ('elapsed time per iteration (ms): …') in the log: " +
                         (log.failure ? "the run failed before its first --log-interval, at " + where : std::string("did the run reach its first --log-interval?")));
  }
  // Node logs come in any order; a step is an interval's mean, printed once, by the last rank.
  std::stable_sort(log.steps.begin(), log.steps.end(), [](const LoggedStep& a, const LoggedStep& b) { return a.iteration < b.iteration; });
  return log;
}

double steady_step_seconds(const MegatronLog& log, int* used) {
  std::vector<double> times;
  for (const auto& step : log.steps) times.push_back(step.seconds);
  return steady_median(times, used);
}

std::optional<double> peak_allocated_mib(const MegatronLog& log) {
  if (log.memory.empty()) return std::nullopt;
  double peak = 0;
  for (const auto& m : log.memory) peak = std::max(peak, m.max_allocated);
  return peak;
}

}  // namespace parasim::calibrate
