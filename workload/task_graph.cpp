#include "workload/task_graph.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "workload/chunk_placement.hpp"
#include "workload/memory.hpp"
#include "workload/moe_ops.hpp"
#include "workload/pass_times.hpp"
#include "workload/schedule.hpp"
#include "workload/zero3.hpp"

namespace parasim::workload {

std::string_view task_kind_name(TaskKind k) { return k == TaskKind::compute ? "compute" : "collective"; }
std::string_view phase_name(Phase p) {
  switch (p) {
    case Phase::forward: return "forward";
    case Phase::backward_input: return "backward_input";
    case Phase::backward_weight: return "backward_weight";
    case Phase::recompute: return "recompute";
    case Phase::optimizer: return "optimizer";
  }
  return "";
}
std::string_view collective_name(Collective c) {
  switch (c) {
    case Collective::all_reduce: return "all_reduce";
    case Collective::reduce_scatter: return "reduce_scatter";
    case Collective::all_gather: return "all_gather";
    case Collective::send_recv: return "send_recv";
    case Collective::all_to_all: return "all_to_all";
  }
  return "";
}

Collective gradient_reduction(int zero, const TrainingSpec& training) {
  if (zero == 0 || (zero == 1 && training.zero1_engine == Zero1Engine::deepspeed)) return Collective::all_reduce;
  return Collective::reduce_scatter;
}

std::string_view comm_dim_name(CommDim d) {
  switch (d) {
    case CommDim::tp: return "tp";
    case CommDim::dp: return "dp";
    case CommDim::pp: return "pp";
    case CommDim::cp: return "cp";
    case CommDim::ep: return "ep";
  }
  return "";
}
std::string_view stream_name(Stream s) {
  switch (s) {
    case Stream::compute: return "compute";
    case Stream::tp_comm: return "tp_comm";
    case Stream::dp_comm: return "dp_comm";
    case Stream::pp_comm: return "pp_comm";
    case Stream::cp_comm: return "cp_comm";
    case Stream::ep_comm: return "ep_comm";
  }
  return "";
}

const std::vector<Op>& TaskGraph::ops(const Task& t) const {
  const Block& b = blocks[t.block];
  switch (t.phase) {
    case Phase::forward:
    case Phase::optimizer: return b.forward;
    case Phase::backward_input: return b.backward_input;
    case Phase::backward_weight: return b.backward_weight;
    case Phase::recompute: return b.recompute;
  }
  return b.forward;
}

bool TaskGraph::runs_up(int chunk, int microbatch) const {
  if (schedule == Schedule::dualpipe) return microbatch >= micro_batches / 2;
  return is_v_shaped(schedule) && chunk >= stages;
}

double TaskGraph::total_flops() const {
  double sum = 0;
  for (const auto& t : tasks) {
    if (t.kind == TaskKind::compute) sum += workload::total_flops(ops(t));
  }
  return sum * tp * dp * cp;
}

namespace {

constexpr std::int64_t kNone = -1;

class Builder {
 public:
  Builder(const ModelSpec& m, const TrainingSpec& tr, const Plan& p)
      : m_(m), tr_(tr), p_(p), layout_(p), sizes_(layers_per_chunk(p, m)), first_(first_layer_of_chunk(p, m)),
        recompute_(layer_recompute(p, m)), micro_(p.micro_batches()), holds_stage_(zero3_holds_stage(p, tr)) {
    g_.stages = p.pp;
    g_.micro_batches = micro_;
    g_.tp = p.tp;
    g_.dp = p.dp;
    g_.cp = p.cp;
    g_.schedule = p.schedule;
    last_on_stream_.assign(static_cast<std::size_t>(p.pp) * kStreams * kLanes, kNone);
    stream_join_ = last_on_stream_;
    tp_unwaited_.resize(static_cast<std::size_t>(p.pp) * kLanes);
    compute_order_.resize(static_cast<std::size_t>(p.pp));
    const int chunks = p.chunks();
    fwd_in_.assign(static_cast<std::size_t>(chunks * micro_), kNone);
    pending_weights_.resize(static_cast<std::size_t>(chunks * micro_));
    fwd_out_ = bwd_in_ = bwd_out_ = fwd_in_;
    schedule_ = pipeline_schedule(planned_shape(m, tr, p));
    for (int s = 0; s < p.pp; ++s) stage_chunks_.push_back(stage_chunks(p, s));
    last_gradient_mb_.assign(static_cast<std::size_t>(p.pp * chunks), -1);
    first_forward_mb_.assign(static_cast<std::size_t>(p.pp * chunks), -1);
    for (int s = 0; s < p.pp; ++s) {
      for (const auto& step : schedule_[static_cast<std::size_t>(s)]) {
        auto& first_forward = first_forward_mb_[static_cast<std::size_t>(s * chunks + model_chunk(s, step))];
        if (step.pass == Pass::forward && first_forward < 0) first_forward = step.microbatch;
        if (step.pass == Pass::forward || (step.pass == Pass::backward && step.defers_weight)) continue;
        last_gradient_mb_[static_cast<std::size_t>(s * chunks + model_chunk(s, step))] = step.microbatch;
      }
    }
  }

  TaskGraph build() {
    for (int stage = 0; stage < p_.pp; ++stage) {
      build_stage(stage);
      // Stages hold alike many tasks: room for the rest at once, not by doubling and copying.
      if (stage == 0 && p_.pp > 1) {
        const auto more = [&](std::size_t n) { return n + n * static_cast<std::size_t>(p_.pp - 1) + n / 8; };
        g_.tasks.reserve(more(g_.tasks.size()));
        edges_.reserve(more(edges_.size()));
      }
    }
    build_pipeline_transfers();
    for (int stage = 0; stage < p_.pp; ++stage) build_gradient_sync(stage);
    finish_dependencies();
    return std::move(g_);
  }

 private:
  // --- tasks and edges -------------------------------------------------------------------------
  std::size_t stream_key(int stage, Stream stream, int lane) const { return static_cast<std::size_t>((stage * kStreams + static_cast<int>(stream)) * kLanes + lane); }

  std::uint32_t add(Task t, std::initializer_list<std::int64_t> deps, bool stream_order = true) {
    const auto id = static_cast<std::uint32_t>(g_.tasks.size());
    for (auto d : deps) {
      if (d == kNone) continue;
      edges_.emplace_back(id, static_cast<std::uint32_t>(d));
      // A block whose output also needs trailing transfers (ring CP): its users wait for them too.
      if (output_also_needs_.empty()) continue;
      if (auto it = output_also_needs_.find(d); it != output_also_needs_.end()) {
        for (auto extra : it->second) edges_.emplace_back(id, static_cast<std::uint32_t>(extra));
      }
    }
    const auto key = stream_key(t.stage, t.stream, lane_);
    auto& last = last_on_stream_[key];
    if (stream_order) {
      if (last != kNone) edges_.emplace_back(id, static_cast<std::uint32_t>(last));
      if (stream_join_[key] != kNone) edges_.emplace_back(id, static_cast<std::uint32_t>(stream_join_[key]));
      last = id;
      stream_join_[key] = kNone;
    }
    synchronize_tp(t, id);
    t.lane = static_cast<std::uint8_t>(pairing_ ? lane_ : 0);
    if (t.kind == TaskKind::compute && t.stream == Stream::compute) {
      compute_order_[static_cast<std::size_t>(t.stage)].push_back(id);
      if (pairing_) note_segment(id);
    }
    if (pairing_ && t.kind == TaskKind::collective && t.stream == Stream::ep_comm) segment_break_[static_cast<std::size_t>(lane_)] = true;
    g_.tasks.push_back(t);
    return id;
  }

  /// The stage's compute task issued right after task `id` (kNone at its end) and right before it.
  std::int64_t compute_after(int stage, std::int64_t id) const {
    const auto& order = compute_order_[static_cast<std::size_t>(stage)];
    const auto it = std::upper_bound(order.begin(), order.end(), static_cast<std::uint32_t>(id));
    return it == order.end() ? kNone : static_cast<std::int64_t>(*it);
  }
  std::int64_t compute_before(int stage, std::int64_t id) const {
    const auto& order = compute_order_[static_cast<std::size_t>(stage)];
    const auto it = std::lower_bound(order.begin(), order.end(), static_cast<std::uint32_t>(id));
    return it == order.begin() ? kNone : static_cast<std::int64_t>(*std::prev(it));
  }

