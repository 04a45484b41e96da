#pragma once
// A scenario: the one YAML file a user hands to parasim. It names (or inlines) the cluster and,
// for anything beyond the topology, the model (a model YAML or a Hugging Face config.json), the
// training settings and the parallel plan.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/profile.hpp"
#include "core/schema.hpp"
#include "topology/cluster_spec.hpp"
#include "workload/plan.hpp"

namespace parasim::sim {

struct Scenario {
  std::string name;
  std::string file;
  topology::ClusterSpec cluster;
  std::optional<workload::ModelSpec> model;
  std::optional<workload::TrainingSpec> training;
  std::optional<workload::Plan> plan;
  /// The calibration profile the scenario names; nullopt: the bundled profile of its GPU.
  std::optional<calibrate::Profile> profile;

  /// Set only when loaded with PlanCheck::drop_unsuitable: the error line that strict loading gives
  /// for the plan section (it does not suit the cluster or model as overridden); the plan is then
  /// absent and `dropped_plan_global_batch` keeps the global batch it asked for (0 if none).
  std::optional<std::string> dropped_plan;
  int dropped_plan_global_batch = 0;

  /// The profile to price the scenario with: its own, or the bundled one of its GPU.
  calibrate::Profile effective_profile() const;

  /// The model, training and plan, or an InputError naming the scenario and what it lacks.
  void require_workload() const;
};

extern const yaml::Schema kScenarioSchema;

/// What to do with a plan section that does not suit the cluster or model (as overridden): strict
/// throws; drop_unsuitable leaves the plan out (a what-if variant with more nodes re-plans anyway).
/// Malformed values and unknown keys are errors either way.
enum class PlanCheck { strict, drop_unsuitable };

/// Loads a scenario file, or a bare cluster file (a file without a `cluster:` key), applying
/// `--set key.path=value` overrides. Throws InputError.
Scenario load_scenario(const std::filesystem::path& file, const std::vector<std::string>& overrides = {},
                       PlanCheck plan_check = PlanCheck::strict);

/// The same from YAML text (a scenario built in memory, e.g. the Python module's dict): errors name
/// `name` and its lines; file references resolve against the current directory.
Scenario load_scenario_text(const std::string& text, const std::string& name, const std::vector<std::string>& overrides = {},
                            PlanCheck plan_check = PlanCheck::strict);

/// Loads a plan on its own: a plan file (`parasim plan --out` writes one) or the plan section of a
/// scenario file, checked against the model, the GPUs and the sequence length. Throws InputError.
workload::Plan load_plan(const std::filesystem::path& file, const workload::ModelSpec& model, int gpus, int seq_len);

/// Loads a model on its own: a model YAML or a Hugging Face config.json (by extension).
workload::ModelSpec load_model(const std::filesystem::path& file);

}  // namespace parasim::sim
