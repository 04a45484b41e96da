#include "calibrate/torchtitan_log.hpp"

#include <charconv>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <simdjson.h>

#include "calibrate/log_failure.hpp"
#include "calibrate/steady_steps.hpp"
#include "core/error.hpp"

namespace parasim::calibrate {
namespace {

// "5,762" and "5762" alike: torchtitan prints tps with thousands separators.
std::optional<double> number_text(std::string text) {
  std::erase(text, ',');
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return v;
}

constexpr double kMaxCount = 1 << 30;  // sizes and batches: far past any cluster parasim builds

// A count the log printed, checked: a number that does not fit is an error at its line.
int count(const std::string& text, const std::filesystem::path& file, int line, const char* what) {
  const auto v = number_text(text);
  if (!v || *v < 0 || *v > kMaxCount || *v != static_cast<double>(static_cast<long long>(*v))) {
    throw InputError({file.string(), line, 1}, what, fmt::format("'{}' is not a count between 0 and {}", text, kMaxCount));
  }
  return static_cast<int>(*v);
}

std::optional<int> integer_after(const std::string& line, const std::regex& pattern, int number, const TorchtitanLog& log, const char* what) {
  std::smatch m;
  if (!std::regex_search(line, m, pattern)) return std::nullopt;
  return count(m[1].str(), log.file, number, what);
}

// "Building llama3 8B with TransformerModelArgs(dim=4096, n_layers=32, ...)": the fields of the
// dataclass repr, each up to the next top-level comma.
bool read_model_args(const std::string& line, int number, TorchtitanLog& log) {
  static const std::regex building(R"(Building (.+?) with \w*Args\((.*)\)\s*$)");
  std::smatch m;
  if (!std::regex_search(line, m, building)) return false;
  log.model_name = m[1].str();
  const std::string fields = m[2].str();
  int depth = 0;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= fields.size(); ++i) {
    const char c = i < fields.size() ? fields[i] : ',';
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c != ',' || depth > 0) continue;
    const std::string field = fields.substr(from, i - from);
    from = i + 1;
    const auto eq = field.find('=');
    if (eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(' '));
      s.erase(s.find_last_not_of(' ') + 1);
      return s;
    };
    log.model_args[trim(field.substr(0, eq))] = {trim(field.substr(eq + 1)), number};
  }
  return true;
}

// A JSON value as the dataclass repr would print it: the reader compares against either form.
std::string python_text(simdjson::dom::element v) {
  switch (v.type()) {
    case simdjson::dom::element_type::INT64: return std::to_string(int64_t(v));
    case simdjson::dom::element_type::UINT64: return std::to_string(uint64_t(v));
    case simdjson::dom::element_type::DOUBLE: return fmt::format("{}", double(v));
    case simdjson::dom::element_type::BOOL: return bool(v) ? "True" : "False";
    case simdjson::dom::element_type::NULL_VALUE: return "None";
    case simdjson::dom::element_type::STRING: return "'" + std::string(std::string_view(v)) + "'";
    default: return {};
  }
}

// torchtitan since 2025 prints the model's arguments as indented JSON after "Building qwen3 1.7B
// with {" (the flavor and "with" run together in some releases), one field a line; a nested object
// (moe_args) gives its fields as "moe_args.top_k".
class ModelArgsBlock {
 public:
  bool start(const std::string& line, int number, TorchtitanLog& log) {
    static const std::regex building(R"(Building (.+?)\s*with \{\s*$)");
    std::smatch m;
    if (!std::regex_search(line, m, building)) return false;
    log.model_name = m[1].str();
    text_ = "{";
    depth_ = 1;
    first_line_ = number;
    lines_.clear();
    return true;
  }
  bool open() const { return depth_ > 0; }
  int first_line() const { return first_line_; }
  // One more line of the block; at its closing brace the fields go into the log.
  void add(std::string line, int number, TorchtitanLog& log) {
    static const std::regex prefix(R"(^\[rank\d+\]:)");
    line = std::regex_replace(line, prefix, "");
    lines_.emplace_back(line, number);
    for (const char c : line) depth_ += c == '{' ? 1 : c == '}' ? -1 : 0;
    text_ += line + "\n";
    if (depth_ <= 0) finish(log);
  }

 private:
  void finish(TorchtitanLog& log) {
    depth_ = 0;
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    if (parser.parse(simdjson::padded_string(text_)).get(doc) || doc.type() != simdjson::dom::element_type::OBJECT) {
      throw InputError({log.file.string(), first_line_, 1}, "model arguments", "the JSON after 'Building ... with {' does not parse");
    }
    for (auto [key, value] : simdjson::dom::object(doc)) {
      if (value.type() == simdjson::dom::element_type::OBJECT) {
        for (auto [inner, v] : simdjson::dom::object(value)) put(std::string(key) + "." + std::string(inner), v, log);
      } else {
        put(std::string(key), value, log);
      }
    }
  }
  void put(const std::string& key, simdjson::dom::element value, TorchtitanLog& log) {
    const auto text = python_text(value);
    if (text.empty()) return;
    const auto leaf = key.substr(key.rfind('.') + 1);
    int at = first_line_;
    for (const auto& [l, n] : lines_) {
      if (l.find("\"" + leaf + "\":") != std::string::npos) {
        at = n;
        break;
      }
    }
    log.model_args[key] = {text, at};
  }
  std::string text_;
  int depth_ = 0, first_line_ = 0;
  std::vector<std::pair<std::string, int>> lines_;
};