  // Without TP communication overlap, Megatron-LM's tensor-parallel collectives are synchronous for
  // the compute stream (PyTorch makes the current stream wait for the NCCL stream): the next kernel
  // waits for them whether it needs their data or not, as at the end of a chunk, where the next
  // kernel belongs to another micro-batch. Two are waited for one kernel later, by design
  // (waited_one_kernel_later): in the backward the input-gradient reduction runs under the
  // weight-gradient GEMM, and with SP the re-gather of the input under the input-gradient GEMM.
  void synchronize_tp(const Task& t, std::uint32_t id) {
    auto& pending = tp_unwaited_[static_cast<std::size_t>(t.stage * kLanes + lane_)];
    if (t.kind == TaskKind::compute && t.stream == Stream::compute) {
      std::erase_if(pending, [&](std::pair<std::uint32_t, int>& p) {
        if (p.second-- > 0) return false;
        edges_.emplace_back(id, p.first);
        return true;
      });
      return;
    }
    if (t.kind == TaskKind::collective && t.dim == CommDim::tp && !p_.overlap.tp_comm) pending.emplace_back(id, 0);
  }
  /// A TP collective issued to run under the next compute kernel: the one after that waits for it.
  std::uint32_t waited_one_kernel_later(std::uint32_t id) {
    for (auto& [collective, kernels] : tp_unwaited_[static_cast<std::size_t>(g_.tasks[id].stage * kLanes + lane_)]) {
      if (collective == id) kernels = 1;
    }
    return id;
  }

  // A group and its twins: `twin(t, d)` gives the group of TP rank t and position d of the other
  // dimension the group repeats over (a data rank, a data-parallel rank, ...).
  template <class Twin>
  std::uint32_t group(std::vector<int> ranks, int tp_ranks, int dp_ranks, Twin twin) {
    if (const auto known = group_index_.find(ranks); known != group_index_.end()) return known->second;
    const auto id = static_cast<std::uint32_t>(g_.groups.size());
    group_index_.emplace(ranks, id);
    Twins all(ranks);
    // A group of one rank moves nothing: its twins are never lowered (zero 3 over every data rank
    // leaves a replica group of one per GPU).
    if (ranks.size() < 2) tp_ranks = dp_ranks = 0;
    all.reserve(static_cast<std::size_t>(std::max(1, tp_ranks * dp_ranks)));
    for (int t = 0; t < tp_ranks; ++t) {
      for (int d = 0; d < dp_ranks; ++d) {
        if (t == 0 && d == 0) continue;
        all.add(twin(t, d));
      }
    }
    g_.groups.push_back(std::move(ranks));
    g_.twins.push_back(std::move(all));
    return id;
  }
  // Point-to-point between two stages, for every (tp, data rank) position.
  // (Every micro-batch's transfer asks again: the answer is kept per stage pair.)
  std::uint32_t pair_group(int from, int to) {
    const auto key = std::make_pair(from, to);
    if (const auto known = pair_groups_.find(key); known != pair_groups_.end()) return known->second;
    const auto id = group({layout_.rank(0, 0, from), layout_.rank(0, 0, to)}, p_.tp, p_.data_ranks(),
                          [&](int t, int j) { return std::array<int, 2>{layout_.rank(t, j, from), layout_.rank(t, j, to)}; });
    pair_groups_.emplace(key, id);
    return id;
  }

  /// The block of `kind` for a micro-batch; `layer` says whether an attention block attends locally.
  std::uint32_t block(BlockKind kind, Recompute r, int micro_batch, int layer = -1) {
    const bool local = kind == BlockKind::attention && layer >= 0 && m_.local_attention_layer(layer);
    const auto key = std::make_tuple(static_cast<int>(kind), static_cast<int>(r), micro_batch, local);
    auto it = block_index_.find(key);
    if (it != block_index_.end()) return it->second;
    BlockShape shape = shape_of(micro_batch, r);
    shape.local = local;
    Block b;
    switch (kind) {
      case BlockKind::embedding: b = embedding_block(m_, tr_, shape); break;
      case BlockKind::attention: b = attention_block(m_, tr_, shape); break;
      case BlockKind::mlp: b = mlp_block(m_, tr_, shape); break;
      case BlockKind::head: b = head_block(m_, tr_, shape); break;
      case BlockKind::router: b = router_block(m_, tr_, shape); break;
      case BlockKind::experts: b = experts_block(m_, tr_, shape); break;
      case BlockKind::shared_experts: b = shared_experts_block(m_, tr_, shape); break;
      case BlockKind::mtp_projection: b = mtp_projection_block(m_, tr_, shape); break;
      case BlockKind::optimizer: break;
    }
    const auto id = static_cast<std::uint32_t>(g_.blocks.size());
    g_.blocks.push_back(std::move(b));
    block_index_.emplace(key, id);
    return id;
  }

  BlockShape shape_of(int micro_batch, Recompute r) const {
    return block_shape(p_, tr_.seq_len, micro_batch, r);
  }

  Task compute(int stage, Phase phase, std::uint32_t blk, int mb, int chunk, int layer) const {
    Task t;
    t.kind = TaskKind::compute;
    t.stream = Stream::compute;
    t.phase = phase;
    t.stage = stage;
    t.block = blk;
    t.microbatch = mb;
    t.chunk = chunk;
    t.layer = layer;
    return t;
  }

  Task collective(int stage, Phase phase, Collective c, CommDim dim, Stream stream, double bytes, std::uint32_t grp, int mb, int chunk,
                  int layer) const {
    Task t;
    t.kind = TaskKind::collective;
    t.phase = phase;
    t.stream = stream;
    t.collective = c;
    t.dim = dim;
    t.stage = stage;
    t.bytes = bytes;
    t.group = grp;
    t.microbatch = mb;
    t.chunk = chunk;
    t.layer = layer;
    return t;
  }

  int micro_size(int mb) const { return mb == micro_ - 1 ? p_.last_micro_batch() : p_.micro_batch; }
  /// The b·s·h activation of a micro-batch on this rank (its s/cp tokens under context parallelism).
  double activation_tensor(int mb) const { return tr_.element_bytes() * micro_size(mb) * tr_.seq_len * m_.hidden / p_.cp; }
  std::size_t slot(int chunk, int mb) const { return static_cast<std::size_t>(chunk * micro_ + mb); }

  // --- tensor parallelism around a block ---------------------------------------------------------
  // Forward: without SP an all-reduce after the block; with SP an all-gather before and a
  // reduce-scatter after. Returns the id that the next task must wait for.
  std::int64_t tp_before(int stage, Phase phase, int mb, int chunk, int layer, std::int64_t prev) {
    if (p_.tp == 1 || !p_.sp) return prev;
    auto t = collective(stage, phase, Collective::all_gather, CommDim::tp, Stream::tp_comm, activation_tensor(mb), tp_group_[stage], mb, chunk, layer);
    t.pipelined = p_.overlap.tp_comm;
    return add(t, {prev});
  }
  std::int64_t tp_after(int stage, Phase phase, int mb, int chunk, int layer, std::int64_t prev) {
    if (p_.tp == 1) return prev;
    auto t = collective(stage, phase, p_.sp ? Collective::reduce_scatter : Collective::all_reduce, CommDim::tp, Stream::tp_comm,
                        activation_tensor(mb), tp_group_[stage], mb, chunk, layer);
    t.pipelined = p_.overlap.tp_comm;
    return add(t, {prev});
  }

  // One block forward (or recompute): TP in, compute (with CP around attention), TP out.
  std::int64_t block_forward(int stage, Phase phase, BlockKind kind, Recompute r, int mb, int chunk, int layer, std::int64_t prev) {
    prev = tp_before(stage, phase, mb, chunk, layer, prev);
    const Task t = compute(stage, phase, block(kind, r, micro_size(mb), layer), mb, chunk, layer);
    prev = kind == BlockKind::attention ? attention_compute(t, prev) : add(t, {prev});
    return tp_after(stage, phase, mb, chunk, layer, prev);
  }

