#include "calibrate/nemo_log.hpp"

#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <yaml-cpp/yaml.h>

#include "calibrate/log_failure.hpp"
#include "core/error.hpp"

namespace parasim::calibrate {
namespace {

// One redraw of a line: a physical line split at its carriage returns, after the launcher's prefix.
struct Segment {
  std::string text;
  int line = 0;
};

std::string without_rank_prefix(const std::string& s) {
  static const std::regex prefix(R"(^\d+: )");
  return std::regex_replace(s, prefix, "", std::regex_constants::format_first_only);
}

std::vector<Segment> read_segments(std::ifstream& in) {
  std::vector<Segment> out;
  std::string physical;
  int number = 0;
  while (std::getline(in, physical)) {
    ++number;
    std::size_t from = 0;
    while (from <= physical.size()) {
      const auto cr = physical.find('\r', from);
      const auto piece = physical.substr(from, cr == std::string::npos ? std::string::npos : cr - from);
      if (!piece.empty() || cr == std::string::npos) out.push_back({without_rank_prefix(piece), number});
      if (cr == std::string::npos) break;
      from = cr + 1;
    }
  }
  return out;
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t") == std::string::npos; }
std::size_t indent(const std::string& s) { return s.find_first_not_of(' '); }

void flatten(const YAML::Node& node, const std::string& path, const std::vector<int>& lines, std::map<std::string, LoggedValue>& out) {
  const auto line_of = [&](const YAML::Node& n) {
    const auto at = static_cast<std::size_t>(std::max(0, n.Mark().line));
    return at < lines.size() ? lines[at] : lines.back();
  };
  if (node.IsMap()) {
    for (const auto& kv : node) flatten(kv.second, path.empty() ? kv.first.Scalar() : path + "." + kv.first.Scalar(), lines, out);
  } else if (node.IsScalar()) {
    out[path] = {node.Scalar(), line_of(node)};
  } else if (node.IsNull()) {
    out[path] = {"null", line_of(node)};
  }
}

// The YAML after "Experiment configuration": NeMo's formatter indents a message's continuation lines
// (then the block is the lines at that indent or deeper), a bare print does not (then it runs to the
// next log record).
std::size_t read_config(const std::vector<Segment>& seg, std::size_t marker, NemoLog& log) {
  std::size_t i = marker + 1;
  while (i < seg.size() && blank(seg[i].text)) ++i;
  if (i < seg.size() && seg[i].text.rfind("[NeMo", 0) == 0) ++i;  // the record that carries the YAML
  std::vector<std::string> text;
  std::vector<int> lines;
  std::size_t base = std::string::npos;
  static const std::regex key(R"(^[\w.-]+:(\s|$))");
  for (; i < seg.size(); ++i) {
    const auto& s = seg[i].text;
    if (!blank(s)) {
      if (base == std::string::npos) base = indent(s);
      const bool inside = base > 0 ? indent(s) >= base : s[0] != '[' && (s[0] == ' ' || s[0] == '-' || std::regex_search(s, key));
      if (!inside) break;
    }
    text.push_back(blank(s) || base == std::string::npos ? std::string() : s.substr(std::min(base, s.size())));
    lines.push_back(seg[i].line);
  }
  if (lines.empty()) throw InputError({log.file.string(), seg[marker].line, 1}, {}, "the experiment configuration is empty");
  std::string yaml;
  for (const auto& t : text) yaml += t + "\n";
  try {
    const YAML::Node root = YAML::Load(yaml);
    if (!root.IsMap()) throw InputError({log.file.string(), lines.front(), 1}, {}, "the experiment configuration is not a YAML mapping");
    flatten(root, "", lines, log.config);
  } catch (const YAML::Exception& e) {
    const auto at = static_cast<std::size_t>(std::max(0, e.mark.line));
    throw InputError({log.file.string(), at < lines.size() ? lines[at] : lines.back(), e.mark.column + 1}, {},
                     fmt::format("the experiment configuration is not YAML: {}", e.msg));
  }
  log.config_line = lines.front();
  return i;
}

std::optional<double> number_at(const std::string& s, const std::regex& pattern) {
  std::smatch m;
  if (!std::regex_search(s, m, pattern)) return std::nullopt;
  const std::string t = m[1].str();
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A redraw that prints the step timing; a redraw of the step before it replaces it.
void read_step(const Segment& s, NemoLog& log) {
  static const std::regex timing(R"(train_step_timing in s\s*[=:]\s*([0-9][0-9.eE+-]*))");
  static const std::regex global_step(R"(global_step\s*[=:]\s*([0-9][0-9.]*))");
  static const std::regex iteration(R"(iteration\s+(\d+)\s*/)");
  static const std::regex bar(R"(\|\s*(\d+)/\d+\s*\[)");
  const auto seconds = number_at(s.text, timing);
  if (!seconds || *seconds <= 0) return;
  auto step = number_at(s.text, global_step);
  if (!step) step = number_at(s.text, iteration);
  if (!step) step = number_at(s.text, bar);
  if (step && (*step < 0 || *step > 1e15)) throw InputError({log.file.string(), s.line, 1}, "global_step", fmt::format("{} is not a step number", *step));
  const long n = step ? static_cast<long>(*step) : static_cast<long>(log.steps.size());
  if (step && !log.steps.empty() && log.steps.back().step == n) log.steps.pop_back();
  log.steps.push_back({n, *seconds, s.line});
}

}  // namespace

std::optional<std::string> NemoLog::value(const std::string& path) const {
  const auto it = config.find(path);
  if (it == config.end() || it->second.value == "null" || it->second.value == "~" || it->second.value.empty()) return std::nullopt;
  return it->second.value;
}

bool looks_like_nemo_log(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("------------------------ arguments ------------------------") != std::string::npos) return false;
    if (line.find("Experiment configuration") != std::string::npos || line.find("train_step_timing in s") != std::string::npos) return true;
  }
  return false;
}

NemoLog read_nemo_log(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError({file.string(), 0, 0}, {}, "cannot read the log");
  NemoLog log;
  log.file = file;
  const auto seg = read_segments(in);
  static const std::regex padded(R"(Padded vocab_size:\s*(\d+))");
  std::string failure;
  int failed_at = 0;
  for (std::size_t i = 0; i < seg.size(); ++i) {
    const auto& s = seg[i];
    if (log.config.empty() && s.text.find("Experiment configuration") != std::string::npos) {
      i = read_config(seg, i, log) - 1;
      continue;
    }
    std::smatch m;
    if (std::regex_search(s.text, m, padded)) log.padded_vocab = LoggedValue{m[1].str(), s.line};
    read_step(s, log);
    if (failed_at == 0 && is_failure_line(s.text)) {
      failed_at = s.line;
      failure = s.text.substr(0, 200);
    }
  }
  const int last = seg.empty() ? 1 : seg.back().line;
  if (log.config.empty()) {
    throw InputError({file.string(), 1, 1}, {},
                     "no experiment configuration ('************** Experiment configuration ***********' and the YAML after it): "
                     "NeMo's training scripts print it before training; keep the log from its first line");
  }
  if (log.steps.empty()) {
    const std::string why = failed_at > 0 ? fmt::format("the run failed before its first step, at {}:{}: {}", file.string(), failed_at, failure)
                                          : std::string("is exp_manager.log_step_timing off, or did the run stop before its first step?");
    throw InputError({file.string(), last, 1}, {}, "no step timing ('train_step_timing in s') in the log: " + why);
  }
  return log;
}

}  // namespace parasim::calibrate
