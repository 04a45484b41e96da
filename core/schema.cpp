#include "core/schema.hpp"

#include "core/bundled_files.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <functional>
#include <optional>
#include <cmath>
#include <fmt/format.h>
#include <set>

#include "core/bundled_files.hpp"
#include "core/suggest.hpp"

namespace parasim::yaml {
namespace {

std::string_view type_name(FieldType t) {
  switch (t) {
    case FieldType::integer: return "integer";
    case FieldType::number: return "number";
    case FieldType::boolean: return "boolean";
    case FieldType::string: return "string";
    case FieldType::choice: return "choice";
    case FieldType::bytes: return "size";
    case FieldType::bandwidth: return "bandwidth";
    case FieldType::flop_rate: return "FLOP rate";
    case FieldType::duration: return "duration";
    case FieldType::integer_list: return "list of integers";
    case FieldType::string_list: return "list of names";
    case FieldType::section_list: return "list of sections";
    case FieldType::node: return "section or file";
    case FieldType::section: return "section";
    case FieldType::reference: return "section or file";
  }
  return "";
}

std::optional<Dimension> dimension_of(FieldType t) {
  switch (t) {
    case FieldType::bytes: return Dimension::bytes;
    case FieldType::bandwidth: return Dimension::bandwidth;
    case FieldType::flop_rate: return Dimension::flop_rate;
    case FieldType::duration: return Dimension::duration;
    default: return std::nullopt;
  }
}

std::vector<std::string> names_of(std::span<const std::string_view> views) {
  return {views.begin(), views.end()};
}

std::vector<std::string> field_names(const Schema& s) {
  std::vector<std::string> out;
  for (const auto& f : s.fields) out.emplace_back(f.name);
  return out;
}

std::string range_text(const Field& f, const std::function<std::string(double)>& show) {
  const bool has_min = std::isfinite(f.min);
  const bool has_max = std::isfinite(f.max);
  if (has_min && has_max) return fmt::format("between {} and {}", show(f.min), show(f.max));
  if (has_min) return fmt::format("{} {}", f.min_exclusive ? ">" : ">=", show(f.min));
  if (has_max) return fmt::format("<= {}", show(f.max));
  return {};
}

std::string show_value(FieldType t, double v) {
  switch (t) {
    case FieldType::bytes: return format_bytes(Bytes(v));
    case FieldType::bandwidth: return format_bandwidth(BytesPerSecond(v));
    case FieldType::flop_rate: return format_flop_rate(FlopsPerSecond(v));
    case FieldType::duration: return format_duration(Seconds(v));
    default: return format_number(v, 6);
  }
}

bool in_range(const Field& f, double v) {
  if (f.min_exclusive ? !(v > f.min) : !(v >= f.min)) return false;
  return v <= f.max;
}

// A bare name (no folder, no extension) in a reference field with bundled files: the bundled file
// of that name, or the only one whose name begins with it and a dash (`h200` -> h200-sxm-141gb.yaml;
// `h20`, another GPU, matches nothing).
std::optional<std::filesystem::path> bundled_file(const Field& f, const Node& v) {
  const std::string name = v.raw().as<std::string>();
  if (f.bundled.empty() || name.empty() || name.find_first_of("/.\\") != std::string::npos) return std::nullopt;
  const auto found = find_bundled_file(std::filesystem::path(PARASIM_SOURCE_DIR) / f.bundled, name);
  if (found.file) return found.file;
  if (found.matches.size() > 1) v.fail(fmt::format("'{}' names several bundled files: {}", name, join_names(found.matches)));
  v.fail(fmt::format("'{}' is neither a file nor a bundled name{}; bundled: {}", name, did_you_mean(name, found.names), join_names(found.names)));
}

// Integer keys are counts the model keeps in 32 bits: a value past that is out of range, never wrapped.
constexpr std::int64_t kIntegerMax = std::numeric_limits<std::int32_t>::max();

// Reads an integer key's text, or fails at `at`: not an integer, or outside the field's range and 32 bits.
std::int64_t read_integer(const Field& f, const Node& at, const std::string& t) {
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  const bool digits = end == t.data() + t.size();
  if (ec == std::errc::result_out_of_range && digits) at.fail(fmt::format("{} is out of range: must be <= {}", t, kIntegerMax));
  if (ec != std::errc() || !digits) at.fail(fmt::format("'{}' is not an integer", t));
  if (!in_range(f, static_cast<double>(x))) {
    at.fail(fmt::format("{} is out of range: must be {}", x, range_text(f, [](double b) { return format_number(b, 10); })));
  }
  if (x > kIntegerMax) at.fail(fmt::format("{} is out of range: must be <= {}", x, kIntegerMax));
  return x;
}

bool is_scalar(const YAML::Node& n) { return n.IsScalar(); }

std::string with_article(const Field& f) {
  const std::string t = describe_type(f);
  if (f.type == FieldType::choice) return t;
  return (std::string("aeiou").find(t.front()) != std::string::npos ? "an " : "a ") + t;
}

}  // namespace

std::string describe_type(const Field& f) {
  if (f.type == FieldType::choice) return "one of: " + join_names(names_of(f.choices));
  return std::string(type_name(f.type));
}

std::string schema_markdown(const Schema& schema, int heading_level) {
  std::string out = fmt::format("{} `{}`\n\n{}\n\n", std::string(static_cast<std::size_t>(heading_level), '#'),
                                schema.name, schema.description);
  out += "| key | type | required / default | range | description |\n|---|---|---|---|---|\n";
  std::vector<const Schema*> nested;
  for (const auto& f : schema.fields) {
    const std::string req = f.required ? std::string("required")
                           : f.default_text.empty() ? std::string("optional")
                                                    : fmt::format("`{}`", f.default_text);
    const std::string range = range_text(f, [&](double v) { return show_value(f.type, v); });
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", f.name, describe_type(f), req, range, f.description);
    if (f.schema) nested.push_back(f.schema);
  }
  out += "\n";
  std::set<const Schema*> seen;
  for (const auto* s : nested) {
    if (seen.insert(s).second) out += schema_markdown(*s, heading_level + 1);
  }
  return out;
}

Record::Record(const Node& node, const Schema& schema) : node_(node), schema_(&schema) {
  if (!node.raw().IsDefined() || node.raw().IsNull()) node.fail(fmt::format("empty; expected a mapping of {} keys", schema.name));
  if (!node.raw().IsMap()) node.fail(fmt::format("expected a mapping of {} keys, found {}", schema.name,
                                                  node.raw().IsSequence() ? "a list" : "a single value"));
  const std::vector<std::string> known = field_names(schema);
  Overrides* overrides = node.overrides();

  // Keys in file order: unknown or duplicate keys fail where they are written.
  std::map<std::string, Node, std::less<>> given;
  for (auto it = node.raw().begin(); it != node.raw().end(); ++it) {
    const Node key = node.child(it->first, "");
    if (!it->first.IsScalar()) key.fail("keys must be plain names");
    const std::string name = it->first.as<std::string>();
    const Node key_node = node.child(it->first, name);
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      key_node.fail(fmt::format("unknown key{}; valid keys: {}", did_you_mean(name, known), join_names(known)));
    }
    if (given.count(name)) key_node.fail("duplicate key");
    given.emplace(name, node.child(it->second, name));
  }