  // --- context parallelism around an attention block (see the header) -------------------------
  // Adds the attention compute task `t` after `prev` with its CP communication; returns the task
  // whose completion (with its output_also_needs_) makes the block's output ready.
  std::int64_t attention_compute(const Task& t, std::int64_t prev) {
    if (p_.cp == 1) return add(t, {prev});
    const bool backward = t.phase == Phase::backward_input;
    const int mb = t.microbatch;
    const double e = tr_.element_bytes(), tokens = static_cast<double>(micro_size(mb)) * tr_.seq_len / p_.cp;
    const double q = e * tokens * m_.q_width() / p_.tp, kv = e * tokens * m_.kv_width() / p_.tp;
    auto transfer = [&](Collective c, double bytes, std::uint32_t grp, std::initializer_list<std::int64_t> deps, bool stream_order = true) {
      return static_cast<std::int64_t>(
          add(collective(t.stage, t.phase, c, CommDim::cp, Stream::cp_comm, bytes, grp, mb, t.chunk, t.layer), deps, stream_order));
    };
    if (p_.cp_kind == CpKind::ulysses) {
      const auto grp = cp_a2a_group_[static_cast<std::size_t>(t.stage)];
      // Forward: q, k, v in, the output out. Backward: dO in; dq, dk, dv out.
      std::int64_t in = transfer(Collective::all_to_all, q, grp, {prev});
      if (!backward) {
        in = transfer(Collective::all_to_all, kv, grp, {in});
        in = transfer(Collective::all_to_all, kv, grp, {in});
      }
      const auto id = static_cast<std::int64_t>(add(t, {prev, in}));
      std::int64_t out = transfer(Collective::all_to_all, q, grp, {id});
      if (backward) {
        out = transfer(Collective::all_to_all, kv, grp, {out});
        out = transfer(Collective::all_to_all, kv, grp, {out});
      }
      return out;
    }
    // Ring: per step the rank's two chunks of tokens/2 each travel, K and V of a chunk being
    // 2·e·(tokens/2)·(kv width/t) = `kv` bytes (in backward the same for dK and dV).
    const auto grp = cp_ring_group_[static_cast<std::size_t>(t.stage)];
    using Step = std::pair<std::int64_t, std::int64_t>;
    auto step = [&](Step after, Step also) {
      // The chunk pair travels together: the second is not ordered behind the first on the stream.
      const auto a = transfer(Collective::send_recv, kv, grp, {after.first, after.second, also.first, also.second});
      const auto b = transfer(Collective::send_recv, kv, grp, {after.first, after.second, also.first, also.second}, false);
      return Step{a, b};
    };
    const Step none{kNone, kNone};
    Step kv_step = step({prev, kNone}, none);
    const auto id = static_cast<std::int64_t>(add(t, {prev, kv_step.first, kv_step.second}));
    // Steps 2 .. cp − 1 overlap the compute. In backward the dK+dV of step k's chunks follow once
    // that step's K+V arrived (the partial compute between is folded into the block's one task).
    Step grad_step = none;
    for (int k = 2; k <= p_.cp; ++k) {
      const Step arrived = kv_step;
      if (k < p_.cp) kv_step = step(kv_step, none);
      if (backward) grad_step = step(arrived, grad_step);
    }
    auto& also = output_also_needs_[id];
    also = {kv_step.first, kv_step.second};
    if (backward) {
      also.push_back(grad_step.first);
      also.push_back(grad_step.second);
    }
    return id;
  }

  // One block backward: input gradients, their TP reduction, weight gradients. With SP the
  // gradient arrives all-gathered and leaves reduce-scattered, and the block's input is gathered
  // again for the weight gradients (Megatron-LM overlaps that with the input gradients).
  std::int64_t block_backward(int stage, BlockKind kind, Recompute r, int mb, int chunk, int layer, std::int64_t prev,
                              std::int64_t* weight_task) {
    const auto blk = block(kind, r, micro_size(mb), layer);
    const bool gather_input = p_.tp > 1 && p_.sp && kind != BlockKind::embedding;
    if (gather_input) {
      prev = add(collective(stage, Phase::backward_input, Collective::all_gather, CommDim::tp, Stream::tp_comm, activation_tensor(mb),
                            tp_group_[stage], mb, chunk, layer),
                 {prev});
    }
    // Megatron-LM launches the re-gather of the block's input before the input-gradient GEMMs, so it
    // runs under them, and the reduce-scatter of the input gradient after them, under the weight
    // gradients: on the one TP stream the re-gather goes first. (A schedule that defers the weight
    // gradients gathers in its W step.)
    std::int64_t regathered = kNone;
    if (gather_input && !defer_weights_) regathered = waited_one_kernel_later(input_regather(stage, mb, chunk, layer, prev));
    std::int64_t out = prev;
    // The QKV weight gradient needs dQ, dK and dV back in the rank's sequence layout: after the
    // context-parallel exchange of the attention backward.
    std::int64_t cp_grads = kNone;
    // Without the asynchronous all-reduce (2021 stacks) autograd reaches the reduction after the
    // block's whole backward: it waits for the weight gradients, and the next kernel for it.
    const bool reduce_after_weights = p_.tp > 1 && !p_.sp && !tr_.async_tp_allreduce && kind != BlockKind::head && !defer_weights_;
    std::int64_t input_grads = kNone;
    if (!g_.blocks[blk].backward_input.empty()) {
      const Task t = compute(stage, Phase::backward_input, blk, mb, chunk, layer);
      out = input_grads = kind == BlockKind::attention ? attention_compute(t, prev) : add(t, {prev});
      if (kind == BlockKind::attention && p_.cp > 1) cp_grads = out;
      if (p_.tp > 1 && kind != BlockKind::head && !reduce_after_weights) {
        out = add(collective(stage, Phase::backward_input, p_.sp ? Collective::reduce_scatter : Collective::all_reduce, CommDim::tp,
                             Stream::tp_comm, activation_tensor(mb), tp_group_[stage], mb, chunk, layer),
                  {out});
        if (!defer_weights_) waited_one_kernel_later(static_cast<std::uint32_t>(out));
      }
    }
    const auto w = weight_or_defer({compute(stage, Phase::backward_weight, blk, mb, chunk, layer), prev, cp_grads, gather_input, regathered});
    if (weight_task) *weight_task = w;
    if (reduce_after_weights && input_grads != kNone) {
      out = add(collective(stage, Phase::backward_input, Collective::all_reduce, CommDim::tp, Stream::tp_comm, activation_tensor(mb),
                           tp_group_[stage], mb, chunk, layer),
                {input_grads, w});
    }
    return kind == BlockKind::embedding && w != kNone ? w : out;
  }

  // --- weight gradients: right after their input gradients, or (ZB-H1) in the W step ------------
  struct PendingWeight {
    Task task;                    // the backward_weight compute task
    std::int64_t after = kNone;   // the gradient reaching the block
    std::int64_t also = kNone;    // what else it needs (the CP exchange of dQ, dK, dV)
    bool gather_input = false;    // with SP the block's input is all-gathered over TP again
    std::int64_t gathered = kNone;  // that all-gather, where already issued
  };
  // The W tasks of one layer (layer -1: the embedding and the head), in backward order.
  struct WeightGroup {
    int layer = -1;
    std::vector<PendingWeight> weights;
  };

  /// With SP, the all-gather of a block's input again for its weight gradients.
  std::int64_t input_regather(int stage, int mb, int chunk, int layer, std::int64_t after) {
    return add(collective(stage, Phase::backward_weight, Collective::all_gather, CommDim::tp, Stream::tp_comm, activation_tensor(mb),
                          tp_group_[static_cast<std::size_t>(stage)], mb, chunk, layer),
               {after});
  }

  std::int64_t emit_weight(const PendingWeight& w) {
    std::int64_t gathered = w.gathered;
    if (w.gather_input && gathered == kNone) gathered = input_regather(w.task.stage, w.task.microbatch, w.task.chunk, w.task.layer, w.after);
    return add(w.task, {w.after, gathered, w.also});
  }

  // The W task's id, or kNone when the schedule defers it to its W step.
  std::int64_t weight_or_defer(const PendingWeight& w) {
    if (!defer_weights_) return emit_weight(w);
    auto& groups = pending_weights_[slot(w.task.chunk, w.task.microbatch)];
    if (groups.empty() || groups.back().layer != w.task.layer) groups.push_back({w.task.layer, {}});
    groups.back().weights.push_back(w);
    return kNone;
  }

  // ZB-H1's W step of a (chunk, micro-batch): every deferred W task, and each layer's gradients
  // ready for the data-parallel reduction once its W's are done.
  void weight_step(int stage, int chunk, int mb) {
    auto& groups = pending_weights_[slot(chunk, mb)];
    for (const auto& group : groups) {
      std::int64_t last = kNone;
      for (const auto& w : group.weights) last = std::max(last, emit_weight(w));
      if (group.layer >= 0 && reduces_gradients(stage, chunk, mb)) gradient_ready(stage, group.layer, mb, last);
    }
    groups.clear();
  }

  // --- a stage's compute in schedule order -----------------------------------------------------
  int model_chunk(int stage, const ScheduleStep& step) const {
    return stage_chunks_[static_cast<std::size_t>(stage)][static_cast<std::size_t>(step.chunk)];
  }
  /// Whether a micro-batch's backward (or weight step) is the stage's last of the chunk: replicated
  /// and ZeRO-1 gradients are reduced once, after it.
  bool last_gradients(int stage, int chunk, int mb) const {
    return last_gradient_mb_[static_cast<std::size_t>(stage * p_.chunks() + chunk)] == mb;
  }
  /// Whether the micro-batch's forward is the stage's first of the chunk.
  bool first_forward(int stage, int chunk, int mb) const {
    return first_forward_mb_[static_cast<std::size_t>(stage * p_.chunks() + chunk)] == mb;
  }
  /// Whether a layer's gradient is reduced after this micro-batch: every micro-batch under ZeRO-2
  /// and ZeRO-3, except where the stage holds its gradients for the step (workload/zero3.hpp).
  bool reduces_gradients(int stage, int chunk, int mb) const {
    return (p_.zero >= 2 && !holds_stage_) || last_gradients(stage, chunk, mb);
  }

