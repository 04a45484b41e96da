#include "core/yaml_node.hpp"

#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "core/suggest.hpp"

namespace parasim::yaml {
namespace {

const std::shared_ptr<const Source>& command_line_source() {
  static const auto source = std::make_shared<const Source>(Source{"--set", {}, nullptr});
  return source;
}

}  // namespace

void Overrides::add(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError({"--set", 0, 0}, {}, fmt::format("'{}' is not of the form key.path=value", assignment));
  }
  entries_[assignment.substr(0, eq)] = Entry{assignment.substr(eq + 1), false};
}

std::optional<YAML::Node> Overrides::take(const std::string& path) {
  const auto it = entries_.find(path);
  if (it == entries_.end()) return std::nullopt;
  it->second.used = true;
  try {
    return YAML::Load(it->second.value);
  } catch (const YAML::Exception& e) {
    throw InputError({"--set", 0, 0}, path, fmt::format("'{}' is not valid YAML: {}", it->second.value, e.msg));
  }
}

void Overrides::note_known_path(const std::string& path) { known_paths_.push_back(path); }

void Overrides::check_all_used() const {
  for (const auto& [path, entry] : entries_) {
    if (entry.used) continue;
    throw InputError({"--set", 0, 0}, path, "no such key in this scenario" + did_you_mean(path, known_paths_));
  }
}

Node::Node(YAML::Node raw, std::shared_ptr<const Source> source, std::string key_path, Overrides* overrides)
    : raw_(std::move(raw)), source_(std::move(source)), key_path_(std::move(key_path)), overrides_(overrides) {}

SourceLocation Node::location() const {
  if (source_->canonical.empty()) return {source_->display_name, 0, 0};
  const YAML::Mark m = raw_.Mark();
  // An empty document has no mark; its one position is the start of the file.
  if (m.is_null()) return {source_->display_name, 1, 1};
  return {source_->display_name, m.line + 1, m.column + 1};
}

std::string Node::child_path(std::string_view key) const {
  return key_path_.empty() ? std::string(key) : key_path_ + "." + std::string(key);
}

Node Node::child(const YAML::Node& raw, std::string_view key) const {
  return Node(raw, source_, child_path(key), overrides_);
}

Node Node::with_raw(YAML::Node raw) const { return Node(std::move(raw), command_line_source(), key_path_, overrides_); }

void Node::fail(const std::string& message) const { throw InputError(location(), key_path_, message); }

namespace {

YAML::Node parse_yaml(const std::string& text, const std::string& display) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw InputError({display, e.mark.line + 1, e.mark.column + 1}, {}, "malformed YAML: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw InputError({display, 0, 0}, {}, "malformed YAML: " + e.msg);
  }
}

Node load_resolved(const std::filesystem::path& path, std::string display, const std::string& reference_text, std::string key_path,
                   Overrides* overrides, std::shared_ptr<const Source> parent,
                   const std::optional<SourceLocation>& referenced_at) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    const bool exists = std::filesystem::exists(path, ec);
    const std::string why = exists ? "is not a regular file" : "no such file";
    if (referenced_at) throw InputError(*referenced_at, key_path, fmt::format("cannot open {}: {}", reference_text, why));
    throw InputError({display, 0, 0}, {}, fmt::format("cannot open file: {}", why));
  }
  const auto canonical = std::filesystem::weakly_canonical(path, ec);
  for (auto s = parent; s; s = s->parent) {
    if (!s->canonical.empty() && s->canonical == canonical) {
      std::string chain = display;
      for (auto t = parent; t; t = t->parent) chain = t->display_name + " -> " + chain;
      throw InputError(referenced_at.value_or(SourceLocation{display, 0, 0}), key_path, "reference cycle: " + chain);
    }
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw InputError({display, 0, 0}, {}, "cannot read file");
  auto source = std::make_shared<const Source>(Source{display, canonical, std::move(parent)});
  return Node(parse_yaml(text.str(), display), source, std::move(key_path), overrides);
}

}  // namespace

Node load_file(const std::filesystem::path& path, std::string key_path, Overrides* overrides) {
  return load_resolved(path, path.string(), path.string(), std::move(key_path), overrides, nullptr, std::nullopt);
}

Node parse_text(const std::string& text, const std::string& display_name, Overrides* overrides) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(display_name, ec);
  if (canonical.empty()) canonical = display_name;
  auto source = std::make_shared<const Source>(Source{display_name, canonical, nullptr});
  return Node(parse_yaml(text, display_name), source, {}, overrides);
}

Node load_reference(const Node& reference) {
  const std::string relative = reference.raw().as<std::string>();
  if (relative.empty()) reference.fail("empty file reference");
  const auto& source = reference.source();
  std::filesystem::path base;
  if (!source->canonical.empty()) base = std::filesystem::path(source->display_name).parent_path();
  const std::filesystem::path target = (base / relative).lexically_normal();
  const std::string shown = target.string() == relative ? fmt::format("'{}'", relative)
                                                        : fmt::format("'{}' (resolved to '{}')", relative, target.string());
  return load_resolved(target, target.string(), shown, reference.key_path(), reference.overrides(),
                       source->canonical.empty() ? nullptr : source, reference.location());
}

}  // namespace parasim::yaml