  for (const auto& f : schema.fields) {
    const std::string path = node.child_path(f.name);
    if (overrides) overrides->note_known_path(path);
    std::optional<Node> value;
    bool defaulted = false;
    if (auto o = overrides ? overrides->take(path) : std::nullopt) {
      value = Node(*o, node.with_raw(*o).source(), path, overrides);
    } else if (auto g = given.find(f.name); g != given.end() && !g->second.raw().IsNull()) {
      value = g->second;
    } else if (!f.default_text.empty()) {
      value = Node(YAML::Load(std::string(f.default_text)), node.source(), path, overrides);
      defaulted = true;
    }
    if (!value) {
      if (f.required) {
        if (auto g = given.find(f.name); g != given.end()) g->second.fail("a value is required");
        node.fail(fmt::format("missing required key '{}' ({})", f.name, f.description));
      }
      continue;
    }
    entries_.emplace(std::string(f.name), Entry{*value, read(f, *value), defaulted});
  }
}

namespace {

// A scalar's text; a mapping or a list where a scalar belongs fails at it.
std::string scalar_text(const Field& f, const Node& v) {
  const YAML::Node& raw = v.raw();
  if (!is_scalar(raw)) v.fail(fmt::format("expected {}, found {}", with_article(f), raw.IsMap() ? "a mapping" : raw.IsSequence() ? "a list" : "nothing"));
  return raw.as<std::string>();
}

void check_range(const Field& f, const Node& v, double x) {
  if (!in_range(f, x)) {
    v.fail(fmt::format("{} is out of range: must be {}", show_value(f.type, x), range_text(f, [&](double b) { return show_value(f.type, b); })));
  }
}

double read_number(const Field& f, const Node& v) {
  const std::string t = scalar_text(f, v);
  double x = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  if (ec == std::errc::result_out_of_range && end == t.data() + t.size()) v.fail(fmt::format("{} is out of range for a number", t));
  if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(x)) v.fail(fmt::format("'{}' is not a number", t));
  check_range(f, v, x);
  return x;
}

