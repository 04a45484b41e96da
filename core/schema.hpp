#pragma once
// One schema table per YAML section (name, type, unit, default, range, description). The table drives
// parsing, validation, defaults and the reference documentation (`parasim schema`), so a key exists
// in exactly one place. A Record is a section read and checked against its table: unknown keys
// ("did you mean"), missing required keys, wrong types, bad units and out-of-range values all fail
// with file, line, column and key path.
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/units.hpp"
#include "core/yaml_node.hpp"

namespace parasim::yaml {

enum class FieldType {
  integer,
  number,
  boolean,
  string,
  choice,        ///< one of Field::choices
  bytes,         ///< "80 GiB"
  bandwidth,     ///< "600 GB/s", "200 Gb/s"
  flop_rate,     ///< "989 TFLOPS"
  duration,      ///< "2 us"
  integer_list,  ///< [0, 1, 2]
  string_list,   ///< [tp, dp, pp]
  section,       ///< a nested mapping with its own schema
  reference,     ///< a nested mapping, inline or in a file named by a relative path
  section_list,  ///< a list of mappings, each with the field's schema
  node,          ///< left as YAML for the caller to interpret (a section that may be a foreign file)
};

struct Schema;

struct Field {
  std::string_view name;
  FieldType type;
  std::string_view description;
  bool required = false;
  /// Default as YAML text, parsed and checked like user input; empty = no default.
  std::string_view default_text = {};
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;  ///< "must be > min" rather than ">= min"
  std::span<const std::string_view> choices = {};
  const Schema* schema = nullptr;  ///< for section and reference fields
  /// For reference fields: the folder of bundled files (in the project's source tree) where a bare
  /// name, such as `h200`, is looked up: the file of that name, or the one it begins with a dash.
  std::string_view bundled = {};
};

struct Schema {
  std::string_view name;
  std::string_view description;
  std::span<const Field> fields;
};

/// Type name for documentation: "bandwidth", "integer", "one of: nvswitch, pcie", …
std::string describe_type(const Field& field);

/// Markdown reference of a schema and its nested sections, for docs and `parasim schema`.
std::string schema_markdown(const Schema& schema, int heading_level = 2);

class Record {
 public:
  /// Reads `node` (a mapping) against `schema`. Throws InputError on the first problem, in file order.
  Record(const Node& node, const Schema& schema);

  const Node& node() const { return node_; }
  const Schema& schema() const { return *schema_; }

  /// True when the key was given (in the file or by --set) or has a default.
  bool has(std::string_view name) const;
  /// Whether the input states the key (not its default).
  bool stated(std::string_view name) const;

  std::int64_t integer(std::string_view name) const;
  double number(std::string_view name) const;
  bool boolean(std::string_view name) const;
  const std::string& string(std::string_view name) const;
  Bytes bytes(std::string_view name) const;
  BytesPerSecond bandwidth(std::string_view name) const;
  FlopsPerSecond flop_rate(std::string_view name) const;
  Seconds duration(std::string_view name) const;
  const std::vector<std::int64_t>& integers(std::string_view name) const;
  const std::vector<std::string>& strings(std::string_view name) const;
  const Record& section(std::string_view name) const;
  const std::vector<Record>& sections(std::string_view name) const;
  /// The value of a `node` field as written (or as --set replaced it).
  const Node& raw(std::string_view name) const { return entry(name).node; }

  /// Where a key's value stands, for errors that involve several keys.
  SourceLocation location(std::string_view name) const;
  std::string path(std::string_view name) const { return node_.child_path(name); }
  [[noreturn]] void fail(std::string_view name, const std::string& message) const;

 private:
  using Value = std::variant<std::monostate, std::int64_t, double, bool, std::string, std::vector<std::int64_t>,
                             std::vector<std::string>, std::shared_ptr<const Record>, std::shared_ptr<const std::vector<Record>>>;
  struct Entry {
    Node node;
    Value value;
    bool defaulted = false;
  };
  const Entry& entry(std::string_view name) const;
  const Field& field(std::string_view name) const;
  Value read(const Field& field, const Node& value) const;

  Node node_;
  const Schema* schema_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace parasim::yaml