  void build_stage(int stage) {
    const auto& steps = schedule_[static_cast<std::size_t>(stage)];
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const auto& step = steps[i];
      const int chunk = model_chunk(stage, step);
      if (step.pass == Pass::forward && step.overlaps_next && i + 1 < steps.size()) {
        // The pair starts once both inputs are there (DualPipe's runtime receives both, then runs).
        const auto& b = steps[i + 1];
        paired_forward_.emplace(slot(model_chunk(stage, b), b.microbatch), slot(chunk, step.microbatch));
        if (p_.overlap.ep_comm) {
          paired_step(stage, chunk, step.microbatch, b);
          ++i;
        } else {
          forward_step(stage, chunk, step.microbatch);
        }
      } else if (step.pass == Pass::forward) {
        forward_step(stage, chunk, step.microbatch);
      } else if (step.pass == Pass::backward) {
        backward_step(stage, chunk, step.microbatch, step.defers_weight);
      } else {
        weight_step(stage, chunk, step.microbatch);
      }
    }
  }

  // --- a forward and a backward as one step (F&B) ------------------------------------------------
  // The forward is built on lane 0 and the backward on lane 1, each with streams of its own (so one's
  // all-to-alls can run while the other computes), then their compute is interleaved on the one
  // compute stream, segment by segment, a segment ending where its lane waits on an expert
  // all-to-all: the forward's attention while the backward's combine-gradient travels, the
  // backward's MLP gradients while the forward dispatches, and so on (Megatron-LM's combined 1F1B,
  // DualPipe's overlapped_forward_backward).
  void paired_step(int stage, int forward_chunk, int forward_mb, const ScheduleStep& b) {
    for (int stream = 0; stream < kStreams; ++stream) {
      const auto from = stream_key(stage, static_cast<Stream>(stream), 0), to = stream_key(stage, static_cast<Stream>(stream), 1);
      last_on_stream_[to] = last_on_stream_[from];
      stream_join_[to] = stream_join_[from];
    }
    segments_.assign(kLanes, {});
    segment_break_.assign(kLanes, true);
    pairing_ = true;
    lane_ = 0;
    forward_step(stage, forward_chunk, forward_mb);
    lane_ = 1;
    backward_step(stage, model_chunk(stage, b), b.microbatch, b.defers_weight);
    lane_ = 0;
    pairing_ = false;
    interleave_segments(stage);
  }

  void note_segment(std::uint32_t id) {
    auto& lane = segments_[static_cast<std::size_t>(lane_)];
    if (segment_break_[static_cast<std::size_t>(lane_)] || lane.empty()) lane.emplace_back();
    segment_break_[static_cast<std::size_t>(lane_)] = false;
    lane.back().push_back(id);
  }

  // Orders the two lanes' compute segments forward, backward, forward, ... on the compute stream and
  // joins the lanes' other streams, so the next step follows both.
  void interleave_segments(int stage) {
    std::vector<const std::vector<std::uint32_t>*> order;
    const auto& f = segments_[0];
    const auto& b = segments_[1];
    for (std::size_t k = 0; k < std::max(f.size(), b.size()); ++k) {
      if (k < f.size()) order.push_back(&f[k]);
      if (k < b.size()) order.push_back(&b[k]);
    }
    for (std::size_t k = 1; k < order.size(); ++k) edges_.emplace_back(order[k]->front(), order[k - 1]->back());
    for (int stream = 0; stream < kStreams; ++stream) {
      const auto mine = stream_key(stage, static_cast<Stream>(stream), 0), other = stream_key(stage, static_cast<Stream>(stream), 1);
      auto& last = last_on_stream_[mine];
      const auto lane1 = last_on_stream_[other];
      if (stream == static_cast<int>(Stream::compute)) {
        if (!order.empty()) last = order.back()->back();
      } else if (lane1 != kNone && lane1 != last) {
        stream_join_[mine] = std::min(last, lane1);
        last = std::max(last, lane1);
      }
      last_on_stream_[other] = kNone;
      stream_join_[other] = kNone;
    }
    auto& pending = tp_unwaited_[static_cast<std::size_t>(stage * kLanes)];
    auto& other = tp_unwaited_[static_cast<std::size_t>(stage * kLanes + 1)];
    pending.insert(pending.end(), other.begin(), other.end());
    other.clear();
  }

  // FSDP gathers a layer's parameters before its forward and again before its backward, every
  // micro-batch, on its own stream ahead of the compute, one layer ahead: the gather of the next
  // layer is issued when the current layer starts (FSDP's forward/backward prefetch with its
  // all-gather rate limit; DeepSpeed's prefetch bucket is smaller than a layer of a large model), so
  // `issued_after` is the current layer's first compute task, kNone for the first layer of a pass.
  // A MoE layer's experts are gathered over their own (expert-data-parallel) group, after the rest.
  std::int64_t zero3_gather(int stage, Phase phase, int mb, int chunk, int layer, std::int64_t issued_after) {
    if (p_.zero < 3) return kNone;
    const auto& params = layer_params_[static_cast<std::size_t>(layer)];
    // FSDP gathers the layer at once; DeepSpeed a module at a time, in order (workload/zero3.hpp).
    // A MoE layer's dense part goes at once under either.
    std::int64_t id = kNone;
    for (double share : m_.moe_layer(layer) ? std::vector<double>{1.0} : zero3_shares_) {
      id = add(collective(stage, phase, Collective::all_gather, CommDim::dp, Stream::dp_comm, params.dense * share * tr_.weight_bytes(),
                          sharding_group_[stage], mb, chunk, layer),
               {id == kNone ? issued_after : id});
    }
    if (params.expert > 0) {
      id = add(collective(stage, phase, Collective::all_gather, CommDim::dp, Stream::dp_comm, params.expert * tr_.weight_bytes(),
                          expert_dp_group_[stage], mb, chunk, layer),
               {});
    }
    return id;
  }

  // Selective recompute ahead of a layer's backward: what each block reruns (workload/ops.hpp). A
  // module Megatron-Core checkpoints whole reruns with its collectives (the MLP's and the shared
  // experts' TP, the MoE part's all-to-alls), the attention core with its context-parallel
  // exchange; an output-discarding checkpoint (and torchtitan's op-level policy) reruns compute only.
  std::int64_t selective_recompute(int stage, int mb, int chunk, int l, std::int64_t prev) {
    constexpr Recompute r = Recompute::selective;
    const bool modules = recomputes_by_module(m_, tr_);
    const auto& rerun = p_.recompute_modules;
    auto rerun_compute = [&](BlockKind kind, int layer) {
      const auto id = block(kind, r, micro_size(mb), layer);
      if (g_.blocks[id].recompute.empty()) return;
      const Task t = compute(stage, Phase::recompute, id, mb, chunk, l);
      prev = kind == BlockKind::attention && modules && rerun.has(RecomputeModule::core_attn) ? attention_compute(t, prev) : add(t, {prev});
    };
    rerun_compute(BlockKind::attention, l);
    if (!m_.moe_layer(l)) {
      if (modules && rerun.has(RecomputeModule::mlp)) return block_forward(stage, Phase::recompute, BlockKind::mlp, r, mb, chunk, l, prev);
      rerun_compute(BlockKind::mlp, -1);
      return prev;
    }
    if (!modules) return prev;
    if (rerun.has(RecomputeModule::moe)) return moe_forward(stage, Phase::recompute, r, mb, chunk, l, prev);
    rerun_compute(BlockKind::router, -1);
    rerun_compute(BlockKind::experts, -1);
    if (m_.shared_experts > 0 && rerun.has(RecomputeModule::shared_experts)) {
      prev = block_forward(stage, Phase::recompute, BlockKind::shared_experts, r, mb, chunk, l, prev);
    }
    return prev;
  }

  // --- mixture of experts (workload/moe_ops.hpp) -----------------------------------------------
  // Forward (or recompute) of a MoE layer's MLP part: router, dispatch all-to-all over the EP group
  // and all-gather over the etp ranks, experts, reduce-scatter and combine all-to-all, then the
  // shared experts as a tensor-parallel MLP.
  std::int64_t moe_forward(int stage, Phase phase, Recompute r, int mb, int chunk, int layer, std::int64_t prev) {
    const double bytes = dispatch_bytes(m_, tr_, shape_of(micro_size(mb), r));
    const int etp = p_.expert_tp();
    prev = add(compute(stage, phase, block(BlockKind::router, r, micro_size(mb)), mb, chunk, layer), {prev});
    prev = expert_exchange(stage, phase, Collective::all_to_all, bytes, mb, chunk, layer, prev);
    // All-gather: the output, etp ranks' received copies.
    if (etp > 1) prev = add(collective(stage, phase, Collective::all_gather, CommDim::tp, Stream::tp_comm, etp * bytes, etp_group_[stage], mb, chunk, layer), {prev});
    prev = add(compute(stage, phase, block(BlockKind::experts, r, micro_size(mb)), mb, chunk, layer), {prev});
    if (etp > 1) {
      prev = add(collective(stage, phase, Collective::reduce_scatter, CommDim::tp, Stream::tp_comm, etp * bytes, etp_group_[stage], mb, chunk, layer), {prev});
    }
    prev = expert_exchange(stage, phase, Collective::all_to_all, bytes, mb, chunk, layer, prev);
    if (m_.shared_experts > 0) prev = block_forward(stage, phase, BlockKind::shared_experts, r, mb, chunk, layer, prev);
    return prev;
  }

