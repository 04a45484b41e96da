#pragma once
// A plan as something to launch: the plan YAML that `parasim simulate --plan` reads, Megatron-LM's
// command-line arguments, a DeepSpeed config for ZeRO plans, and the way back from Megatron-LM
// arguments to a plan.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"

namespace parasim::planner {

/// The plan as a `plan:` section file, every field the plan sets written out.
std::string plan_yaml(const workload::Plan& plan, const std::string& comment);

/// Megatron-LM arguments, one per line. Lines starting with "#" say what the arguments cannot
/// express exactly (ZeRO-2/3, a per-stage recompute mix) and what to do instead.
std::vector<std::string> megatron_arguments(const workload::Plan& plan, const workload::ModelSpec& model, const workload::TrainingSpec& training);

/// DeepSpeed's JSON config for the plan's batch, precision and ZeRO stage.
nlohmann::json deepspeed_config(const workload::Plan& plan, const workload::TrainingSpec& training);

/// A plan from Megatron-LM arguments ("--tensor-model-parallel-size 8 --sequence-parallel ..."):
/// parallel degrees, micro and global batch, virtual stages, recompute, distributed optimizer and
/// overlaps; other arguments (model shape, paths, ...) are skipped. dp is what the GPUs leave.
/// Throws InputError naming the argument.
workload::Plan plan_from_megatron_arguments(const std::string& arguments, const workload::ModelSpec& model, int gpus, int seq_len);

}  // namespace parasim::planner