// Since 2025: "Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1, etp=1"
bool read_mesh_degrees(const std::string& line, int number, TorchtitanLog& log) {
  const auto at = line.find("device mesh with parallelism:");
  if (at == std::string::npos) return false;
  static const std::regex degree(R"((\w+)=(\d+))");
  const std::string degrees = line.substr(at);
  log.mesh.clear();
  for (std::sregex_iterator it(degrees.begin(), degrees.end(), degree), end; it != end; ++it) {
    log.mesh.emplace_back((*it)[1].str(), count((*it)[2].str(), log.file, number, "mesh"));
    if (log.mesh.back().second < 1) throw InputError({log.file.string(), number, 1}, "mesh", fmt::format("the degree {} is 0", log.mesh.back().first));
  }
  log.mesh_line = number;
  return true;
}

// "Building 2-D device mesh with ['dp_shard', 'tp'], [32, 8]"
bool read_mesh(const std::string& line, int number, TorchtitanLog& log) {
  static const std::regex mesh(R"(device mesh with \[([^\]]*)\],\s*\[([^\]]*)\])");
  std::smatch m;
  if (!std::regex_search(line, m, mesh)) return false;
  static const std::regex name(R"('([^']*)')"), size(R"((\d+))");
  const std::string names = m[1].str(), sizes = m[2].str();
  std::vector<std::string> n;
  for (std::sregex_iterator it(names.begin(), names.end(), name), end; it != end; ++it) n.push_back((*it)[1].str());
  std::vector<int> s;
  for (std::sregex_iterator it(sizes.begin(), sizes.end(), size), end; it != end; ++it) {
    s.push_back(count((*it)[1].str(), log.file, number, "mesh"));
    if (s.back() < 1) throw InputError({log.file.string(), number, 1}, "mesh", "a dimension of size 0");
  }
  if (n.size() != s.size()) return false;
  log.mesh.clear();
  for (std::size_t i = 0; i < n.size(); ++i) log.mesh.emplace_back(n[i], s[i]);
  log.mesh_line = number;
  return true;
}

// "Training starts at step 1, with local batch size 2, global batch size 16, [gradient accumulation
// steps 1, ]sequence length 8192, total steps 1000 (warmup 200)" (December 2024), or since 2025
// "Trainer is initialized with local batch size 2, global batch size 16, gradient accumulation steps 1,
// sequence length 8192, total steps 30 (warmup 2)." followed by a bare "Training starts at step 1.".
bool read_training_start(const std::string& line, int number, TorchtitanLog& log) {
  if (line.find("Training starts at step") == std::string::npos && line.find("Trainer is initialized with") == std::string::npos) return false;
  static const std::regex local(R"(local batch size (\d+))"), global(R"(global batch size (\d+))");
  static const std::regex accumulation(R"(gradient accumulation steps (\d+))"), sequence(R"(sequence length (\d+))");
  const auto keep = [&](std::optional<int>& into, const std::regex& pattern, const char* what) {
    if (const auto v = integer_after(line, pattern, number, log, what)) into = v;
  };
  keep(log.local_batch, local, "local batch size");
  keep(log.global_batch, global, "global batch size");
  keep(log.gradient_accumulation, accumulation, "gradient accumulation steps");
  keep(log.seq_len, sequence, "sequence length");
  if (line.find("batch size") != std::string::npos) log.batch_line = number;
  return true;
}

// "step: 10  loss:  7.8  memory: 76.54GiB(80.51%)  tps: 5,762  tflops: 333.60  mfu: 33.73%"
void read_step(const std::string& line, int number, TorchtitanLog& log) {
  static const std::regex step(R"(step:\s*(\d+)\s)"), rate(R"((?:tps|wps):\s*([\d,\.]+))"), memory(R"(memory:\s*([\d\.]+)\s*GiB)");
  std::smatch s, r;
  if (!std::regex_search(line, s, step) || !std::regex_search(line, r, rate)) return;
  const auto tps = number_text(r[1].str());
  if (!tps || *tps <= 0) return;
  TorchtitanStep out{count(s[1].str(), log.file, number, "step"), *tps, std::nullopt, number};
  std::smatch m;
  if (std::regex_search(line, m, memory)) out.memory_gib = number_text(m[1].str());
  log.steps.push_back(out);
}