  // The dispatch or the combine: an all-to-all of the rank's routed token copies over the EP group.
  std::int64_t expert_exchange(int stage, Phase phase, Collective c, double bytes, int mb, int chunk, int layer, std::int64_t prev) {
    if (p_.ep == 1) return prev;
    return add(collective(stage, phase, c, CommDim::ep, Stream::ep_comm, bytes, ep_group_[stage], mb, chunk, layer), {prev});
  }

  // Backward: the shared experts (as an MLP), the combine's gradient back to the expert ranks, the
  // experts' input gradients, the dispatch's gradient back, the router's. Weight gradients of each
  // block wait for the gradient that reaches it. `weights` collects the weight-gradient tasks.
  std::int64_t moe_backward(int stage, Recompute r, int mb, int chunk, int layer, std::int64_t prev, std::vector<std::int64_t>& weights) {
    const double bytes = dispatch_bytes(m_, tr_, shape_of(micro_size(mb), r));
    const int etp = p_.expert_tp();
    std::int64_t w = kNone;
    // With the all-to-all overlap the combine's gradient leaves first and the shared experts'
    // backward runs while it travels (Megatron-LM's combined 1F1B: combine backward, then the MLP
    // backward of the routed and shared experts); otherwise autograd runs the shared experts' first.
    std::int64_t shared_out = kNone;
    if (m_.shared_experts > 0 && !p_.overlap.ep_comm) {
      prev = block_backward(stage, BlockKind::shared_experts, r, mb, chunk, layer, prev, &w);
      weights.push_back(w);
    }
    const std::int64_t incoming = prev;
    prev = expert_exchange(stage, Phase::backward_input, Collective::all_to_all, bytes, mb, chunk, layer, prev);
    if (m_.shared_experts > 0 && p_.overlap.ep_comm) {
      shared_out = block_backward(stage, BlockKind::shared_experts, r, mb, chunk, layer, incoming, &w);
      weights.push_back(w);
    }
    if (etp > 1) {
      prev = add(collective(stage, Phase::backward_input, Collective::all_gather, CommDim::tp, Stream::tp_comm, etp * bytes, etp_group_[stage], mb, chunk,
                            layer),
                 {prev});
    }
    const auto experts = block(BlockKind::experts, r, micro_size(mb));
    const auto into_experts = prev;
    prev = add(compute(stage, Phase::backward_input, experts, mb, chunk, layer), {prev});
    weights.push_back(weight_or_defer({compute(stage, Phase::backward_weight, experts, mb, chunk, layer), into_experts}));
    if (etp > 1) {
      prev = add(collective(stage, Phase::backward_input, Collective::reduce_scatter, CommDim::tp, Stream::tp_comm, etp * bytes, etp_group_[stage], mb,
                            chunk, layer),
                 {prev});
    }
    prev = expert_exchange(stage, Phase::backward_input, Collective::all_to_all, bytes, mb, chunk, layer, prev);
    const auto router = block(BlockKind::router, r, micro_size(mb));
    const auto into_router = prev;
    prev = add(compute(stage, Phase::backward_input, router, mb, chunk, layer), {prev, shared_out});
    weights.push_back(weight_or_defer({compute(stage, Phase::backward_weight, router, mb, chunk, layer), into_router}));
    return prev;
  }

  void forward_step(int stage, int chunk, int mb) {
    const bool first_chunk = chunk == 0, last_chunk = chunk == p_.chunks() - 1;
    std::int64_t prev = kNone;
    std::int64_t in = kNone;
    if (first_chunk) {
      prev = add(compute(stage, Phase::forward, block(BlockKind::embedding, Recompute::none, micro_size(mb)), mb, chunk, -1), {});
      in = prev;
      if (p_.tp > 1) {
        prev = add(collective(stage, Phase::forward, p_.sp ? Collective::reduce_scatter : Collective::all_reduce, CommDim::tp, Stream::tp_comm,
                              activation_tensor(mb), tp_group_[stage], mb, chunk, -1),
                   {prev});
      }
    }
    const int first = first_[static_cast<std::size_t>(chunk)];
    std::int64_t previous_layer = kNone;  // first compute task of the layer before
    for (int l = first; l < first + sizes_[static_cast<std::size_t>(chunk)]; ++l) {
      const Recompute r = recompute_[static_cast<std::size_t>(l)];
      const bool gather = !holds_stage_ || first_forward(stage, chunk, mb);
      const auto gathered = gather ? zero3_gather(stage, Phase::forward, mb, chunk, l, previous_layer) : kNone;
      const auto before = g_.tasks.size();
      previous_layer = static_cast<std::int64_t>(before);
      prev = block_forward(stage, Phase::forward, BlockKind::attention, r, mb, chunk, l, prev);
      // The block's first task also waits for its gathered parameters.
      if (gathered != kNone) edges_.emplace_back(static_cast<std::uint32_t>(before), static_cast<std::uint32_t>(gathered));
      if (in == kNone) in = static_cast<std::int64_t>(before);
      layer_first_forward_.emplace(std::make_pair(stage, l), static_cast<std::int64_t>(before));
      prev = m_.moe_layer(l) ? moe_forward(stage, Phase::forward, r, mb, chunk, l, prev)
                             : block_forward(stage, Phase::forward, BlockKind::mlp, r, mb, chunk, l, prev);
    }
    if (last_chunk) {
      // A last chunk that holds the head alone starts with it.
      if (in == kNone) in = static_cast<std::int64_t>(g_.tasks.size());
      prev = head_forward(stage, mb, chunk, prev);
      for (int k = 0; k < m_.mtp_layers; ++k) prev = mtp_forward(stage, mb, chunk, prev);
    }
    fwd_in_[slot(chunk, mb)] = in;
    fwd_out_[slot(chunk, mb)] = prev;
  }

  std::int64_t head_forward(int stage, int mb, int chunk, std::int64_t prev) {
    prev = tp_before(stage, Phase::forward, mb, chunk, -1, prev);
    prev = add(compute(stage, Phase::forward, block(BlockKind::head, Recompute::none, micro_size(mb)), mb, chunk, -1), {prev});
    // Vocabulary-parallel cross-entropy: all-reduces of the max and the sum of exponentials (fp32)
    // of this rank's tokens.
    if (p_.tp > 1) {
      prev = add(collective(stage, Phase::forward, Collective::all_reduce, CommDim::tp, Stream::tp_comm, 2.0 * 4.0 * micro_size(mb) * tr_.seq_len / p_.cp,
                            tp_group_[stage], mb, chunk, -1),
                 {prev});
    }
    return prev;
  }

  std::int64_t head_backward(int stage, int mb, int chunk, std::int64_t prev) {
    prev = block_backward(stage, BlockKind::head, Recompute::none, mb, chunk, -1, prev, nullptr);
    if (p_.tp > 1) {
      prev = add(collective(stage, Phase::backward_input, p_.sp ? Collective::reduce_scatter : Collective::all_reduce, CommDim::tp, Stream::tp_comm,
                            activation_tensor(mb), tp_group_[stage], mb, chunk, -1),
                 {prev});
    }
    return prev;
  }

  // --- multi-token prediction (DeepSeek-V3) on the last chunk -----------------------------------
  // A module: its entry projection, one layer shaped like the model's last (attention and its MLP or
  // MoE, without recompute) and the head again. The layer's tasks carry the last layer's index for
  // its shape; its weights are among the stage's weights outside the layers (gradients in the last
  // bucket, not gathered layer by layer under ZeRO-3).
  std::int64_t mtp_forward(int stage, int mb, int chunk, std::int64_t prev) {
    const int l = m_.layers - 1;
    const auto none = Recompute::none;
    prev = block_forward(stage, Phase::forward, BlockKind::mtp_projection, none, mb, chunk, -1, prev);
    prev = block_forward(stage, Phase::forward, BlockKind::attention, none, mb, chunk, l, prev);
    prev = m_.moe_layer(l) ? moe_forward(stage, Phase::forward, none, mb, chunk, l, prev) : block_forward(stage, Phase::forward, BlockKind::mlp, none, mb, chunk, l, prev);
    return head_forward(stage, mb, chunk, prev);
  }

