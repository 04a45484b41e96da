#pragma once
// A YAML node that remembers where it came from: the file (as the user named it), its line and
// column, and its dotted key path from the scenario root. Files reference each other by relative
// path (`hardware: ../hardware/h100-sxm5-80gb.yaml`); a referenced file's keys keep the logical path
// (`cluster.node.hardware.hbm.capacity`), so errors and `--set` overrides address keys the same way
// whether a section is inlined or in a file of its own.
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"

namespace parasim::yaml {

/// `--set key.path=value` overrides, addressed by logical key path. The schema reader consumes them
/// as it reads each key; a path that no read asked for is an unknown key (see unused()).
class Overrides {
 public:
  /// `assignment` is "key.path=value". Throws InputError when it has no '=' or no key.
  void add(const std::string& assignment);
  bool empty() const { return entries_.empty(); }
  /// The value for `path` parsed as YAML, marking it used; nullopt when there is none.
  std::optional<YAML::Node> take(const std::string& path);
  /// Notes a path the schema knows, for "did you mean" on unused overrides.
  void note_known_path(const std::string& path);
  /// Throws InputError for the first override nothing consumed.
  void check_all_used() const;

 private:
  struct Entry {
    std::string value;
    bool used = false;
  };
  std::map<std::string, Entry> entries_;
  std::vector<std::string> known_paths_;
};

/// One file in the chain of references that led to a node; used to name files and find cycles.
struct Source {
  std::string display_name;             ///< the path as shown in messages
  std::filesystem::path canonical;      ///< for cycle detection; empty for --set values
  std::shared_ptr<const Source> parent;  ///< the file that referenced this one
};

class Node {
 public:
  Node(YAML::Node raw, std::shared_ptr<const Source> source, std::string key_path, Overrides* overrides);

  const YAML::Node& raw() const { return raw_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& file() const { return source_->display_name; }
  const std::shared_ptr<const Source>& source() const { return source_; }
  Overrides* overrides() const { return overrides_; }

  SourceLocation location() const;
  /// The dotted path of a child key: "cluster" + "node" → "cluster.node".
  std::string child_path(std::string_view key) const;
  /// A node for a child, in the same file (or, for an override, from the command line).
  Node child(const YAML::Node& raw, std::string_view key) const;
  Node with_raw(YAML::Node raw) const;

  [[noreturn]] void fail(const std::string& message) const;

 private:
  YAML::Node raw_;
  std::shared_ptr<const Source> source_;
  std::string key_path_;
  Overrides* overrides_;
};

/// Loads a whole file as the root of a scenario (key path "") or of a section (key path given).
/// A missing or unreadable file, or malformed YAML, throws InputError naming file, line and column.
Node load_file(const std::filesystem::path& path, std::string key_path = {}, Overrides* overrides = nullptr);

/// Parses YAML text as if it were the file `display_name` (references resolve relative to its
/// directory). For tests and for YAML that arrives by other means than a file.
Node parse_text(const std::string& text, const std::string& display_name, Overrides* overrides = nullptr);

/// Loads the file a string value refers to, relative to the referring file's directory (or to the
/// working directory for a --set value). Reference cycles throw InputError naming the chain.
Node load_reference(const Node& reference);

}  // namespace parasim::yaml
