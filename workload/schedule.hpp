#pragma once
// The order in which each pipeline stage runs its forward (F), backward (B) and weight-gradient (W)
// passes, as the runtimes that implement each schedule issue them. Chunks are local to a stage:
// step.chunk indexes stage_chunks(plan, stage) (workload/chunk_placement.hpp).
//   GPipe: every forward, then every backward.
//   1F1B: warm-up of min(pp − stage − 1, m) forwards, then one forward / one backward, then the
//     remaining backwards.
//   Interleaved 1F1B with v chunks and groups of N micro-batches (Megatron-Core's
//     --microbatch-group-size-per-virtual-pipeline-stage, default pp): warm-up of
//     (pp − stage − 1)·2 + (v − 1)·N virtual forwards (m = pp included: Megatron-LM before Megatron-Core's
//     Nov 2024 schedule table made every step warm-up then; Llama 3's schedule and today's do not), then one forward /
//     one backward. The virtual steps run group by group (the last group takes what remains, none
//     or at least pp micro-batches), each chunk in turn over the group's micro-batches; backwards
//     take the chunks in reverse. With N = pp and pp dividing m, step k runs chunk (k mod pp·v) div pp
//     on micro-batch (k div pp·v)·pp + k mod pp.
//   These run each backward's weight gradients right after its input gradients. With the MoE
//   all-to-all overlap (Megatron-LM's --overlap-moe-expert-parallel-comm) each steady-state forward
//   and backward run as one step, after one more warm-up forward (Megatron-LM's combined 1F1B).
//   ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, as their Megatron-LM code
//     orders it): B and W are separate steps. 1F1B's warm-up of pp − stage − 1 forwards; then
//     `stage` pairs F, B whose W is deferred; then F, B, W (W of the oldest micro-batch whose W is
//     pending) while forwards remain; then B, W; then the `stage` deferred W's. With times T_F, T_B,
//     T_W per micro-batch and free communication its bubble is (pp − 1)(T_F + T_B − T_W) against
//     1F1B's (pp − 1)(T_F + T_B + T_W); a micro-batch's activations live until its W, at most pp of
//     them on every stage: 1F1B's peak (stage 0).
//   ZB-1P, ZB-2P: Qi et al.'s heuristic scheduler (workload/zero_bubble_schedule.cpp) under a limit
//     of pp and 2·pp micro-batches' activations, planned from the passes' times.
//   ZB-V: their V-shaped schedule (workload/zbv_schedule.cpp), two chunks a stage, under 1F1B's
//     activation memory (2·pp half-size chunks).
//   DualPipe, DualPipe-V: DeepSeek-V3's schedules as deepseek-ai/DualPipe issues them
//     (workload/dualpipe_schedule.cpp), with forward-and-backward pairs (F&B) run as one step.
#include <vector>

#include "workload/plan.hpp"

namespace parasim::workload {

/// A backward step is the input gradients (B), with the weight gradients too unless the step defers
/// them to a weight step (W) of their own.
enum class Pass { forward, backward, weight };

struct ScheduleStep {
  Pass pass = Pass::forward;
  int microbatch = 0;
  int chunk = 0;  ///< the stage's local chunk: an index into stage_chunks(plan, stage)
  /// A backward whose weight gradients run in a later weight step (the activations live until then).
  bool defers_weight = false;
  /// A forward that runs as one step with the backward right after it (F&B): each one's
  /// communication under the other's compute.
  bool overlaps_next = false;
  bool operator==(const ScheduleStep&) const = default;
};

/// Times of one chunk's passes for one micro-batch, in any unit: the forward, the input gradients,
/// the weight gradients, and a transfer between stages. The schedules that are planned from times
/// (ZB-1P, ZB-2P, ZB-V) use them; the others ignore them.
struct PassTimes {
  double forward = 1;
  double backward = 1;
  double weight = 1;
  double transfer = 0;
  bool operator==(const PassTimes&) const = default;
};

/// What a pipeline schedule is built from.
struct PipelineShape {
  Schedule schedule = Schedule::one_f_one_b;
  int pp = 1;
  int vpp = 1;
  int micro_batches = 1;
  int microbatch_group = 0;  ///< interleaved 1F1B's micro-batch group; 0 = pp
  PassTimes times;
  /// Forwards and backwards paired into F&B steps where the schedule can (overlap.ep_comm).
  bool pair_forward_backward = false;
};
PipelineShape pipeline_shape(const Plan& plan, const PassTimes& times = {});

/// Every stage's steps, stage by stage.
std::vector<std::vector<ScheduleStep>> pipeline_schedule(const PipelineShape& shape);

/// One stage's steps under equal pass times and no pairing.
std::vector<ScheduleStep> stage_schedule(Schedule schedule, int pp, int vpp, int stage, int micro_batches, int microbatch_group = 0);

/// Forward passes a stage runs before its first backward under GPipe, 1F1B, ZB-H1 and interleaved
/// 1F1B (with `paired`, Megatron-LM's one more for the combined 1F1B).
int warmup_steps(Schedule schedule, int pp, int vpp, int stage, int micro_batches, bool paired = false, int microbatch_group = 0);

/// True when the schedule runs some weight gradients as steps of their own.
bool defers_weights(Schedule schedule);

/// Peak number of (micro-batch, chunk) activation sets a stage holds at once: a forward adds one, a
/// backward frees it, or its weight step when the backward defers the weights.
int chunks_in_flight(const std::vector<ScheduleStep>& steps);
int chunks_in_flight(Schedule schedule, int pp, int vpp, int stage, int micro_batches);

}  // namespace parasim::workload