bool read_boolean(const Field& f, const Node& v) {
  const std::string t = scalar_text(f, v);
  if (t == "true" || t == "True") return true;
  if (t == "false" || t == "False") return false;
  v.fail(fmt::format("'{}' is not a boolean (true or false)", t));
}

std::string read_choice(const Field& f, const Node& v) {
  const std::string t = scalar_text(f, v);
  for (const auto& c : f.choices) {
    if (c == t) return t;
  }
  const auto names = names_of(f.choices);
  v.fail(fmt::format("'{}' is not valid{}; valid values: {}", t, did_you_mean(t, names), join_names(names)));
}

// A size, bandwidth, rate or duration with its unit, in the base unit of its dimension.
double read_quantity(const Field& f, const Node& v) {
  const std::string t = scalar_text(f, v);
  double x = 0;
  try {
    x = parse_quantity(t, *dimension_of(f.type));
  } catch (const UnitError& e) {
    v.fail(e.what());
  }
  check_range(f, v, x);
  return x;
}

std::vector<std::int64_t> read_integer_list(const Field& f, const Node& v) {
  const YAML::Node& raw = v.raw();
  if (!raw.IsSequence()) v.fail("expected a list of integers, e.g. [0, 1, 2]");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const Node item = v.child(raw[i], fmt::format("{}", i));
    const std::string t = item.raw().IsScalar() ? item.raw().as<std::string>() : std::string("?");
    out.push_back(read_integer(f, item, t));
  }
  return out;
}

std::vector<std::string> read_string_list(const Node& v) {
  const YAML::Node& raw = v.raw();
  if (!raw.IsSequence()) v.fail("expected a list, e.g. [a, b]");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const Node item = v.child(raw[i], fmt::format("{}", i));
    if (!item.raw().IsScalar()) item.fail("expected a name");
    out.push_back(item.raw().as<std::string>());
  }
  return out;
}

std::shared_ptr<const std::vector<Record>> read_section_list(const Field& f, const Node& v) {
  const YAML::Node& raw = v.raw();
  if (!raw.IsSequence()) v.fail(fmt::format("expected a list of {} sections", f.schema->name));
  auto out = std::make_shared<std::vector<Record>>();
  for (std::size_t i = 0; i < raw.size(); ++i) out->emplace_back(v.child(raw[i], fmt::format("{}", i)), *f.schema);
  return out;
}

