#pragma once
// How a ZeRO-3 engine (training.zero3_engine) splits a dense layer's collectives. The task graph
// issues them and the planner's oracle prices them from the same split.
//
//   fsdp       one gather of the layer's flat parameter, one reduce-scatter of its flat gradient;
//   deepspeed  a gather per module (its pre-forward hooks: two norms, QKV, projection, MLP up and
//              down), and reduce-scatters through its bucket of kDeepSpeedReduceBucketGradients.
#include <vector>

#include "workload/model.hpp"
#include "workload/training.hpp"

namespace parasim::workload {

/// Shares (summing to 1) of a dense layer's parameters, one per gather the engine issues.
std::vector<double> zero3_gather_shares(const ModelSpec& model, const TrainingSpec& training);
/// Reduce-scatters the engine issues for a layer of `gradients` gradients.
int zero3_reduce_scatters(const TrainingSpec& training, double gradients);

}  // namespace parasim::workload
