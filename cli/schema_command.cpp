// parasim schema [section]: the reference of every scenario key, generated from the schema tables.
#include <iostream>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"
#include "sim/scenario.hpp"
#include "topology/cluster_spec.hpp"

namespace parasim::cli {

Action add_schema_command(CLI::App& app) {
  auto section = std::make_shared<std::string>("scenario");
  auto* cmd = app.add_subcommand("schema", "Print the reference of scenario keys (Markdown), from the schema tables");
  cmd->footer(
      "Examples:\n"
      "  parasim schema model\n"
      "  parasim schema > keys.md");
  cmd->add_option("section", *section, "scenario | cluster | node | hardware | model | training | plan")->capture_default_str();
  return [section]() {
    const std::vector<std::pair<std::string, const yaml::Schema*>> known{
        {"scenario", &sim::kScenarioSchema},
        {"cluster", &topology::kClusterSchema},
        {"node", &topology::kNodeSchema},
        {"hardware", &topology::kGpuSchema},
        {"model", &workload::kModelSchema},
        {"training", &workload::kTrainingSchema},
        {"plan", &workload::kPlanSchema},
    };
    for (const auto& [name, schema] : known) {
      if (name == *section) {
        std::cout << yaml::schema_markdown(*schema);
        return 0;
      }
    }
    std::vector<std::string> names;
    for (const auto& k : known) names.push_back(k.first);
    throw InputError({}, "schema", "no section '" + *section + "'" + did_you_mean(*section, names) + "; sections: " + join_names(names));
  };
}

}  // namespace parasim::cli