// A section written in place, or named: a bundled file by its name, or a file by its path.
std::shared_ptr<const Record> read_reference(const Field& f, const Node& v) {
  if (!v.raw().IsScalar()) return std::make_shared<const Record>(v, *f.schema);
  if (const auto file = bundled_file(f, v)) return std::make_shared<const Record>(load_file(*file, v.key_path(), v.overrides()), *f.schema);
  return std::make_shared<const Record>(load_reference(v), *f.schema);
}

}  // namespace

Record::Value Record::read(const Field& f, const Node& v) const {
  switch (f.type) {
    case FieldType::integer: return read_integer(f, v, scalar_text(f, v));
    case FieldType::number: return read_number(f, v);
    case FieldType::boolean: return read_boolean(f, v);
    case FieldType::string: return scalar_text(f, v);
    case FieldType::choice: return read_choice(f, v);
    case FieldType::bytes:
    case FieldType::bandwidth:
    case FieldType::flop_rate:
    case FieldType::duration: return read_quantity(f, v);
    case FieldType::integer_list: return read_integer_list(f, v);
    case FieldType::string_list: return read_string_list(v);
    case FieldType::section_list: return read_section_list(f, v);
    case FieldType::node: return std::monostate{};
    case FieldType::section: return std::make_shared<const Record>(v, *f.schema);
    case FieldType::reference: return read_reference(f, v);
  }
  return std::monostate{};
}

const Field& Record::field(std::string_view name) const {
  for (const auto& f : schema_->fields) {
    if (f.name == name) return f;
  }
  throw std::logic_error(fmt::format("schema '{}' has no field '{}'", schema_->name, name));
}

const Record::Entry& Record::entry(std::string_view name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end()) {
    (void)field(name);
    throw std::logic_error(fmt::format("optional key '{}' read without has()", node_.child_path(name)));
  }
  return it->second;
}

bool Record::has(std::string_view name) const {
  (void)field(name);
  return entries_.find(name) != entries_.end();
}

bool Record::stated(std::string_view name) const {
  (void)field(name);
  const auto it = entries_.find(name);
  return it != entries_.end() && !it->second.defaulted;
}

std::int64_t Record::integer(std::string_view n) const { return std::get<std::int64_t>(entry(n).value); }
double Record::number(std::string_view n) const { return std::get<double>(entry(n).value); }
bool Record::boolean(std::string_view n) const { return std::get<bool>(entry(n).value); }
const std::string& Record::string(std::string_view n) const { return std::get<std::string>(entry(n).value); }
Bytes Record::bytes(std::string_view n) const { return Bytes(std::get<double>(entry(n).value)); }
BytesPerSecond Record::bandwidth(std::string_view n) const { return BytesPerSecond(std::get<double>(entry(n).value)); }
FlopsPerSecond Record::flop_rate(std::string_view n) const { return FlopsPerSecond(std::get<double>(entry(n).value)); }
Seconds Record::duration(std::string_view n) const { return Seconds(std::get<double>(entry(n).value)); }
const std::vector<std::int64_t>& Record::integers(std::string_view n) const {
  return std::get<std::vector<std::int64_t>>(entry(n).value);
}
const std::vector<std::string>& Record::strings(std::string_view n) const {
  return std::get<std::vector<std::string>>(entry(n).value);
}
const std::vector<Record>& Record::sections(std::string_view n) const {
  return *std::get<std::shared_ptr<const std::vector<Record>>>(entry(n).value);
}
const Record& Record::section(std::string_view n) const {
  return *std::get<std::shared_ptr<const Record>>(entry(n).value);
}

SourceLocation Record::location(std::string_view name) const {
  const auto it = entries_.find(name);
  if (it == entries_.end() || it->second.defaulted) return node_.location();
  return it->second.node.location();
}

void Record::fail(std::string_view name, const std::string& message) const {
  throw InputError(location(name), node_.child_path(name), message);
}

}  // namespace parasim::yaml
