#pragma once
// A plan as Megatron-DeepSpeed runs it (deepspeedai/Megatron-DeepSpeed at commit 4efb479, on
// DeepSpeed v0.19.5): its own argument names (Megatron-LM's of 2023 plus --deepspeed,
// --deepspeed_config, --zero-stage, --ds-sequence-parallel-size, --no-pipeline-parallel), every one
// of them in tests/data/launch/megatron-deepspeed-4efb479-arguments.txt, and the launch script that
// runs pretrain_gpt.py with the plan's ds_config.json.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "planner/megatron_launch.hpp"

namespace parasim::planner {

inline constexpr std::string_view kMegatronDeepSpeedCommit = "4efb479d";

/// Why Megatron-DeepSpeed cannot run the plan of this model: DeepSpeed's own limits
/// (deepspeed_plan_problem), and what its model code or this writer does not build (experts, latent
/// attention, ranges of recompute); nullopt when it can.
std::optional<std::string> megatron_deepspeed_plan_problem(const workload::Plan& plan, const workload::ModelSpec& model);

/// The arguments of pretrain_gpt.py for `train_iters` iterations (the DeepSpeed config beside it
/// is planner::deepspeed_config); throws std::invalid_argument for a plan it cannot run.
MegatronLaunch megatron_deepspeed_launch(const workload::Plan& plan, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                                         int train_iters = 100);

/// launch_megatron_deepspeed.sh: torchrun on every node, the arguments in groups, ds_config.json
/// from the same folder.
std::string megatron_deepspeed_script(const MegatronLaunch& launch, const LaunchHeader& header);

}  // namespace parasim::planner
