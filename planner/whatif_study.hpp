#pragma once
// A what-if study: one scenario, the keys to vary and the values each takes. The variants are the
// cartesian product of the value lists; each is the scenario loaded with one more `--set key=value`
// per varied key, so any key the scenario schema knows can be varied and an unknown key or a
// malformed value is the same one-line error `--set` gives, naming the key.
//
// A study is given on the command line (`--vary PATH=V1,V2,...`, repeatable) or as a study file:
//   name: nic-bandwidth
//   description: free text
//   scenario: ../jobs/llama3-70b-512-h100.yaml   # relative to the study file
//   set: [training.seq_len=8192]                 # applied to every variant (optional)
//   vary:
//     - key: cluster.node.nics.bandwidth
//       values: [200 Gb/s, 400 Gb/s, 800 Gb/s]
//   fixed_plan: false                            # optional; --fixed-plan also sets it
#include <filesystem>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/schema.hpp"

namespace parasim::planner {

/// One varied key and its values, as written. `origin` is where it was given (the study file's line
/// or "--vary"): errors about the key point there.
struct VaryAxis {
  std::string key;
  std::vector<std::string> values;
  SourceLocation origin{"--vary", 0, 0};
  bool operator==(const VaryAxis&) const = default;
};

/// Parses "PATH=V1,V2,...". Values are split at commas outside brackets, braces and quotes, so a
/// YAML list or a quoted string with a comma is one value: `--vary 'cluster.node.nics.affinity=[0,0,1,1],[0,1,2,3]'`.
/// An empty key, no '=' or an empty value is an InputError naming --vary.
VaryAxis parse_vary(const std::string& text);

/// One point of the grid: the value of each axis, in axis order.
struct Variant {
  std::vector<std::string> values;
  bool operator==(const Variant&) const = default;
};

/// The cartesian product of the axes' values: the first axis changes slowest (the order in which
/// the axes were given reads like nested loops), so the first variant takes every axis's first value.
std::vector<Variant> variant_grid(const std::vector<VaryAxis>& axes);

/// A value as a short label for tables and charts: a file path shows as its stem
/// ("../nodes/dgx-b200.yaml" → "dgx-b200"), anything else as written.
std::string value_label(const std::string& value);

struct Study {
  std::string name;
  std::string description;
  std::filesystem::path scenario;    ///< the scenario file (resolved against the study file's folder)
  std::vector<std::string> set;      ///< overrides applied to every variant
  std::vector<VaryAxis> axes;
  bool fixed_plan = false;
  /// Overrides a variant adds: key=value per axis. Values that name a file next to the study file
  /// are passed as that file's path, so a study runs from any working directory.
  std::vector<std::string> overrides(const Variant& variant) const;
  std::filesystem::path base_dir;  ///< the study file's folder; empty for a study from the command line
};

extern const yaml::Schema kStudySchema;

/// True when `file` is a study file (a mapping with a `vary` key) rather than a scenario.
bool is_study_file(const std::filesystem::path& file);

/// Reads a study file. Throws InputError naming file, line and key.
Study load_study(const std::filesystem::path& file);

}  // namespace parasim::planner
