#pragma once
// The order in which one pipeline stage runs its forward and backward passes, exactly as
// Megatron-LM issues them (schedules.py):
//   GPipe: every forward, then every backward.
//   1F1B: warm-up of min(pp − stage − 1, m) forwards, then one forward / one backward, then the
//     remaining backwards.
//   Interleaved 1F1B with v chunks: warm-up of (pp − stage − 1)·2 + (v − 1)·pp virtual forwards (all
//     of them when m = pp), then one forward / one backward. Virtual step k runs chunk
//     (k mod pp·v) div pp (reversed for backward) on micro-batch (k div pp·v)·pp + k mod pp.
// These schedules run each backward's weight gradients (W) right after its input gradients (B).
//   ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", as their Megatron-LM/DeepSpeed code
//     orders it): B and W are separate steps. 1F1B's warm-up of pp − stage − 1 forwards; then
//     `stage` pairs F, B whose W is deferred; then F, B, W (W of the oldest micro-batch whose W is
//     pending) while forwards remain; then B, W; then the `stage` deferred W's. With times T_F, T_B,
//     T_W per micro-batch and free communication its bubble is (pp − 1)(T_F + T_B − T_W) against
//     1F1B's (pp − 1)(T_F + T_B + T_W); a micro-batch's activations live until its W, at most pp of
//     them on every stage: 1F1B's peak (stage 0).
#include <vector>

#include "workload/plan.hpp"

namespace parasim::workload {

/// A backward step is the input gradients (B), with the weight gradients too unless the schedule has
/// separate weight steps (ZB-H1).
enum class Pass { forward, backward, weight };

struct ScheduleStep {
  Pass pass = Pass::forward;
  int microbatch = 0;
  int chunk = 0;  ///< local model chunk on this stage, 0..vpp-1 (global chunk = chunk·pp + stage)
  bool operator==(const ScheduleStep&) const = default;
};

std::vector<ScheduleStep> stage_schedule(Schedule schedule, int pp, int vpp, int stage, int micro_batches);

/// Forward passes a stage runs before its first backward: the micro-batch chunks whose activations
/// are alive at once at its peak.
int warmup_steps(Schedule schedule, int pp, int vpp, int stage, int micro_batches);

/// True when the schedule runs weight gradients as steps of their own (and activations live until them).
bool defers_weights(Schedule schedule);

/// Peak number of (micro-batch, chunk) activation sets a stage holds at once under the schedule.
int chunks_in_flight(Schedule schedule, int pp, int vpp, int stage, int micro_batches);

}  // namespace parasim::workload
