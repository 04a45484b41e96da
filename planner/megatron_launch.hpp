#pragma once
// A plan as Megatron-LM runs it: every argument pretrain_gpt.py needs to build the model and run
// the plan (grouped as Megatron-LM's own example scripts group them), the environment its start-up
// checks demand, and the launch script (torchrun) or bare argument list that carries them.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology/gpu_spec.hpp"
#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"

namespace parasim::planner {

struct MegatronArgument {
  std::string flag;   ///< "--tensor-model-parallel-size"
  std::string value;  ///< empty for a switch
};

struct MegatronArgumentGroup {
  std::string name;  ///< shell array name: MODEL_ARGS, PARALLEL_ARGS, ...
  std::vector<MegatronArgument> arguments;
};

struct MegatronLaunch {
  std::vector<MegatronArgumentGroup> groups;
  /// Environment variables the launch sets (a value) or clears (nullopt).
  std::vector<std::pair<std::string, std::optional<std::string>>> environment;
  /// What the arguments do not say as parasim priced it, one line each (comments in the files).
  std::vector<std::string> notes;
};

/// The launch of a plan Megatron-LM can run (megatron_plan_problem is nullopt) for `train_iters`
/// iterations; throws std::invalid_argument otherwise.
MegatronLaunch megatron_launch(const workload::Plan& plan, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                               const topology::GpuSpec& gpu, int train_iters = 100);

/// Arguments a site adds to every launch ("--data-path /data/x --transformer-impl local"): each word
/// starting with "--" a Megatron-LM flag parasim knows, the words up to the next flag its value; not
/// the plan's or the model's (the launch would no longer be the plan priced). Throws
/// std::invalid_argument naming the first word that is not.
MegatronArgumentGroup site_arguments(const std::string& words);

/// The launch with a site's arguments: one the launch already writes takes the site's value where it
/// stands (--lr, --train-iters, --tokenizer-type); a data source (--data-path, --data-args-path, …)
/// replaces --mock-data, as Megatron-LM allows one source; the rest follow in SITE_ARGS.
MegatronLaunch with_site_arguments(MegatronLaunch launch, const MegatronArgumentGroup& site);

/// What every launch file says about itself: which plan, predicted how fast, on what.
struct LaunchHeader {
  std::vector<std::string> lines;  ///< written as comments at the top
  int nodes = 1;
  int gpus_per_node = 8;
};

/// The node variables a torchrun launch script sets: NNODES, GPUS_PER_NODE, MASTER_ADDR and
/// NODE_RANK (required from the user on more than one node), MASTER_PORT.
std::string torchrun_node_variables(const LaunchHeader& header);
/// The argument groups as bash arrays, then the torchrun line passing them to `program` (a shell word).
std::string torchrun_arrays_and_command(const MegatronLaunch& launch, const std::string& program);

/// launch_megatron.sh: a bash script that runs the plan with torchrun on every node.
std::string megatron_launch_script(const MegatronLaunch& launch, const LaunchHeader& header);
/// megatron_args.txt: the same arguments, one per line, with the header and notes as comments.
std::string megatron_argument_file(const MegatronLaunch& launch, const LaunchHeader& header);
/// One argument as a shell reads it: "--flag value", the value quoted where it needs to be.
std::string argument_text(const MegatronArgument& argument);
/// The same in a launch script, where a $VARIABLE value is the script's own and expands.
std::string script_argument_text(const MegatronArgument& argument);
/// The arguments as one line (shell-quoted where a value needs it).
std::string megatron_argument_line(const MegatronLaunch& launch);

}  // namespace parasim::planner