  std::int64_t mtp_backward(int stage, int mb, int chunk, std::int64_t prev) {
    const int l = m_.layers - 1;
    const auto none = Recompute::none;
    prev = head_backward(stage, mb, chunk, prev);
    std::vector<std::int64_t> weights(1, kNone);
    prev = m_.moe_layer(l) ? moe_backward(stage, none, mb, chunk, l, prev, weights) : block_backward(stage, BlockKind::mlp, none, mb, chunk, l, prev, nullptr);
    prev = block_backward(stage, BlockKind::attention, none, mb, chunk, l, prev, nullptr);
    return block_backward(stage, BlockKind::mtp_projection, none, mb, chunk, -1, prev, nullptr);
  }

  void backward_step(int stage, int chunk, int mb, bool defer_weights) {
    defer_weights_ = defer_weights;
    const bool first_chunk = chunk == 0, last_chunk = chunk == p_.chunks() - 1;
    // Backward starts after this micro-batch's forward of the chunk.
    std::int64_t prev = fwd_out_[slot(chunk, mb)];
    std::int64_t in = kNone;
    auto note_in = [&]() {
      if (in == kNone) in = static_cast<std::int64_t>(g_.tasks.size());
    };
    if (last_chunk) {
      note_in();
      for (int k = 0; k < m_.mtp_layers; ++k) prev = mtp_backward(stage, mb, chunk, prev);
      prev = head_backward(stage, mb, chunk, prev);
    }
    const int first = first_[static_cast<std::size_t>(chunk)];
    std::int64_t previous_layer = kNone;  // first compute task of the layer after (backward runs down)
    std::int64_t prefetched = kNone;      // this layer's gather, issued during the layer after (post, pre)
    const bool prefetch = p_.zero == 3 && !holds_stage_ && tr_.zero3_engine == Zero3Engine::fsdp && tr_.zero3_backward_prefetch != Zero3Prefetch::none;
    for (int l = first + sizes_[static_cast<std::size_t>(chunk)] - 1; l >= first; --l) {
      const Recompute r = recompute_[static_cast<std::size_t>(l)];
      note_in();
      // Without prefetch a layer's gather is issued when its backward is reached, so on the one
      // collective stream it queues behind the reduce-scatter of the layer after.
      const auto gathered = prefetched != kNone || holds_stage_ ? prefetched : zero3_gather(stage, Phase::backward_input, mb, chunk, l, previous_layer);
      prefetched = kNone;
      const auto first_of_layer = g_.tasks.size();
      previous_layer = static_cast<std::int64_t>(first_of_layer);
      std::int64_t regathered = kNone;  // DeepSpeed: the layer gathered again after its recompute released it
      std::size_t first_backward = first_of_layer;
      if (r == Recompute::full) {
        prev = block_forward(stage, Phase::recompute, BlockKind::attention, r, mb, chunk, l, prev);
        prev = m_.moe_layer(l) ? moe_forward(stage, Phase::recompute, r, mb, chunk, l, prev)
                               : block_forward(stage, Phase::recompute, BlockKind::mlp, r, mb, chunk, l, prev);
        if (tr_.zero3_engine == Zero3Engine::deepspeed) {
          regathered = zero3_gather(stage, Phase::backward_input, mb, chunk, l, static_cast<std::int64_t>(first_of_layer));
          first_backward = g_.tasks.size();
        }
      } else if (r == Recompute::selective) {
        prev = selective_recompute(stage, mb, chunk, l, prev);
      }
      std::vector<std::int64_t> weights(1, kNone);
      if (m_.moe_layer(l)) {
        prev = moe_backward(stage, r, mb, chunk, l, prev, weights);
      } else {
        prev = block_backward(stage, BlockKind::mlp, r, mb, chunk, l, prev, &weights[0]);
      }
      std::int64_t w_attn = kNone;
      prev = block_backward(stage, BlockKind::attention, r, mb, chunk, l, prev, &w_attn);
      if (gathered != kNone) edges_.emplace_back(static_cast<std::uint32_t>(first_of_layer), static_cast<std::uint32_t>(gathered));
      if (regathered != kNone) edges_.emplace_back(static_cast<std::uint32_t>(first_backward), static_cast<std::uint32_t>(regathered));
      const std::int64_t gradients = std::max(w_attn, *std::max_element(weights.begin(), weights.end()));
      // FSDP's backward prefetch queues the next layer's gather ahead of this layer's reduce-scatter:
      // issued once this layer's gradients are computed (post) or as its backward starts (pre).
      if (prefetch && l > first) {
        const std::int64_t issued_after = tr_.zero3_backward_prefetch == Zero3Prefetch::pre ? static_cast<std::int64_t>(first_of_layer) : gradients;
        prefetched = zero3_gather(stage, Phase::backward_input, mb, chunk, l - 1, issued_after);
      }
      if (!defer_weights_ && !holds_stage_ && reduces_gradients(stage, chunk, mb)) gradient_ready(stage, l, mb, gradients);
    }
    if (first_chunk) {
      // A first chunk that holds the embedding alone starts its backward with it.
      note_in();
      prev = block_backward(stage, BlockKind::embedding, Recompute::none, mb, chunk, -1, prev, nullptr);
    }
    // A held stage reduce-scatters the chunk's layers once its last backward is done.
    if (!defer_weights_ && holds_stage_ && reduces_gradients(stage, chunk, mb)) {
      for (int l = first + sizes_[static_cast<std::size_t>(chunk)] - 1; l >= first; --l) gradient_ready(stage, l, mb, prev);
    }
    bwd_in_[slot(chunk, mb)] = in;
    bwd_out_[slot(chunk, mb)] = prev;
  }

  // ZeRO-2 and ZeRO-3 reduce gradients every micro-batch; replicated and ZeRO-1 once, after the
  // last micro-batch.
  void gradient_ready(int stage, int layer, int mb, std::int64_t task) {
    if (p_.zero == 3) {
      const auto& params = layer_params_[static_cast<std::size_t>(layer)];
      // FSDP reduces a layer's flat gradient at once, DeepSpeed through its bucket (workload/zero3.hpp).
      const int pieces = zero3_reduce_scatters(tr_, params.dense);
      for (int i = 0; i < pieces; ++i) {
        add(collective(stage, Phase::backward_weight, Collective::reduce_scatter, CommDim::dp, Stream::dp_comm,
                       params.dense / pieces * tr_.gradient_bytes(), sharding_group_[stage], mb, -1, layer),
            {task});
      }
      if (params.expert > 0) {
        add(collective(stage, Phase::backward_weight, Collective::reduce_scatter, CommDim::dp, Stream::dp_comm, params.expert * tr_.gradient_bytes(),
                       expert_dp_group_[stage], mb, -1, layer),
            {task});
      }
      return;
    }
    ready_.push_back({stage, layer, mb, task});
  }

  // --- pipeline transfers ----------------------------------------------------------------------
  // Each micro-batch's path: chunk after chunk, on the stages chunk_stage() places them. Where two
  // consecutive chunks share a stage (the turn of a V) the output is handed over in place.
  void build_pipeline_transfers() {
    for (int chunk = 0; chunk + 1 < p_.chunks(); ++chunk) {
      for (int mb = 0; mb < micro_; ++mb) {
        const int from = chunk_stage(p_, chunk, mb), to = chunk_stage(p_, chunk + 1, mb);
        if (from == to) {
          edges_.emplace_back(static_cast<std::uint32_t>(fwd_in_[slot(chunk + 1, mb)]), static_cast<std::uint32_t>(fwd_out_[slot(chunk, mb)]));
          backward_input_arrives(chunk, mb, bwd_out_[slot(chunk + 1, mb)]);
          continue;
        }
        const auto grp = pair_group(from, to);
        const auto back = pair_group(to, from);
        // Megatron-LM sends e·s·b·h/t per TP rank (split by SP, or by its scatter-gather otherwise).
        const double bytes = activation_tensor(mb) / p_.tp;
        const auto f = add(collective(to, Phase::forward, Collective::send_recv, CommDim::pp, Stream::pp_comm, bytes, grp, mb, chunk + 1, -1),
                           {fwd_out_[slot(chunk, mb)]}, false);
        edges_.emplace_back(static_cast<std::uint32_t>(fwd_in_[slot(chunk + 1, mb)]), f);
        const auto b = add(collective(from, Phase::backward_input, Collective::send_recv, CommDim::pp, Stream::pp_comm, bytes, back, mb, chunk, -1),
                           {bwd_out_[slot(chunk + 1, mb)]}, false);
        backward_input_arrives(chunk, mb, b);
        if (p_.blocks_on_p2p()) {
          block_on_transfer(f, from, fwd_out_[slot(chunk, mb)], to, fwd_in_[slot(chunk + 1, mb)]);
          block_on_transfer(b, to, bwd_out_[slot(chunk + 1, mb)], from, bwd_in_[slot(chunk, mb)]);
        }
      }
    }
  }