void read_choices(const std::string& line, TorchtitanLog& log) {
  if (line.find("activation checkpointing to the model") != std::string::npos) {
    log.activation_checkpoint = line.find("selective") != std::string::npos ? "selective" : line.find("full") != std::string::npos ? "full" : "none";
  }
  if (line.find("with torch.compile") != std::string::npos || line.find("Compiling") != std::string::npos) log.compiled = true;
  // torchao's swap ("Swapped to Float8Linear layers ...") or torchtitan's "Float8 training active".
  if (line.find("Float8Linear") != std::string::npos || line.find("Float8 training") != std::string::npos) log.float8 = true;
}

}  // namespace

std::optional<std::string> TorchtitanLog::model_arg(const std::string& name) const {
  const auto it = model_args.find(name);
  if (it == model_args.end() || it->second.value == "None") return std::nullopt;
  return it->second.value;
}

double torchtitan_world_size(const TorchtitanLog& log) {
  double world = 1;
  for (const auto& [name, size] : log.mesh) {
    if (name != "dp_cp" && name != "ep" && name != "etp") world *= size;
  }
  return world;
}

double torchtitan_step_seconds(const TorchtitanLog& log, int* used) {
  const double tokens = static_cast<double>(log.global_batch.value_or(0)) * log.seq_len.value_or(0), world = torchtitan_world_size(log);
  std::vector<double> seconds;
  for (const auto& s : log.steps) seconds.push_back(tokens / (s.tokens_per_s_per_gpu * world));
  return steady_median(seconds, used);
}

std::optional<double> torchtitan_peak_reserved_gib(const TorchtitanLog& log) {
  std::optional<double> peak;
  for (const auto& s : log.steps) {
    if (s.memory_gib && (!peak || *s.memory_gib > *peak)) peak = s.memory_gib;
  }
  return peak;
}

bool looks_like_torchtitan_log(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("------------------------ arguments ------------------------") != std::string::npos) return false;
    if (line.find("device mesh with") != std::string::npos || line.find("Training starts at step") != std::string::npos ||
        line.find("Trainer is initialized with") != std::string::npos) {
      return true;
    }
  }
  return false;
}

TorchtitanLog read_torchtitan_log(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw InputError({file.string(), 0, 0}, {}, "cannot read the log");
  TorchtitanLog log;
  log.file = file;
  std::string line, failure;
  int number = 0, failed_at = 0;
  static const std::regex colour("\x1b\\[[0-9;]*m");  // torchtitan colours its step lines
  ModelArgsBlock block;
  while (std::getline(in, line)) {
    ++number;
    if (line.find('\x1b') != std::string::npos) line = std::regex_replace(line, colour, "");
    if (block.open()) {
      block.add(line, number, log);
      continue;
    }
    if (block.start(line, number, log) || read_model_args(line, number, log) || read_mesh_degrees(line, number, log) || read_mesh(line, number, log) ||
        read_training_start(line, number, log)) {
      continue;
    }
    read_choices(line, log);
    read_step(line, number, log);
    if (failed_at == 0 && is_failure_line(line)) {
      failed_at = number;
      failure = line.substr(0, 200);
    }
  }
  if (block.open()) {
    throw InputError({file.string(), block.first_line(), 1}, "model arguments", "the JSON after 'Building ... with {' never closes: the log is cut short");
  }
  // A run that died before its first step may have died before the mesh or the batch line too: its
  // failure is what to say.
  if (log.steps.empty()) {
    const std::string why = failed_at > 0 ? fmt::format("the run failed before its first --metrics.log_freq, at {}:{}: {}", file.string(), failed_at, failure)
                                          : std::string("did the run reach its first --metrics.log_freq?");
    throw InputError({file.string(), number, 1}, {}, "no step line ('step: N  loss: ...  tps: ...') in the log: " + why);
  }
  const std::string keep = "keep the log from its first line";
  if (log.model_args.empty()) {
    throw InputError({file.string(), 1, 1}, {}, "no model arguments ('Building <model> with ...Args(...)' or 'Building <model> with {'): torchtitan prints them as it "
                                                "builds the model; " + keep);
  }
  if (log.mesh_line == 0) throw InputError({file.string(), 1, 1}, {}, "no device mesh ('Building device mesh with parallelism: ...' or 'Building N-D device mesh with [...], [...]'); " + keep);
  if (!log.global_batch || !log.seq_len) {
    throw InputError({file.string(), log.batch_line > 0 ? log.batch_line : 1, 1}, {},
                     "no global batch and sequence length ('Trainer is initialized with local batch size ..., global batch size ..., sequence "
                     "length ...' or, before 2025, 'Training starts at step 1, with local batch size ..., global batch size ..., sequence "
                     "length ...'): torchtitan prints them before the first step; " + keep);
  }
  if (*log.global_batch < 1 || *log.seq_len < 1) {
    throw InputError({file.string(), log.batch_line, 1}, "global batch size", "the global batch and the sequence length must be at least 1");
  }
  return log;
}

}  // namespace parasim::calibrate
