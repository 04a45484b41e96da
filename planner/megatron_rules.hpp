#pragma once
// What Megatron-LM (at kMegatronCommit) can run, as the launch writer and the planner's framework
// filter rely on it: the model it can build, the plans it can express, the recompute it can say,
// and the environment its start-up checks demand.
#include <optional>
#include <string>

#include "topology/gpu_spec.hpp"
#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"

namespace parasim::planner {

/// Recompute as Megatron-LM's arguments say it: one granularity for every layer; for full, the
/// method and --recompute-num-layers (uniform: layers per checkpointed group; block: the first N
/// layers of every model chunk).
struct MegatronRecompute {
  workload::Recompute granularity = workload::Recompute::none;
  workload::RecomputeMethod method = workload::RecomputeMethod::uniform;
  int layers = 0;
};

/// The plan's per-layer recompute as Megatron-LM can say it, or nullopt when it cannot (a mix of
/// selective and full layers, or a different full-recompute count per chunk).
std::optional<MegatronRecompute> megatron_recompute(const workload::Plan& plan, const workload::ModelSpec& model);

/// Why Megatron-LM cannot build this model with pretrain_gpt.py (ALiBi, encoders), or nullopt.
std::optional<std::string> megatron_model_problem(const workload::ModelSpec& model);

/// Why Megatron-LM cannot run this plan of this model as parasim priced it, or nullopt when it can.
/// ZeRO-2/3 run as Megatron-FSDP (optim_grads / optim_grads_params), without pipeline stages; its
/// hybrid sharding is not expressed here. No zero-bubble or GPipe schedule; ranks ordered tp-cp-(ep)-dp-pp only.
std::optional<std::string> megatron_plan_problem(const workload::Plan& plan, const workload::ModelSpec& model);

/// Why Megatron-LM cannot run the plan's pipeline schedule (it runs 1F1B and interleaved 1F1B, the
/// expert all-to-all overlap without full recompute), naming what does run it; nullopt when it can.
std::optional<std::string> megatron_schedule_problem(const workload::Plan& plan);

/// What of the plan alone (no model) Megatron-LM cannot run: its schedule, rank order, Megatron-FSDP
/// with a pipeline or hybrid sharding, TP overlap without SP; nullopt when none. The framework filter
/// of the search applies this before a candidate's recompute is chosen.
std::optional<std::string> megatron_structure_problem(const workload::Plan& plan);

/// Why Megatron-LM cannot order the plan's ranks (it nests tp, cp, dp, pp or tp, cp, pp, dp), or nullopt.
std::optional<std::string> megatron_order_problem(const workload::Plan& plan);

/// Megatron-FSDP runs the plan (ZeRO-2/3).
inline bool uses_megatron_fsdp(const workload::Plan& plan) { return plan.zero >= 2; }

/// CUDA_DEVICE_MAX_CONNECTIONS as Megatron-LM's start-up checks demand it: "1" with tensor or context
/// parallelism before Blackwell (one hardware queue keeps the TP/CP collectives ordered ahead of the
/// GEMMs that wait for them); nullopt = must be unset or above 1 (Megatron-FSDP), or no requirement.
std::optional<std::string> cuda_device_max_connections(const workload::Plan& plan, const topology::GpuSpec& gpu);

/// Megatron-LM's --attention-backend for the kernel parasim priced: cuDNN's fused attention on Hopper
/// and later (TE's pick there, FlashAttention-3 class), flash-attn 2 before, the unfused softmax for eager.
std::string megatron_attention_backend(const workload::TrainingSpec& training, const topology::GpuSpec& gpu);

}  // namespace parasim::planner
