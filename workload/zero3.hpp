#pragma once
// How a ZeRO-3 engine (training.zero3_engine) splits a dense layer's collectives. The task graph
// issues them and the planner's oracle prices them from the same split.
//
//   fsdp       one gather of the layer's flat parameter, one reduce-scatter of its flat gradient;
//   deepspeed  a gather per module (its pre-forward hooks: two norms, QKV, projection, MLP up and
//              down), and reduce-scatters through its bucket of kDeepSpeedReduceBucketGradients.
//
// Under a pipeline, FSDP keeps a stage's layers gathered for the whole step: torchtitan shards them
// with reshard_after_forward=False when pipelining, and PyTorch's pipeline stage
// (torch.distributed.pipelining, backward_maybe_with_nosync) turns off resharding after backward
// and gradient sync until the chunk's last backward, after which it reduce-scatters every layer's
// accumulated (unsharded) gradient at once. So each layer is gathered once a step, by its first
// forward, and its gradient held unsharded until then, in the reduction's format.
#include <vector>

#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"

namespace parasim::workload {

/// Shares (summing to 1) of a dense layer's parameters, one per gather the engine issues.
std::vector<double> zero3_gather_shares(const ModelSpec& model, const TrainingSpec& training);
/// Reduce-scatters the engine issues for a layer of `gradients` gradients.
int zero3_reduce_scatters(const TrainingSpec& training, double gradients);
/// Whether the plan's ZeRO-3 holds each stage's layers gathered, and their gradients unsharded,
/// from a layer's first forward to the step's last backward (FSDP under a pipeline, see above).
bool zero3_holds_stage(const Plan& plan, const TrainingSpec& training);

}  // namespace parasim::workload
