#pragma once
// A plan as something to launch: the plan YAML that `parasim simulate --plan` reads, a DeepSpeed
// config for ZeRO plans, and (in their own headers) Megatron-LM's launch, its rules and the way back,
// Megatron-DeepSpeed's launch, and torchtitan's job config and rules.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"
#include "planner/deepspeed_rules.hpp"
#include "planner/megatron_deepspeed_launch.hpp"
#include "planner/megatron_flags.hpp"
#include "planner/megatron_launch.hpp"
#include "planner/megatron_reader.hpp"
#include "planner/megatron_rules.hpp"
#include "planner/torchtitan_config.hpp"
#include "planner/torchtitan_rules.hpp"

namespace parasim::planner {

/// The plan as a `plan:` section file, every field the plan sets written out.
std::string plan_yaml(const workload::Plan& plan, const std::string& comment);

/// DeepSpeed's JSON config for the plan's batch, precision and ZeRO stage, and for Ulysses over data
/// parallelism alone both sizes of the mesh deepspeed.initialize builds over every rank
/// (data_parallel_size, sequence_parallel_size; with TP or PP Megatron-DeepSpeed's mpu gives the
/// groups and the keys would break the mesh). Only for a plan DeepSpeed runs (deepspeed_plan_problem).
nlohmann::json deepspeed_config(const workload::Plan& plan, const workload::TrainingSpec& training);

}  // namespace parasim::planner