  // The backward of (chunk, mb) waits for its gradient, and so does the forward paired with it.
  void backward_input_arrives(int chunk, int mb, std::int64_t gradient) {
    const auto g = static_cast<std::uint32_t>(gradient);
    edges_.emplace_back(static_cast<std::uint32_t>(bwd_in_[slot(chunk, mb)]), g);
    if (const auto it = paired_forward_.find(slot(chunk, mb)); it != paired_forward_.end()) {
      edges_.emplace_back(static_cast<std::uint32_t>(fwd_in_[it->second]), g);
    }
  }

  // Under 1F1B and GPipe (Plan::blocks_on_p2p) a transfer is a blocking send and receive, as
  // Megatron-LM's batched p2p and DeepSpeed's pipeline engine issue them: it moves only once the
  // receiver has posted its receive (after the receiver's compute before the chunk that needs it),
  // and the sender's next kernel waits until it is done.
  void block_on_transfer(std::uint32_t transfer, int sender, std::int64_t sent, int receiver, std::int64_t needed_by) {
    if (const auto posted = compute_before(receiver, needed_by); posted != kNone) edges_.emplace_back(transfer, static_cast<std::uint32_t>(posted));
    if (const auto next = compute_after(sender, sent); next != kNone) edges_.emplace_back(static_cast<std::uint32_t>(next), transfer);
  }

  // --- data-parallel gradient reduction, parameter gathering and the optimizer ------------------
  // Buckets of one kind of gradient (dense over the dp·cp ranks, or a MoE model's routed experts over
  // their expert-data-parallel ranks: Megatron-LM keeps them in separate buffers) fill in the order
  // gradients become ready; a bucket goes when its last gradient is ready (overlap.grad_reduce) or
  // when the stage's backward is done. `extra` (embedding, head, final norm) joins the last bucket.
  struct Ready {
    int stage, layer, microbatch;
    std::int64_t task;
  };

  void reduce_buckets(int stage, const std::vector<Ready>& mine, bool experts, double extra, std::uint32_t grp, Collective kind,
                      std::int64_t stage_end, std::vector<std::uint32_t>& done) {
    const double bucket = p_.gradient_bucket_params();
    double filled = 0;
    std::int64_t last_ready = kNone;
    int bucket_mb = -1;
    auto flush = [&](bool final_bucket) {
      if (filled <= 0) return;
      const double p_bucket = final_bucket ? filled + extra : filled;
      const auto dep = p_.overlap.grad_reduce || p_.zero == 2 ? last_ready : stage_end;
      done.push_back(add(collective(stage, Phase::backward_weight, kind, CommDim::dp, Stream::dp_comm, p_bucket * tr_.gradient_bytes(), grp,
                                    bucket_mb, -1, -1),
                         {dep}));
      filled = 0;
    };
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const auto& params = layer_params_[static_cast<std::size_t>(mine[i].layer)];
      const double layer = experts ? params.expert : params.dense;
      if (layer <= 0) continue;
      if (p_.zero == 2 && mine[i].microbatch != bucket_mb && filled > 0) flush(false);
      filled += layer;
      last_ready = mine[i].task;
      bucket_mb = mine[i].microbatch;
      const bool end_of_mb = i + 1 == mine.size() || mine[i + 1].microbatch != mine[i].microbatch;
      if (filled >= bucket || (p_.zero == 2 && end_of_mb)) flush(i + 1 == mine.size());
    }
    flush(true);
  }

  void build_gradient_sync(int stage) {
    const double params = stage_parameters(m_, p_, stage);
    const double expert_params = stage_expert_parameters(m_, p_, stage);
    const double dense_params = params - expert_params;
    const int zg = p_.sharding_group(), ezg = p_.expert_data_ranks();
    const bool sharded = p_.zero >= 1;
    std::vector<std::uint32_t> done;  // what the optimizer waits for
    const std::int64_t stage_end = last_on_stream_[stream_key(stage, Stream::compute, 0)];
    double layers_dense = 0;  // the stage's layers' dense parameters; the rest is embedding, head, final norm
    for (int c : stage_chunks_[static_cast<std::size_t>(stage)]) {
      for (int l = first_[static_cast<std::size_t>(c)]; l < first_[static_cast<std::size_t>(c)] + sizes_[static_cast<std::size_t>(c)]; ++l) {
        layers_dense += layer_params_[static_cast<std::size_t>(l)].dense;
      }
    }

    if (p_.zero < 3) {
      std::vector<Ready> mine;
      for (const auto& r : ready_) {
        if (r.stage == stage) mine.push_back(r);
      }
      std::stable_sort(mine.begin(), mine.end(), [](const Ready& a, const Ready& b) { return a.task < b.task; });
      const auto kind = gradient_reduction(p_.zero, tr_);
      if (p_.data_ranks() > 1) {
        reduce_buckets(stage, mine, false, dense_params - layers_dense, sharded ? sharding_group_[stage] : dp_group_[stage], kind, stage_end, done);
      }
      if (expert_params > 0 && ezg > 1) reduce_buckets(stage, mine, true, 0, expert_dp_group_[stage], kind, stage_end, done);
      if (p_.data_ranks() > 1 && p_.zero_group > 0 && p_.zero_group < p_.data_ranks()) {
        done.push_back(add(collective(stage, Phase::backward_weight, Collective::all_reduce, CommDim::dp, Stream::dp_comm,
                                      dense_params / zg * tr_.gradient_bytes(), replica_group_[stage], -1, -1, -1),
                           {}));
      }
    }
    if (p_.zero == 3 && p_.zero_group > 0 && p_.zero_group < p_.data_ranks()) {
      done.push_back(add(collective(stage, Phase::backward_weight, Collective::all_reduce, CommDim::dp, Stream::dp_comm,
                                    dense_params / zg * tr_.gradient_bytes(), replica_group_[stage], -1, -1, -1),
                         {stage_end}));
    }
    // DualPipe: each stage sums the gradients of its two chunks with its mirror's copies (what it
    // holds after the data-parallel reduction: a shard under ZeRO).
    if (const int mirror = mirror_stage(p_, stage); mirror >= 0) {
      std::vector<std::uint32_t> before = done;
      const double held_grads = p_.zero >= 1 ? dense_params / zg + expert_params / ezg : params;
      const auto sum = add(collective(stage, Phase::backward_weight, Collective::all_reduce, CommDim::pp, Stream::dp_comm, held_grads * tr_.gradient_bytes(),
                                      pair_group(std::min(stage, mirror), std::max(stage, mirror)), -1, -1, -1),
                           {stage_end});
      for (auto d : before) edges_.emplace_back(sum, d);
      done.push_back(sum);
    }
    // Tied embeddings split across the pipeline: the first and last stages sum their copies' grads
    // (not where one stage holds both: the V-shaped schedules' first, DualPipe's ends).
    const bool tied_apart = m_.tied_embeddings && p_.pp > 1 && !(holds_embedding(p_, stage) && holds_head(p_, stage));
    if (tied_apart && (stage == 0 || stage == p_.pp - 1)) {
      const double vocab_shard = static_cast<double>(padded_vocab(m_, p_.tp)) * m_.hidden / p_.tp;
      done.push_back(add(collective(stage, Phase::backward_weight, Collective::all_reduce, CommDim::pp, Stream::dp_comm,
                                    vocab_shard * tr_.gradient_bytes(), pair_group(0, p_.pp - 1), -1, -1,
                                    -1),
                         {stage_end}));
    }
    const double held = sharded ? dense_params / zg + expert_params / ezg : params;
    Block opt = optimizer_block(held, tr_);
    const auto blk = static_cast<std::uint32_t>(g_.blocks.size());
    g_.blocks.push_back(std::move(opt));
    Task t = compute(stage, Phase::optimizer, blk, -1, -1, -1);
    const auto optimizer = add(t, {stage_end});
    for (auto d : done) edges_.emplace_back(optimizer, d);
    // Sharded optimizer state: every rank gathers the updated parameters back, bucket by bucket in
    // forward order. Overlapped with the next forward (overlap.param_gather), which in the steady
    // state is this iteration's start: each layer's first forward waits for its bucket instead.
    // Routed experts are gathered over their own group in one piece after the optimizer.
    if (sharded && p_.zero < 3 && expert_params > 0 && ezg > 1) {
      add(collective(stage, Phase::optimizer, Collective::all_gather, CommDim::dp, Stream::dp_comm, expert_params * tr_.weight_bytes(),
                     expert_dp_group_[stage], -1, -1, -1),
          {optimizer});
    }
    if (sharded && p_.zero < 3 && p_.data_ranks() > 1) {
      if (!p_.overlap.param_gather) {
        add(collective(stage, Phase::optimizer, Collective::all_gather, CommDim::dp, Stream::dp_comm, dense_params * tr_.weight_bytes(),
                       sharding_group_[stage], -1, -1, -1),
            {optimizer});
        return;
      }
      const double bucket = p_.gradient_bucket_params();
      double filled = dense_params - layers_dense;  // embedding and head go first
      std::vector<std::int64_t> users;
      // NCCL runs one communicator's collectives in the order they were issued: the buckets' gathers
      // go one after another, the first layers' first, not all at once sharing the links.
      std::int64_t previous = kNone;
      auto flush = [&]() {
        if (filled <= 0) return;
        const auto gather = add(collective(stage, Phase::optimizer, Collective::all_gather, CommDim::dp, Stream::dp_comm,
                                           filled * tr_.weight_bytes(), sharding_group_[stage], -1, -1, -1),
                                {previous}, false);
        previous = gather;
        for (auto u : users) edges_.emplace_back(static_cast<std::uint32_t>(u), gather);
        users.clear();
        filled = 0;
      };
      for (int c : stage_chunks_[static_cast<std::size_t>(stage)]) {
        for (int l = first_[static_cast<std::size_t>(c)]; l < first_[static_cast<std::size_t>(c)] + sizes_[static_cast<std::size_t>(c)]; ++l) {
          filled += layer_params_[static_cast<std::size_t>(l)].dense;
          users.push_back(layer_first_forward_.at({stage, l}));
          if (filled >= bucket) flush();
        }
      }
      flush();
    }
  }

