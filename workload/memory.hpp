#pragma once
// Bytes per GPU, per pipeline stage: model state by ZeRO stage, activations in flight under the
// schedule, buffers, and an allowance for what PyTorch and CUDA keep besides tensors.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "workload/ops.hpp"
#include "workload/schedule.hpp"

namespace parasim::workload {

/// Parameters of one layer on one GPU, by the group that reduces their gradients: dense ones over
/// the dp·cp ranks, a MoE layer's routed experts (E/ep of them, each split over etp) over the
/// expert-data-parallel ranks.
struct LayerParameters {
  double dense = 0;
  double expert = 0;
  double total() const { return dense + expert; }
};
LayerParameters layer_parameters(const ModelSpec& model, const Plan& plan, int layer);

/// Parameters of the multi-token-prediction modules on a TP rank of the last stage.
double mtp_parameters(const ModelSpec& model, const Plan& plan);
/// Parameters one GPU of a stage holds after tensor and expert parallelism (before any ZeRO sharding).
double stage_parameters(const ModelSpec& model, const Plan& plan, int stage);
/// The routed experts' part of it.
double stage_expert_parameters(const ModelSpec& model, const Plan& plan, int stage);

/// One Transformer layer's activations for one micro-batch (attention and MLP blocks, or attention,
/// router, experts and shared experts in a MoE layer): what it keeps from forward to backward, and
/// what its backward holds for a moment beyond what it keeps (the gradients it makes, net of what its
/// later blocks have released by then).
struct LayerActivations {
  double kept = 0;
  double backward_transient = 0;
};
LayerActivations layer_activations(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape, int layer);

/// Activation bytes one Transformer layer keeps for one micro-batch.
double layer_activation_bytes(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape, int layer);
/// The same for the model's first layer of its main kind (the first MoE layer of a MoE model).
double layer_activation_bytes(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);

/// What besides tensors occupies a GPU: the CUDA context, NCCL and cuBLAS workspaces (a fixed
/// 1.5 GiB), and the caching allocator's fragmentation (5% of the tensor bytes).
inline constexpr double kFixedAllowanceBytes = 1.5 * 1073741824.0;
inline constexpr double kFragmentation = 0.05;

struct StageMemory {
  int stage = 0;
  double parameters = 0;  ///< held by one GPU after TP and EP, before ZeRO
  double expert_parameters = 0;  ///< the routed experts' part (ZeRO shards it over the expert-data-parallel group)
  Bytes weights, gradients, optimizer;
  Bytes activations;       ///< at the schedule's peak, including the recompute working set
  /// Part of activations, beyond the schedule's kept ones: the larger of the loss's transients and a
  /// layer's backward (its recomputed layers materialized, and its gradients).
  Bytes recompute_working;
  Bytes backward_transient;  ///< part of recompute_working: the largest layer's backward gradients
  Bytes buffers;           ///< pipeline send/recv, ZeRO-3 gathered layers
  /// What the optimizer's update holds beside its state while it steps, when every activation is gone
  /// (PyTorch's foreach AdamW: its second moments' square roots).
  Bytes optimizer_step;
  Bytes allowance;
  int chunks_in_flight = 0;  ///< (micro-batch, chunk) activation sets alive at the peak
  /// The activations at the schedule's peak, or the optimizer's step where it needs more.
  Bytes transient_peak() const { return Bytes(std::max(activations.value(), optimizer_step.value())); }
  Bytes total() const { return weights + gradients + optimizer + transient_peak() + buffers + allowance; }
};

struct MemoryReport {
  std::vector<StageMemory> stages;
  Bytes capacity;
  int worst_stage = 0;
  bool fits() const;
  /// The largest stage's total: what the most loaded GPU needs.
  Bytes peak() const { return stages.empty() ? Bytes(0.0) : stages[static_cast<std::size_t>(worst_stage)].total(); }
  /// "OOM on stage 3 by 4.2 GiB" or nullopt.
  std::optional<std::string> problem() const;
};

MemoryReport memory_per_stage(const ModelSpec& model, const TrainingSpec& training, const Plan& plan, Bytes capacity);
/// The same with the plan's schedule already built (pipeline_schedule(planned_shape(...))).
MemoryReport memory_per_stage(const ModelSpec& model, const TrainingSpec& training, const Plan& plan, Bytes capacity,
                              const std::vector<std::vector<ScheduleStep>>& schedule);

}  // namespace parasim::workload
