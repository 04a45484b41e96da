#include "workload/memory.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "workload/chunk_placement.hpp"
#include "workload/moe_ops.hpp"
#include "workload/pass_times.hpp"
#include "workload/schedule.hpp"
#include "workload/zero3.hpp"

namespace parasim::workload {

LayerParameters layer_parameters(const ModelSpec& m, const Plan& plan, int layer) {
  // TP splits the weight matrices and the biases of column-parallel layers; norms and the biases of
  // row-parallel layers are replicated.
  const double h = m.hidden, q = m.q_width(), kv = m.kv_width(), t = plan.tp;
  const bool swiglu = m.activation == Activation::swiglu;
  auto mlp = [&](double width, double split) {
    double p = (swiglu ? 3 : 2) * h * width / split;
    if (m.bias) p += (swiglu ? 2 : 1) * width / split + h;
    return p;
  };
  LayerParameters p;
  const double out = static_cast<double>(m.v_width()) * h / t;  // the output projection
  if (m.is_mla()) {
    // Megatron-Core duplicates the down projections (and their latent norms) on every TP rank and
    // splits the up projections over the heads.
    const auto& a = m.mla;
    const double duplicated = (a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank : 0.0) + h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
    const double up = (a.q_lora_rank > 0 ? a.q_lora_rank : h) * m.heads * a.qk_head_dim() + a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
    p.dense = duplicated + up / t + out;
  } else {
    p.dense = h * (q + 2 * kv) / t + out;
  }
  if (m.qk_norm) p.dense += 2.0 * (m.is_mla() ? m.mla.qk_head_dim() : m.head_dim);
  if (m.bias || m.qkv_bias) p.dense += (q + 2 * kv) / t;
  if (m.bias) p.dense += h;
  p.dense += 2 * (m.norm == Norm::layernorm ? 2 * h : h);
  if (!m.moe_layer(layer)) {
    p.dense += mlp(m.ffn_hidden, t);
    return p;
  }
  // The router is replicated; the shared experts split like a dense MLP; the routed experts
  // spread over ep ranks, each split over etp.
  p.dense += h * m.experts + m.shared_experts * mlp(m.shared_expert_ffn_hidden, t) + (m.shared_expert_gate ? h : 0.0);
  p.expert = static_cast<double>(m.experts) / plan.ep * mlp(m.expert_ffn_hidden, plan.expert_tp());
  return p;
}

namespace {

// Every layer of a kind (dense, MoE) holds the same parameters: computed once per kind.
struct LayerKinds {
  LayerParameters dense, moe;
  LayerKinds(const ModelSpec& m, const Plan& plan) {
    int first_dense = 0, first_moe = 0;
    while (first_dense + 1 < m.layers && m.moe_layer(first_dense)) ++first_dense;
    while (first_moe + 1 < m.layers && !m.moe_layer(first_moe)) ++first_moe;
    dense = layer_parameters(m, plan, first_dense);
    moe = layer_parameters(m, plan, first_moe);
  }
  const LayerParameters& of(const ModelSpec& m, int layer) const { return m.moe_layer(layer) ? moe : dense; }
};

// A stage's layers' parameters, added in chunk order.
struct Chunking {
  std::vector<int> sizes, first;
  Chunking(const ModelSpec& m, const Plan& plan) : sizes(layers_per_chunk(plan, m)), first(first_layer_of_chunk(plan, m)) {}
  template <class Of>
  double sum(const Plan& plan, int stage, Of of) const {
    double p = 0;
    for (const int c : stage_chunks(plan, stage)) {
      const auto i = static_cast<std::size_t>(c);
      for (int l = first[i]; l < first[i] + sizes[i]; ++l) p += of(l);
    }
    return p;
  }
};

double expert_sum(const ModelSpec& m, const Plan& plan, int stage, const Chunking& chunks, const LayerKinds& kinds) {
  return chunks.sum(plan, stage, [&](int l) { return kinds.of(m, l).expert; });
}

double stage_total(const ModelSpec& m, const Plan& plan, int stage, const Chunking& chunks, const LayerKinds& kinds);

}  // namespace

double stage_expert_parameters(const ModelSpec& m, const Plan& plan, int stage) {
  return expert_sum(m, plan, stage, Chunking(m, plan), LayerKinds(m, plan));
}

double stage_parameters(const ModelSpec& m, const Plan& plan, int stage) {
  return stage_total(m, plan, stage, Chunking(m, plan), LayerKinds(m, plan));
}

namespace {

double stage_total(const ModelSpec& m, const Plan& plan, int stage, const Chunking& chunks, const LayerKinds& kinds) {
  double p = chunks.sum(plan, stage, [&](int l) { return kinds.of(m, l).total(); });
  const double h = m.hidden;
  const double vocab_shard = static_cast<double>(padded_vocab(m, plan.tp)) * h / plan.tp;
  const double norm = m.norm == Norm::layernorm ? 2 * h : h;
  if (holds_embedding(plan, stage)) {
    p += vocab_shard;
    if (m.position == PositionEmbedding::learned) p += static_cast<double>(m.max_position) * h;
    p += static_cast<double>(m.token_types) * h + (m.post_norm ? norm : 0.0);
  }
  if (holds_head(plan, stage)) {
    if (!m.post_norm) p += norm;
    // BERT's masked-LM head: a replicated dense layer and norm, a vocabulary-parallel bias.
    if (m.mlm_head) p += h * h + h + norm + static_cast<double>(padded_vocab(m, plan.tp)) / plan.tp;
    // An untied head has its own weights; a tied one needs a copy of the embedding on the last
    // stage when the pipeline separates them (Megatron-LM keeps both in sync).
    if (!m.tied_embeddings || !holds_embedding(plan, stage)) p += vocab_shard;
    p += mtp_parameters(m, plan);
  }
  return p;
}

}  // namespace

double mtp_parameters(const ModelSpec& m, const Plan& plan) {
  if (m.mtp_layers == 0) return 0;
  // The norms of the embedding and the hidden state, the column-parallel 2h x h projection, one layer
  // like the last, the shared head's norm.
  const double h = m.hidden, norm = m.norm == Norm::layernorm ? 2 * h : h;
  return m.mtp_layers * (3 * norm + 2 * h * h / plan.tp + layer_parameters(m, plan, m.layers - 1).total());
}

LayerActivations layer_activations(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh, int layer) {
  std::vector<Block> blocks{attention_block(m, tr, sh)};
  if (!m.moe_layer(layer)) {
    blocks.push_back(mlp_block(m, tr, sh));
  } else {
    blocks.push_back(router_block(m, tr, sh));
    blocks.push_back(experts_block(m, tr, sh));
    if (m.shared_experts > 0) blocks.push_back(shared_experts_block(m, tr, sh));
  }
  LayerActivations a;
  // Backward runs the blocks in reverse, and a block's gradients come once the blocks after it have
  // released what they held for their backward (all of it by then, kept or recomputed).
  double released = 0;
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {
    a.kept += b->stored_activation_bytes;
    a.backward_transient = std::max(a.backward_transient, b->transient_bytes - released);
    released += b->full_activation_bytes;
  }
  return a;
}

double layer_activation_bytes(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh, int layer) {
  return layer_activations(m, tr, sh, layer).kept;
}

double layer_activation_bytes(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  return layer_activation_bytes(m, tr, sh, m.is_moe() ? m.first_dense_layers : 0);
}

bool MemoryReport::fits() const {
  return std::all_of(stages.begin(), stages.end(), [&](const StageMemory& s) { return s.total() <= capacity; });
}

std::optional<std::string> MemoryReport::problem() const {
  if (fits()) return std::nullopt;
  const auto& s = stages[static_cast<std::size_t>(worst_stage)];
  return fmt::format("OOM on stage {} by {} ({} needed, {} per GPU)", s.stage, format_bytes(s.total() - capacity), format_bytes(s.total()),
                     format_bytes(capacity));
}

namespace {

// PyTorch FSDP (FSDP1 and FSDP2 alike) does not reshard the root module's parameters after forward,
// expecting backward to use them at once: what is wrapped at the root, outside the layers (the
// embedding, the final norm and the head), stays gathered from the first forward to the end of
// backward. Under a pipeline the whole stage is held gathered anyway (zero3_holds_stage).
double fsdp_root(const ModelSpec& m, const TrainingSpec& tr, const Plan& plan, int stage, double stage_parameters, const Chunking& chunks,
                 const LayerKinds& kinds) {
  if (plan.zero < 3 || tr.zero3_engine != Zero3Engine::fsdp) return 0;
  return stage_parameters - chunks.sum(plan, stage, [&](int l) { return kinds.of(m, l).total(); });
}

// Pipeline: the activation received and the gradient to send, e·s·b·h/(t·cp) each with SP or
// Megatron's scatter-gather. ZeRO-3: what is gathered at once, `gathered` parameters: the layer in
// use and the one prefetched (and FSDP's root), or under a pipeline the stage's every parameter,
// held for the step (workload/zero3.hpp).
double stage_buffers(const ModelSpec& m, const TrainingSpec& tr, const Plan& plan, double gathered) {
  const double e = tr.element_bytes();
  const double pipeline = plan.pp > 1 ? 2 * e * plan.micro_batch * tr.seq_len * m.hidden / (plan.tp * plan.cp) : 0.0;
  return pipeline + (plan.zero >= 3 ? gathered * tr.weight_bytes() : 0.0);
}

}  // namespace

MemoryReport memory_per_stage(const ModelSpec& m, const TrainingSpec& tr, const Plan& plan, Bytes capacity) {
  return memory_per_stage(m, tr, plan, capacity, pipeline_schedule(planned_shape(m, tr, plan)));
}

namespace {

// One micro-batch's activations of each kind of layer (dense, MoE) by recompute setting, each built
// on first use: a dense model never asks for the MoE kind, a plan without recompute for the
// recomputed settings (each is a build of the layer's blocks).
class LayerTable {
 public:
  LayerTable(const ModelSpec& m, const TrainingSpec& tr, BlockShape shape) : m_(m), tr_(tr), shape_(shape) {}
  const LayerActivations& of(bool moe, Recompute r) {
    const int k = moe ? 1 : 0, i = static_cast<int>(r);
    if (!known_[k][i]) {
      BlockShape with = shape_;
      with.recompute = r;
      int layer = 0;
      while (layer + 1 < m_.layers && m_.moe_layer(layer) != moe) ++layer;
      by_kind_[k][i] = layer_activations(m_, tr_, with, layer);
      known_[k][i] = true;
    }
    return by_kind_[k][i];
  }
  double kept(bool moe, Recompute r) { return of(moe, r).kept; }

