#pragma once
// The order in which one pipeline stage runs its forward and backward passes, exactly as
// Megatron-LM issues them (schedules.py):
//   GPipe: every forward, then every backward.
//   1F1B: warm-up of min(pp − stage − 1, m) forwards, then one forward / one backward, then the
//     remaining backwards.
//   Interleaved 1F1B with v chunks: warm-up of (pp − stage − 1)·2 + (v − 1)·pp virtual forwards (all
//     of them when m = pp), then one forward / one backward. Virtual step k runs chunk
//     (k mod pp·v) div pp (reversed for backward) on micro-batch (k div pp·v)·pp + k mod pp.
#include <vector>

#include "workload/plan.hpp"

namespace parasim::workload {

enum class Pass { forward, backward };

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

/// Peak number of (micro-batch, chunk) activation sets a stage holds at once under the schedule.
int chunks_in_flight(Schedule schedule, int pp, int vpp, int stage, int micro_batches);

}  // namespace parasim::workload
