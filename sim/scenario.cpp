#include "sim/scenario.hpp"

#include <fmt/format.h>

#include "calibrate/profile_yaml.hpp"
#include "workload/hf_config.hpp"

namespace parasim::sim {
namespace {

using yaml::Field;
using yaml::FieldType;

constexpr Field kScenarioFields[] = {
    {.name = "name", .type = FieldType::string, .description = "scenario name; default: the file name"},
    {.name = "description", .type = FieldType::string, .description = "free text"},
    {.name = "cluster", .type = FieldType::reference, .description = "the cluster: a file (relative path) or an inline section", .required = true, .schema = &topology::kClusterSchema},
    {.name = "model", .type = FieldType::node, .description = "the model: a model YAML, a Hugging Face config.json (relative path) or an inline section", .schema = &workload::kModelSchema},
    {.name = "training", .type = FieldType::section, .description = "formats, sequence length, attention kernel, optimizer state", .schema = &workload::kTrainingSchema},
    {.name = "plan", .type = FieldType::section, .description = "the parallel plan", .schema = &workload::kPlanSchema},
    {.name = "profile", .type = FieldType::reference, .description = "calibration profile (parasim calibrate from-trace, or scenarios/profiles/); default: the bundled profile of the GPU", .schema = &calibrate::kProfileSchema},
};

bool is_json(const std::string& path) { return path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0; }

workload::ModelSpec read_model(const yaml::Node& node) {
  if (node.raw().IsScalar()) {
    const std::string text = node.raw().as<std::string>();
    if (is_json(text)) {
      std::filesystem::path base;
      if (!node.source()->canonical.empty()) base = std::filesystem::path(node.file()).parent_path();
      const auto path = (base / text).lexically_normal();
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) {
        node.fail(fmt::format("cannot open '{}' (resolved to '{}'): no such file", text, path.string()));
      }
      return workload::import_hf_config(path);
    }
    return workload::parse_model(yaml::Record(yaml::load_reference(node), workload::kModelSchema));
  }
  return workload::parse_model(yaml::Record(node, workload::kModelSchema));
}

}  // namespace

const yaml::Schema kScenarioSchema{"scenario", "What parasim is asked about: a cluster, a model, how it is trained and the parallel plan.", kScenarioFields};

calibrate::Profile Scenario::effective_profile() const {
  return profile ? *profile : calibrate::default_profile(cluster.node.gpu.name);
}

void Scenario::require_workload() const {
  for (auto [present, key] : {std::pair{model.has_value(), "model"}, {training.has_value(), "training"}, {plan.has_value(), "plan"}}) {
    if (!present) throw InputError({file, 1, 1}, key, "missing: this command needs a scenario with model, training and plan sections");
  }
}

namespace {

Scenario read_scenario(const yaml::Node& root, const std::filesystem::path& file, yaml::Overrides& o, PlanCheck plan_check) {
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
    if (r.has("model")) s.model = read_model(r.raw("model"));
    if (r.has("training")) s.training = workload::parse_training(r.section("training"));
    if (r.has("profile")) s.profile = calibrate::parse_profile(r.section("profile"));
    if (r.has("plan")) {
      if (!s.model) r.fail("plan", "a plan needs a model section");
      const auto& plan = r.section("plan");
      try {
        s.plan = workload::parse_plan(plan, *s.model, s.cluster.gpus(), s.training ? s.training->seq_len : 0);
      } catch (const InputError& e) {
        // Only the plan's fit to this cluster and model is forgiven; the section was read (and its
        // overrides consumed) before parse_plan checks it.
        if (plan_check == PlanCheck::strict || !e.key_path().starts_with("plan")) throw;
        s.dropped_plan = e.what();
        s.dropped_plan_global_batch = plan.has("global_batch") ? static_cast<int>(plan.integer("global_batch")) : 0;
      }
    }
  }
  o.check_all_used();
  return s;
}

}  // namespace

Scenario load_scenario(const std::filesystem::path& file, const std::vector<std::string>& overrides, PlanCheck plan_check) {
  yaml::Overrides o;
  for (const auto& text : overrides) o.add(text);
  return read_scenario(yaml::load_file(file, {}, &o), file, o, plan_check);
}

Scenario load_scenario_text(const std::string& text, const std::string& name, const std::vector<std::string>& overrides, PlanCheck plan_check) {
  yaml::Overrides o;
  for (const auto& item : overrides) o.add(item);
  return read_scenario(yaml::parse_text(text, name, &o), name, o, plan_check);
}

workload::ModelSpec load_model(const std::filesystem::path& file) {
  if (is_json(file.string())) return workload::import_hf_config(file);
  return workload::parse_model(yaml::Record(yaml::load_file(file), workload::kModelSchema));
}

workload::Plan load_plan(const std::filesystem::path& file, const workload::ModelSpec& model, int gpus, int seq_len) {
  const yaml::Node root = yaml::load_file(file);
  // A plan file (what `parasim plan --out` writes) or a scenario whose plan section is taken.
  if (root.raw().IsMap() && root.raw()["plan"]) {
    return workload::parse_plan(yaml::Record(root.child(root.raw()["plan"], "plan"), workload::kPlanSchema), model, gpus, seq_len);
  }
  return workload::parse_plan(yaml::Record(root, workload::kPlanSchema), model, gpus, seq_len);
}

}  // namespace parasim::sim
