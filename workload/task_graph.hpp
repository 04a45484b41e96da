#pragma once
// One training iteration as a DAG of compute and communication tasks, for one data-parallel replica
// (its ranks stand for all replicas: they are identical) and, within a pipeline stage, for its
// tensor-parallel group as one device group (every TP rank runs the same tasks).
//
// Per micro-batch × stage × layer: forward, backward-input, backward-weight and recompute compute
// tasks per block (attention, MLP; embedding and head on the first and last chunks); TP all-reduce
// (or reduce-scatter + all-gather with SP) around each block; PP send/recv between chunks; DP
// gradient all-reduce or ZeRO reduce-scatter in buckets as gradients become ready; ZeRO-3 parameter
// all-gather per layer; the optimizer step. Compute tasks of a stage run in Megatron-LM's schedule
// order; each task also waits for the task before it on its stream.
//
// Context parallelism (cp > 1): the graph stands for one CP rank too (every rank does the same work
// on its s/cp tokens); gradients are reduced over the dp·cp ranks. Around each attention block's
// compute (forward, recompute and input-gradient passes):
//   ring — the sequence is split into 2·cp chunks, two per rank (causal load balancing); each of the
//     cp − 1 ring steps passes the rank's two K+V chunks to its ring neighbour: 2·(cp − 1) send/recv
//     tasks on the CP stream per forward. Transformer Engine computes step i while step i + 1's chunks
//     travel, so the compute task waits only for the first step's two chunks (which stands in for the
//     QKV GEMM that must precede the first send: our block is one task); the later steps overlap it,
//     and whatever uses the block's output waits for the last step too. Backward passes the K+V chunks
//     round again and the dK+dV chunks back the same way: 2·(cp − 1) of each, overlapped alike.
//   ulysses — all-to-alls over the CP group: q, k and v before the core, the output after (4 per
//     forward); dO before and dq, dk, dv after in backward (4). Nothing overlaps them, so they sit in
//     the chain before and after the block's single compute task, which costs the same as inside it.
#include <cstdint>
#include <string_view>
#include <vector>

#include "workload/layout.hpp"
#include "workload/ops.hpp"
#include "workload/twins.hpp"

namespace parasim::workload {

enum class TaskKind : std::uint8_t { compute, collective };
enum class Phase : std::uint8_t { forward, backward_input, backward_weight, recompute, optimizer };
enum class Collective : std::uint8_t { all_reduce, reduce_scatter, all_gather, send_recv, all_to_all };
enum class CommDim : std::uint8_t { tp, dp, pp, cp, ep };
inline constexpr int kCommDims = 5;
/// Streams of a stage: compute runs in order; each kind of communication has its own stream.
enum class Stream : std::uint8_t { compute, tp_comm, dp_comm, pp_comm, cp_comm, ep_comm };
inline constexpr int kStreams = 6;

std::string_view task_kind_name(TaskKind k);
std::string_view phase_name(Phase p);
std::string_view collective_name(Collective c);
/// The data-parallel reduction of gradients under ZeRO stages 0-2: an all-reduce without sharding
/// and under DeepSpeed's ZeRO-1 (its gradients are not partitioned), a reduce-scatter otherwise.
Collective gradient_reduction(int zero, const TrainingSpec& training);
std::string_view comm_dim_name(CommDim d);
std::string_view stream_name(Stream s);

struct Task {
  TaskKind kind = TaskKind::compute;
  Phase phase = Phase::forward;
  Stream stream = Stream::compute;
  Collective collective = Collective::all_reduce;
  CommDim dim = CommDim::tp;
  /// TP collective pipelined with the GEMM that produces or consumes it (overlap.tp_comm).
  bool pipelined = false;
  /// 1 for the backward of an F&B step, whose communication runs on streams of its own beside the
  /// forward's; 0 otherwise.
  std::uint8_t lane = 0;
  std::int32_t stage = 0;
  std::int32_t microbatch = -1;
  std::int32_t chunk = -1;
  std::int32_t layer = -1;
  std::uint32_t block = 0;  ///< compute: index into TaskGraph::blocks
  std::uint32_t group = 0;  ///< collective: index into TaskGraph::groups
  /// Collective buffer in bytes per rank: all-reduce its buffer; all-gather its output and
  /// reduce-scatter its input (the whole tensor); send/recv the message.
  double bytes = 0;
  std::uint32_t deps_begin = 0, deps_end = 0;  ///< into TaskGraph::deps
};

struct TaskGraph {
  std::vector<Task> tasks;
  std::vector<std::uint32_t> deps;  ///< ids of the tasks each task waits for
  std::vector<Block> blocks;        ///< the distinct blocks compute tasks refer to
  std::vector<std::vector<int>> groups;  ///< ranks of each collective (global rank = GPU index)
  /// For each group, every group that runs the same collective at the same time in the other
  /// replicas and TP ranks (the group itself first): what loads the links when one stands for all.
  /// A group of one rank lists itself alone.
  std::vector<Twins> twins;
  int stages = 1;
  int micro_batches = 1;
  int tp = 1;  ///< GPUs that run each stage's tasks together
  int dp = 1;  ///< replicas the graph stands for
  int cp = 1;  ///< context-parallel ranks of each replica, each running the same tasks on its tokens
  Schedule schedule = Schedule::one_f_one_b;
  /// Whether a micro-batch's chunk runs against the pipeline's main direction: DualPipe's second
  /// half of the micro-batches (last stage to first), a V's second chunk (coming back).
  bool runs_up(int chunk, int microbatch) const;
  std::span<const std::uint32_t> dependencies(std::uint32_t task) const {
    return {deps.data() + tasks[task].deps_begin, deps.data() + tasks[task].deps_end};
  }
  /// The ops of a compute task.
  const std::vector<Op>& ops(const Task& task) const;
  /// FLOPs of the whole iteration on every GPU together.
  double total_flops() const;
};

TaskGraph build_tasks(const ModelSpec& model, const TrainingSpec& training, const Plan& plan);

}  // namespace parasim::workload
