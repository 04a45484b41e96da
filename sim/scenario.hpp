#pragma once
// A scenario: the one YAML file a user hands to parasim. It names (or inlines) the cluster; later
// sections (model, training, plan) join it as their modules arrive.
#include <filesystem>
#include <string>
#include <vector>

#include "core/schema.hpp"
#include "topology/cluster_spec.hpp"

namespace parasim::sim {

struct Scenario {
  std::string name;
  std::string file;
  topology::ClusterSpec cluster;
};

extern const yaml::Schema kScenarioSchema;

/// Loads a scenario file, or a bare cluster file (a file without a `cluster:` key), applying
/// `--set key.path=value` overrides. Throws InputError.
Scenario load_scenario(const std::filesystem::path& file, const std::vector<std::string>& overrides = {});

}  // namespace parasim::sim
