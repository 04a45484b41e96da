#pragma once
// Where each model chunk runs: which pipeline stage holds it, for which micro-batches.
//   1F1B, GPipe, ZB-H1/1P/2P: one chunk a stage, chunk s on stage s.
//   Interleaved 1F1B: chunk c on stage c mod pp (v chunks a stage, round robin).
//   ZB-V, DualPipe-V: two chunks a stage in a V: chunk s on stage s going down, chunk 2·pp − 1 − s on
//     stage s coming back, so stage 0 holds both the embedding and the head.
//   DualPipe: the model in pp chunks, every stage holding two of them as copies: chunk s (the
//     micro-batches that enter at stage 0) and chunk pp − 1 − s (those that enter at the last stage,
//     the first half of the micro-batches going down and the second half coming up). The copies' gradients
//     are summed between mirror stages s and pp − 1 − s.
#include <vector>

#include "workload/plan.hpp"

namespace parasim::workload {

/// True for the schedules that place two chunks on each stage in a V (vpp = 2).
bool is_v_shaped(Schedule schedule);

/// True when micro-batch `microbatch` runs the pipeline from the last stage to the first (DualPipe's
/// second half).
bool runs_reversed(const Plan& plan, int microbatch);

/// The stage that runs model chunk `chunk` (0 .. chunks − 1, model order) for `microbatch`.
int chunk_stage(const Plan& plan, int chunk, int microbatch);

/// The model chunks whose parameters a stage holds, in ascending order (DualPipe: two copies).
std::vector<int> stage_chunks(const Plan& plan, int stage);

/// Whether a stage holds the input embedding (chunk 0) or the output head (the last chunk).
bool holds_embedding(const Plan& plan, int stage);
bool holds_head(const Plan& plan, int stage);

/// DualPipe's mirror of a stage (pp − 1 − stage), whose copy of the same chunks it sums gradients
/// with; -1 for every other schedule.
int mirror_stage(const Plan& plan, int stage);

}  // namespace parasim::workload
