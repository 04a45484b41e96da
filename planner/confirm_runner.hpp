#pragma once
// The runners of `parasim confirm`: the top plans' launch scripts (one folder each) run one after
// another, every node writing its own log into the plan's folder (nodeN.log), which `confirm --read`
// and `calibrate from-log` read back. Two forms: a Slurm batch script, and a script each node runs.
#include <string>
#include <string_view>
#include <vector>

namespace parasim::planner {

/// What the runners launch: each plan folder's script and the framework checkout it needs.
struct ConfirmFramework {
  std::string_view name;           ///< "Megatron-LM"
  std::string_view launch_script;  ///< in each plan folder: "launch_megatron.sh"
  std::string_view home_variable;  ///< the environment variable naming the checkout: "MEGATRON_LM"
  std::string_view home_default;   ///< where the batch script looks without it
};

inline constexpr ConfirmFramework kConfirmMegatron{"Megatron-LM", "launch_megatron.sh", "MEGATRON_LM", "/workspace/megatron-lm"};
inline constexpr ConfirmFramework kConfirmTorchtitan{"torchtitan", "launch_torchtitan.sh", "TORCHTITAN", "/workspace/torchtitan"};

struct ConfirmRunner {
  std::vector<std::string> plan_dirs;  ///< "plan-01", … in the order they run (predicted fastest first)
  std::vector<std::string> header;     ///< what the scripts say about themselves, one comment line each
  int nodes = 1;
  int gpus_per_node = 8;
  double wall_seconds = 0;             ///< the time the whole batch job asks for
  ConfirmFramework framework = kConfirmMegatron;
};

/// The time a confirm batch asks Slurm for: three times the predicted iterations of every plan (the
/// first steps allocate and compile) and ten minutes of start-up each (imports, NCCL, data).
double confirm_wall_seconds(const std::vector<double>& predicted_iteration_s, int steps);

/// confirm.sbatch: one srun per plan over all nodes, each node's output in PLAN/node%n.log.
std::string confirm_sbatch(const ConfirmRunner& runner);

/// run_on_node.sh: the same sequence for one node (NODE_RANK), started on every node at once.
std::string confirm_node_script(const ConfirmRunner& runner);

/// "01:40:00": Slurm's --time of a number of seconds, rounded up to the minute.
std::string slurm_time(double seconds);

}  // namespace parasim::planner