 private:
  const ModelSpec& m_;
  const TrainingSpec& tr_;
  BlockShape shape_;
  LayerActivations by_kind_[2][3];
  bool known_[2][3] = {};
};

// What the model's ends keep for one micro-batch: the embedding on the first chunk; on the last the
// head, and after it each multi-token-prediction module (its entry, a layer like the last without
// recompute, and the head again), and the loss's transients.
struct Ends {
  double embedding = 0, head = 0, loss = 0;
};

Ends model_ends(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& shape) {
  Ends e;
  e.embedding = embedding_block(m, tr, shape).stored_activation_bytes;
  const Block head_of_model = head_block(m, tr, shape);
  e.head = head_of_model.stored_activation_bytes;
  e.loss = head_of_model.transient_bytes;
  if (m.mtp_layers > 0) {
    BlockShape last = shape;
    last.local = m.local_attention_layer(m.layers - 1);
    e.head += m.mtp_layers * (mtp_projection_block(m, tr, shape).stored_activation_bytes + layer_activation_bytes(m, tr, last, m.layers - 1) + e.head);
  }
  return e;
}

// A stage's activations of one micro-batch per local chunk, and what comes beside those in flight.
struct StageActivations {
  std::vector<double> chunk_bytes;
  double working = 0;    // the recomputed layers materialized for a backward
  double transient = 0;  // the gradients of a layer's backward (the same whether it was recomputed)
  double loss = 0;       // the loss's logits, copies and gradients, before any layer's backward
};

// Where each chunk's layers are and how each layer is recomputed.
struct LayerLayout {
  std::vector<int> sizes, first;
  std::vector<Recompute> recompute;
  LayerLayout(const ModelSpec& m, const Plan& plan)
      : sizes(layers_per_chunk(plan, m)), first(first_layer_of_chunk(plan, m)), recompute(layer_recompute(plan, m)) {}
};

StageActivations stage_activations(const ModelSpec& m, const Plan& plan, const LayerLayout& layout, int stage, LayerTable& layers,
                                   const Ends& ends) {
  const auto& sizes = layout.sizes;
  const auto& first = layout.first;
  const auto& recompute = layout.recompute;
  const auto chunks = stage_chunks(plan, stage);
  StageActivations a;
  a.chunk_bytes.assign(chunks.size(), 0.0);
  for (std::size_t local = 0; local < chunks.size(); ++local) {
    const int c = chunks[local];
    double bytes = 0;
    int full_in_chunk = 0;
    double full_working = 0;  // the largest layer recomputed in this chunk
    for (int i = 0; i < sizes[static_cast<std::size_t>(c)]; ++i) {
      const int layer = first[static_cast<std::size_t>(c)] + i;
      const Recompute r = recompute[static_cast<std::size_t>(layer)];
      const bool moe = m.moe_layer(layer);
      a.transient = std::max(a.transient, layers.of(moe, Recompute::none).backward_transient);
      if (r == Recompute::full) {
        ++full_in_chunk;
        full_working = std::max(full_working, layers.kept(moe, Recompute::none));
        // Uniform method: only the first layer of each group of recompute_layers keeps its input.
        const bool group_start = plan.recompute_method == RecomputeMethod::block || (full_in_chunk - 1) % plan.recompute_layers == 0;
        if (group_start) bytes += layers.kept(moe, Recompute::full);
      } else {
        bytes += layers.kept(moe, r);
        // A layer's selective recompute makes again, for its backward, what it did not keep.
        if (r == Recompute::selective) a.working = std::max(a.working, layers.kept(moe, Recompute::none) - layers.kept(moe, r));
      }
    }
    if (full_in_chunk > 0) {
      const int max_group = plan.recompute_method == RecomputeMethod::uniform ? std::min(plan.recompute_layers, full_in_chunk) : 1;
      a.working = std::max(a.working, max_group * full_working);
    }
    if (c == 0) bytes += ends.embedding;
    if (c == plan.chunks() - 1) {
      bytes += ends.head;
      a.loss = ends.loss;
    }
    a.chunk_bytes[local] = bytes;
  }
  return a;
}

// The most activation bytes the schedule holds at once, and how many (micro-batch, chunk) sets then.
// A micro-batch's activations go with its backward, or with its weight step when the backward
// defers the weight gradients (the zero-bubble schedules, DualPipe).
std::pair<double, int> peak_in_flight(const std::vector<ScheduleStep>& steps, const std::vector<double>& chunk_bytes) {
  double alive = 0, peak = 0;
  int alive_sets = 0, peak_sets = 0;
  for (const auto& step : steps) {
    const double b = chunk_bytes[static_cast<std::size_t>(step.chunk)];
    if (step.pass == Pass::forward) {
      alive += b;
      ++alive_sets;
    } else if (step.pass == Pass::weight || !step.defers_weight) {
      alive -= b;
      --alive_sets;
    }
    if (alive > peak) {
      peak = alive;
      peak_sets = alive_sets;
    }
  }
  return {peak, peak_sets};
}

}  // namespace

MemoryReport memory_per_stage(const ModelSpec& m, const TrainingSpec& tr, const Plan& plan, Bytes capacity,
                              const std::vector<std::vector<ScheduleStep>>& schedule) {
  MemoryReport report;
  report.capacity = capacity;
  const int zg = plan.sharding_group();
  const int ezg = plan.expert_data_ranks();  // expert state is sharded over its own data-parallel group
  const Chunking chunking(m, plan);
  const LayerKinds kinds(m, plan);
  // ZeRO-3 holds the layer in use and the one prefetched, gathered: the largest kind present.
  bool any_dense = false, any_moe = false;
  for (int l = 0; l < m.layers; ++l) (m.moe_layer(l) ? any_moe : any_dense) = true;
  const double largest_layer = std::max(any_dense ? kinds.dense.total() : 0.0, any_moe ? kinds.moe.total() : 0.0);
  const bool holds_stage = zero3_holds_stage(plan, tr);
  const BlockShape shape = block_shape(plan, tr.seq_len, plan.micro_batch, Recompute::none);
  LayerTable layers(m, tr, shape);
  const Ends ends = model_ends(m, tr, shape);
  const LayerLayout layout(m, plan);

  for (int stage = 0; stage < plan.pp; ++stage) {
    StageMemory s;
    s.stage = stage;
    s.parameters = stage_total(m, plan, stage, chunking, kinds);
    s.expert_parameters = expert_sum(m, plan, stage, chunking, kinds);
    const double dense = s.parameters - s.expert_parameters, expert = s.expert_parameters;
    auto sharded = [&](double bytes_per_param, int from_zero) {
      return Bytes(dense * bytes_per_param / (plan.zero >= from_zero ? zg : 1) + expert * bytes_per_param / (plan.zero >= from_zero ? ezg : 1));
    };
    s.weights = sharded(tr.weight_bytes(), 3);
    s.gradients = sharded(tr.gradient_bytes(), 2);
    // FSDP under a pipeline accumulates the stage's gradients unsharded until the step's last
    // backward reduce-scatters them, in the reduction's format (fp32 where gradients reduce in fp32:
    // FSDPParam.to_accumulated_grad_if_needed).
    if (holds_stage) s.gradients += Bytes(s.parameters * tr.gradient_bytes());
    s.optimizer = sharded(tr.optimizer_bytes_per_param, 1);

    const auto a = stage_activations(m, plan, layout, stage, layers, ends);
    const auto [peak, sets] = peak_in_flight(schedule[static_cast<std::size_t>(stage)], a.chunk_bytes);
    s.chunks_in_flight = sets;
    // The loss's transients come and go before any layer's backward.
    s.backward_transient = Bytes(a.transient);
    s.recompute_working = Bytes(std::max(a.loss, a.working + a.transient));
    s.activations = Bytes(peak + s.recompute_working.value());

    s.buffers = Bytes(stage_buffers(m, tr, plan, holds_stage ? s.parameters : 2 * largest_layer + fsdp_root(m, tr, plan, stage, s.parameters, chunking, kinds)));
    // PyTorch's foreach AdamW takes sqrt(v) out of place: one fp32 copy of the second moments it holds.
    if (tr.optimizer_kernel == OptimizerKernel::foreach) s.optimizer_step = sharded(4, 1);
    const double tensors = (s.weights + s.gradients + s.optimizer + s.transient_peak() + s.buffers).value();
    s.allowance = Bytes(kFixedAllowanceBytes + kFragmentation * tensors);
    report.stages.push_back(s);
  }
  report.worst_stage = static_cast<int>(std::max_element(report.stages.begin(), report.stages.end(),
                                                         [](const StageMemory& a, const StageMemory& b) { return a.total() < b.total(); }) -
                                        report.stages.begin());
  return report;
}

}  // namespace parasim::workload