  // Each task's dependencies, ascending and once each. The edges are bucketed by task (a counting
  // sort: a graph has hundreds of thousands) and only each task's few are sorted.
  void finish_dependencies() {
    const std::size_t tasks = g_.tasks.size();
    std::vector<std::uint32_t> start(tasks + 1, 0), deps(edges_.size());
    for (const auto& [task, dep] : edges_) {
      if (task >= tasks) throw std::logic_error("task graph: a dependency of a task that does not exist");
      ++start[task + 1];
    }
    for (std::size_t t = 0; t < tasks; ++t) start[t + 1] += start[t];
    std::vector<std::uint32_t> at(start.begin(), start.end() - 1);
    for (const auto& [task, dep] : edges_) deps[at[task]++] = dep;
    g_.deps.reserve(edges_.size());
    for (std::uint32_t id = 0; id < tasks; ++id) {
      const auto first = deps.begin() + start[id], last = deps.begin() + start[id + 1];
      std::sort(first, last);
      g_.tasks[id].deps_begin = static_cast<std::uint32_t>(g_.deps.size());
      g_.deps.insert(g_.deps.end(), first, std::unique(first, last));
      g_.tasks[id].deps_end = static_cast<std::uint32_t>(g_.deps.size());
    }
  }

 public:
  void prepare_groups() {
    tp_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    dp_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    sharding_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    replica_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    cp_ring_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    cp_a2a_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    ep_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    etp_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    expert_dp_group_.assign(static_cast<std::size_t>(p_.pp), 0);
    const int zg = p_.sharding_group();
    const int data = p_.data_ranks();
    for (int s = 0; s < p_.pp; ++s) {
      // TP groups repeat at every data rank; DP groups (over dp·cp) for every TP rank; sharding
      // groups for every TP rank and every shard group; replica groups for every TP rank and
      // position in a shard.
      tp_group_[s] = group(layout_.tp_group(0, s), 1, data, [&](int, int j) { return layout_.tp_group(j, s); });
      dp_group_[s] = group(layout_.dp_group(0, s), p_.tp, 1, [&](int t, int) { return layout_.dp_group(t, s); });
      sharding_group_[s] = group(layout_.sharding_group(0, 0, s), p_.tp, data / zg,
                                 [&](int t, int j) { return layout_.sharding_group(t, j * zg, s); });
      replica_group_[s] = group(layout_.replica_group(0, 0, s), p_.tp, zg, [&](int t, int d) { return layout_.replica_group(t, d, s); });
      if (p_.cp > 1) {
        // Ring: one hop, rank c to c + 1, stands for every hop of every ring (both directions when
        // cp = 2). Ulysses: the CP group of every (tp, dp) position.
        const int cp = p_.cp;
        cp_ring_group_[s] = group({layout_.rank(0, 0, 0, s), layout_.rank(0, 1, 0, s)}, p_.tp, data, [&](int t, int j) {
          return std::vector<int>{layout_.rank(t, j % cp, j / cp, s), layout_.rank(t, (j % cp + 1) % cp, j / cp, s)};
        });
        cp_a2a_group_[s] = group(layout_.cp_group(0, 0, s), p_.tp, p_.dp, [&](int t, int d) { return layout_.cp_group(t, d, s); });
      }
      if (m_.is_moe()) {
        // EP groups for every TP rank and group of ep data ranks; etp groups for every group of
        // etp TP ranks and every data rank; expert-data-parallel groups for every expert shard.
        const int ep = p_.ep, etp = p_.expert_tp();
        ep_group_[s] = group(layout_.ep_group(0, 0, s, ep), p_.tp, data / ep, [&](int t, int i) { return layout_.ep_group(t, i * ep, s, ep); });
        etp_group_[s] = group(layout_.etp_group(0, 0, s, etp), p_.tp / etp, data,
                              [&](int i, int j) { return layout_.etp_group(i * etp, j, s, etp); });
        expert_dp_group_[s] = group(layout_.expert_dp_group(0, 0, s, ep, etp), etp, ep,
                                    [&](int t, int j) { return layout_.expert_dp_group(t, j, s, ep, etp); });
      }
    }
    for (int l = 0; l < m_.layers; ++l) layer_params_.push_back(layer_parameters(m_, p_, l));
    zero3_shares_ = zero3_gather_shares(m_, tr_);
  }

 private:

  const ModelSpec& m_;
  const TrainingSpec& tr_;
  const Plan& p_;
  RankLayout layout_;
  std::vector<int> sizes_, first_;
  std::vector<Recompute> recompute_;
  int micro_;
  TaskGraph g_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges_;  // (task, dependency)
  std::map<std::tuple<int, int, int, bool>, std::uint32_t> block_index_;
  std::map<std::vector<int>, std::uint32_t> group_index_;
  std::vector<std::int64_t> last_on_stream_;
  /// Per stage: synchronous TP collectives the compute stream has not waited for yet, each with the
  /// number of compute kernels that may still start before it must finish.
  std::vector<std::vector<std::pair<std::uint32_t, int>>> tp_unwaited_;
  std::vector<std::vector<std::uint32_t>> compute_order_;  ///< per stage: its compute tasks in issue order
  std::vector<double> zero3_shares_;  // of a dense layer's parameters, one per ZeRO-3 gather
  std::vector<std::int64_t> fwd_in_, fwd_out_, bwd_in_, bwd_out_;
  std::map<std::pair<int, int>, std::int64_t> layer_first_forward_;  // (stage, layer): its first forward task
  std::vector<std::vector<ScheduleStep>> schedule_;                   // per stage
  std::vector<std::vector<int>> stage_chunks_;                        // per stage: its model chunks
  std::vector<int> last_gradient_mb_;  // per (stage, chunk): the micro-batch whose backward ends its gradients
  std::vector<int> first_forward_mb_;  // per (stage, chunk): the micro-batch of its first forward
  std::map<std::pair<int, int>, std::uint32_t> pair_groups_;  // (from, to) stage: its point-to-point group
  bool holds_stage_ = false;           // ZeRO-3 holds the stage gathered for the step (workload/zero3.hpp)
  bool defer_weights_ = false;         // the backward being built defers its weight gradients
  std::unordered_map<std::size_t, std::size_t> paired_forward_;  // an F&B pair's backward slot -> its forward's
  // F&B steps: the lane being built (0 the forward, 1 the backward), each lane's compute segments.
  static constexpr int kLanes = 2;
  int lane_ = 0;
  bool pairing_ = false;
  std::vector<std::vector<std::vector<std::uint32_t>>> segments_;
  std::vector<bool> segment_break_;
  std::vector<std::int64_t> stream_join_;  // per (stage, stream, lane): a task the next one also waits for
  std::vector<std::vector<WeightGroup>> pending_weights_;  // per (chunk, micro-batch): ZB-H1's deferred W's
  std::vector<std::uint32_t> tp_group_, dp_group_, sharding_group_, replica_group_, cp_ring_group_, cp_a2a_group_;
  std::vector<std::uint32_t> ep_group_, etp_group_, expert_dp_group_;
  /// Ring CP: the transfers an attention task's output also waits for (its last ring steps).
  std::unordered_map<std::int64_t, std::vector<std::int64_t>> output_also_needs_;
  std::vector<Ready> ready_;
  std::vector<LayerParameters> layer_params_;  // per layer, on one GPU
};

}  // namespace

TaskGraph build_tasks(const ModelSpec& model, const TrainingSpec& training, const Plan& plan) {
  Builder b(model, training, plan);
  b.prepare_groups();
  return b.build();
}

}  // namespace parasim::workload
