#include "sim/scenario.hpp"

namespace parasim::sim {
namespace {

using yaml::Field;
using yaml::FieldType;

constexpr Field kScenarioFields[] = {
    {.name = "name", .type = FieldType::string, .description = "scenario name; default: the file name"},
    {.name = "description", .type = FieldType::string, .description = "free text"},
    {.name = "cluster", .type = FieldType::reference, .description = "the cluster: a file (relative path) or an inline section", .required = true, .schema = &topology::kClusterSchema},
};

}  // namespace

const yaml::Schema kScenarioSchema{"scenario", "What parasim is asked about: a cluster (and, as modules arrive, a model, training settings and a plan).", kScenarioFields};

Scenario load_scenario(const std::filesystem::path& file, const std::vector<std::string>& overrides) {
  yaml::Overrides o;
  for (const auto& s : overrides) o.add(s);
  const yaml::Node root = yaml::load_file(file, {}, &o);
  Scenario s;
  s.file = file.string();
  const bool bare_cluster = root.raw().IsMap() && !root.raw()["cluster"];
  if (bare_cluster) {
    const yaml::Record r(root, topology::kClusterSchema);
    s.cluster = topology::parse_cluster(r);
    s.name = s.cluster.name;
  } else {
    const yaml::Record r(root, kScenarioSchema);
    s.cluster = topology::parse_cluster(r.section("cluster"));
    s.name = r.has("name") ? r.string("name") : file.stem().string();
  }
  o.check_all_used();
  return s;
}

}  // namespace parasim::sim
