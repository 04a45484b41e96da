#pragma once
// How runtimes split an interleaved 1F1B step's micro-batches into the groups each chunk runs in
// turn (workload/schedule.hpp), when pp does not divide them.

namespace parasim::workload {

/// Megatron-LM's --microbatch-group-size-per-virtual-pipeline-stage at its smallest for
/// `micro_batches`: at least pp, and a last group of none or at least pp; 0 when there are fewer
/// than pp.
int smallest_microbatch_group(int micro_batches, int pp);

/// PyTorch's ScheduleInterleaved1F1B (torchtitan): max(1, m / pp) rounds of equal size, the round
/// being the group; 0 when the rounds are not equal (PyTorch refuses the micro-batch count).
int pytorch_interleaved_group(int micro_batches, int pp);

}  // namespace parasim::workload
