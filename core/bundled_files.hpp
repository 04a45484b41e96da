#pragma once
// Bundled files by a short name: `h200` for scenarios/hardware/h200-sxm-141gb.yaml. One rule for every
// place a user names a bundled file (a scenario's reference fields, `calibrate from-log --gpu`).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace parasim {

struct BundledLookup {
  std::optional<std::filesystem::path> file;  ///< the file `name` names, if exactly one
  std::vector<std::string> matches;           ///< the stems `name` begins, when several
  std::vector<std::string> names;             ///< every bundled stem, sorted
};

/// The .yaml file in `dir` whose stem is `name`, or else the only one whose stem begins with `name`
/// and a dash (`h200` -> h200-sxm-141gb; `h20`, another GPU, matches nothing).
BundledLookup find_bundled_file(const std::filesystem::path& dir, const std::string& name);

}  // namespace parasim
