#include "workload/memory.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "workload/schedule.hpp"

namespace parasim::workload {
namespace {

// Parameters of one layer on one GPU: TP splits the weight matrices and the biases of
// column-parallel layers; norms and the biases of row-parallel layers are replicated.
double layer_parameters(const ModelSpec& m, int tp) {
  const double h = m.hidden, q = m.q_width(), kv = m.kv_width(), f = m.ffn_hidden, t = tp;
  const bool swiglu = m.activation == Activation::swiglu;
  double p = (h * (q + 2 * kv) + q * h + (swiglu ? 3 : 2) * h * f) / t;
  if (m.bias || m.qkv_bias) p += (q + 2 * kv) / t;
  if (m.bias) p += h + (swiglu ? 2 : 1) * f / t + h;
  p += 2 * (m.norm == Norm::layernorm ? 2 * h : h);
  return p;
}

}  // namespace

double stage_parameters(const ModelSpec& m, const Plan& plan, int stage) {
  const auto sizes = layers_per_chunk(plan, m);
  double p = 0;
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    if (static_cast<int>(c) % plan.pp == stage) p += sizes[c] * layer_parameters(m, plan.tp);
  }
  const double h = m.hidden;
  const double vocab_shard = static_cast<double>(padded_vocab(m, plan.tp)) * h / plan.tp;
  if (stage == 0) {
    p += vocab_shard;
    if (m.position == PositionEmbedding::learned) p += static_cast<double>(m.max_position) * h;
  }
  if (stage == plan.pp - 1) {
    p += m.norm == Norm::layernorm ? 2 * h : h;
    // An untied head has its own weights; a tied one needs a copy of the embedding on the last
    // stage when the pipeline separates them (Megatron-LM keeps both in sync).
    if (!m.tied_embeddings || plan.pp > 1) p += vocab_shard;
  }
  return p;
}

double layer_activation_bytes(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  return attention_block(m, tr, sh).stored_activation_bytes + mlp_block(m, tr, sh).stored_activation_bytes;
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

MemoryReport memory_per_stage(const ModelSpec& m, const TrainingSpec& tr, const Plan& plan, Bytes capacity) {
  MemoryReport report;
  report.capacity = capacity;
  const int zg = plan.sharding_group();
  const auto sizes = layers_per_chunk(plan, m);
  const auto first = first_layer_of_chunk(plan, m);
  const auto recompute = layer_recompute(plan, m);
  const int micro = plan.micro_batches();

  // Activation bytes of one micro-batch of each layer, by recompute setting.
  BlockShape shape{plan.micro_batch, tr.seq_len, plan.tp, plan.sp, Recompute::none, plan.cp, plan.cp_kind};
  auto layer_bytes = [&](Recompute r) {
    shape.recompute = r;
    return layer_activation_bytes(m, tr, shape);
  };
  const double kept[] = {layer_bytes(Recompute::none), layer_bytes(Recompute::selective), layer_bytes(Recompute::full)};
  const double full_working = kept[0];
  shape.recompute = Recompute::none;
  const double embedding = embedding_block(m, tr, shape).stored_activation_bytes;
  const double head = head_block(m, tr, shape).stored_activation_bytes;

  for (int stage = 0; stage < plan.pp; ++stage) {
    StageMemory s;
    s.stage = stage;
    s.parameters = stage_parameters(m, plan, stage);
    s.weights = Bytes(s.parameters * tr.weight_bytes() / (plan.zero >= 3 ? zg : 1));
    s.gradients = Bytes(s.parameters * tr.gradient_bytes() / (plan.zero >= 2 ? zg : 1));
    s.optimizer = Bytes(s.parameters * tr.optimizer_bytes_per_param / (plan.zero >= 1 ? zg : 1));

    // Bytes of one micro-batch of each local chunk; the peak over the schedule of the chunks alive.
    std::vector<double> chunk_bytes(static_cast<std::size_t>(plan.vpp), 0.0);
    double working = 0;
    for (int local = 0; local < plan.vpp; ++local) {
      const int c = local * plan.pp + stage;
      double bytes = 0;
      int full_in_chunk = 0;
      for (int i = 0; i < sizes[static_cast<std::size_t>(c)]; ++i) {
        const Recompute r = recompute[static_cast<std::size_t>(first[static_cast<std::size_t>(c)] + i)];
        if (r == Recompute::full) {
          ++full_in_chunk;
          // Uniform method: only the first layer of each group of recompute_layers keeps its input.
          const bool group_start = plan.recompute_method == RecomputeMethod::block || (full_in_chunk - 1) % plan.recompute_layers == 0;
          if (group_start) bytes += kept[2];
        } else {
          bytes += kept[static_cast<int>(r)];
        }
      }
      if (full_in_chunk > 0) {
        const int max_group = plan.recompute_method == RecomputeMethod::uniform ? std::min(plan.recompute_layers, full_in_chunk) : 1;
        working = std::max(working, max_group * full_working);
      }
      if (c == 0) bytes += embedding;
      if (c == plan.chunks() - 1) bytes += head;
      chunk_bytes[static_cast<std::size_t>(local)] = bytes;
    }
    double alive = 0, peak = 0;
    int alive_sets = 0;
    for (const auto& step : stage_schedule(plan.schedule, plan.pp, plan.vpp, stage, micro)) {
      const double b = chunk_bytes[static_cast<std::size_t>(step.chunk)];
      if (step.pass == Pass::forward) {
        alive += b;
        ++alive_sets;
      } else {
        alive -= b;
        --alive_sets;
      }
      if (alive > peak) {
        peak = alive;
        s.chunks_in_flight = alive_sets;
      }
    }
    s.recompute_working = Bytes(working);
    s.activations = Bytes(peak + working);

    // Pipeline: the activation received and the gradient to send, e·s·b·h/(t·cp) each with SP or
    // Megatron's scatter-gather. ZeRO-3: the layer in use and the one prefetched, gathered.
    const double e = tr.element_bytes();
    double buffers = plan.pp > 1 ? 2 * e * plan.micro_batch * tr.seq_len * m.hidden / (plan.tp * plan.cp) : 0.0;
    if (plan.zero >= 3) {
      buffers += 2 * layer_parameters(m, plan.tp) * tr.weight_bytes();
    }
    s.buffers = Bytes(buffers);
    const double tensors = (s.weights + s.gradients + s.optimizer + s.activations + s.buffers).value();
    s.allowance = Bytes(kFixedAllowanceBytes + kFragmentation * tensors);
    report.stages.push_back(s);
  }
  report.worst_stage = static_cast<int>(std::max_element(report.stages.begin(), report.stages.end(),
                                                         [](const StageMemory& a, const StageMemory& b) { return a.total() < b.total(); }) -
                                        report.stages.begin());
  return report;
}

}  // namespace parasim::workload
