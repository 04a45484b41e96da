#pragma once
// A plan as torchtitan v0.2.2's job config: the TOML its `--job.config_file` reads, every key a field
// of that release's JobConfig (tests/data/launch/torchtitan-v0.2.2-job-config-keys.txt), for a job
// and plan torchtitan runs (torchtitan_rules.hpp says which).
#include <string>
#include <utility>
#include <vector>

#include "planner/megatron_launch.hpp"
#include "planner/torchtitan_rules.hpp"

namespace parasim::planner {

/// What the plan was priced with that the TOML cannot say (the attention kernel, the meaning of
/// selective recompute): one line each, written into the file and printed beside it.
std::vector<std::string> torchtitan_notes(const workload::Plan& plan, const workload::ModelSpec& model, const workload::TrainingSpec& training);

/// The job config for `steps` training steps on torchtitan's bundled offline dataset (c4_test):
/// the header lines as comments, then [job], [model], [training], [parallelism], activation
/// checkpointing, compile and, in fp8, torchao's float8 linears. Needs torchtitan_job_problem and
/// torchtitan_plan_problem to be nullopt.
std::string torchtitan_toml(const workload::Plan& plan, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                            const std::vector<std::string>& header, int gpus_per_node, int steps = 100);

/// The job config's mesh degrees and batch, by its keys (data_parallel_replicate_degree,
/// data_parallel_shard_degree, tensor_parallel_degree, context_parallel_degree,
/// pipeline_parallel_degree, local_batch_size, seq_len): what torchtitan_toml writes of them, and what
/// a run's log must show to be this plan's (`confirm --read`).
std::vector<std::pair<std::string, int>> torchtitan_settings(const workload::Plan& plan, const workload::TrainingSpec& training);

/// launch_torchtitan.sh: torchtitan's own entry point (torchrun -m torchtitan.train, as its
/// run_train.sh starts it) on the torchtitan.toml beside the script, run from the checkout
/// $TORCHTITAN (its relative asset and dataset paths), local rank 0's output alone ("[rank0]:" lines).
std::string torchtitan_launch_script(const LaunchHeader& header);

}  // namespace parasim::planner
