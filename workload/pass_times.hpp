#pragma once
// The relative times a schedule planner works with (ZB-1P/2P/V plan from T_F, T_B, T_W), from the
// work of the passes: a chunk's forward, input-gradient (with what it recomputes) and
// weight-gradient FLOPs, the model's layers averaged over its chunks. FLOPs rank the passes as their
// GEMMs do; the runtimes measure the same three times on the GPU before they plan.
#include "workload/schedule.hpp"

namespace parasim::workload {

PassTimes flop_pass_times(const ModelSpec& model, const TrainingSpec& training, const Plan& plan);

/// The plan's pipeline shape with the times its schedule is planned from (FLOPs where it is planned
/// from times at all): what the task graph, the memory model and the planner build the schedule from.
PipelineShape planned_shape(const ModelSpec& model, const TrainingSpec& training, const Plan& plan);

}  // namespace parasim::workload
