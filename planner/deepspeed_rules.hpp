#pragma once
// What DeepSpeed (v0.19.5, and Megatron-DeepSpeed on it) runs of a plan: its pipeline engine has one
// schedule (1F1B, no virtual stages) and refuses ZeRO-2/3 together with pipeline parallelism; its
// context parallelism is Ulysses (the sequence-parallel all-to-all), not ring attention. The search
// under --framework deepspeed and the ds_config.json writer both ask here.
#include <optional>
#include <string>

#include "workload/plan.hpp"

namespace parasim::planner {

/// Why DeepSpeed cannot run the plan, in its terms; nullopt when it can.
std::optional<std::string> deepspeed_plan_problem(const workload::Plan& plan);

}  // namespace parasim::planner
