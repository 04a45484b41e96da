#include "workload/moe_ops.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>

namespace parasim::workload {
namespace {

// Tensor sizes of a MoE layer's micro-batch on one GPU.
struct MoeDims {
  double e;      // bytes per activation element
  double T;      // tokens of the TP group on this CP rank: b·s/cp
  double Tr;     // tokens the rank routes: T/t with SP
  double t, h, k, experts, local;
  double routed;  // token copies an expert rank computes on, balanced: etp·Tr·k
  double busiest; // the same for the busiest rank
  double width, up;  // a local expert's inner width (f/etp) and fc1 output width
  double shared_width, shared_up;  // all shared experts together, per TP rank
  double mask;
  bool swiglu;
  Precision gemm, router;
};

MoeDims dims_of(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  MoeDims d{};
  d.e = tr.element_bytes();
  d.t = sh.tp;
  d.T = static_cast<double>(sh.micro_batch) * sh.seq_len / sh.cp;
  d.Tr = sh.sp ? d.T / d.t : d.T;
  d.h = m.hidden;
  d.k = m.top_k;
  d.experts = m.experts;
  d.local = static_cast<double>(m.experts) / sh.ep;
  d.routed = sh.etp * d.Tr * d.k;
  d.busiest = d.routed * busiest_expert_factor(m);
  d.swiglu = m.activation == Activation::swiglu;
  d.width = static_cast<double>(m.expert_ffn_hidden) / sh.etp;
  d.up = (d.swiglu ? 2 : 1) * d.width;
  d.shared_width = static_cast<double>(m.shared_experts) * m.shared_expert_ffn_hidden / d.t;
  d.shared_up = (d.swiglu ? 2 : 1) * d.shared_width;
  d.mask = m.dropout > 0 ? 1.0 : 0.0;
  d.gemm = tr.precision;
  // Transformer Engine keeps the router out of fp8, as it does the attention core.
  d.router = tr.precision == Precision::fp8 ? Precision::bf16 : tr.precision;
  return d;
}

// C[m x n] = A[m x k] B[k x n], `batch` of them (a grouped GEMM: one per local expert), as ops.cpp
// prices its GEMMs.
Op gemm(std::string_view name, double m, double n, double k, const MoeDims& d, Precision p, double batch = 1) {
  Op op;
  op.name = name;
  op.kind = OpKind::gemm;
  op.precision = p;
  op.m = static_cast<std::int64_t>(m);
  op.n = static_cast<std::int64_t>(n);
  op.k = static_cast<std::int64_t>(k);
  op.batch = static_cast<int>(batch);
  op.flops = 2.0 * m * n * k * batch;
  op.bytes = d.e * (m * k + k * n + m * n) * batch;
  return op;
}

Op memory(std::string_view name, double bytes, Precision p) {
  Op op;
  op.name = name;
  op.kind = OpKind::memory_bound;
  op.precision = p;
  op.bytes = bytes;
  return op;
}

// Stored activations and recompute under the block's setting: MoE blocks keep nothing of their own
// under full recompute (the layer input kept by the attention block suffices). Selective recompute
// by module: `freed` bytes not kept and `rerun` recomputed (from the block's forward, in order).
void finish(Block& blk, double stored, Recompute r) {
  blk.full_activation_bytes = stored;
  blk.stored_activation_bytes = r == Recompute::full ? 0.0 : stored;
  if (r == Recompute::full) blk.recompute = blk.forward;
}

void recompute_part(Block& blk, double freed, const std::function<bool(const Op&)>& rerun) {
  blk.stored_activation_bytes -= freed;
  std::copy_if(blk.forward.begin(), blk.forward.end(), std::back_inserter(blk.recompute), rerun);
}

bool named(const Op& op, std::string_view name) { return op.name == name; }

// Whether the block is under selective recompute with Megatron-Core's module `m`.
bool selective_module(const ModelSpec& model, const TrainingSpec& tr, const BlockShape& sh, RecomputeModule m) {
  return sh.recompute == Recompute::selective && recomputes_by_module(model, tr) && sh.modules.has(m);
}

}  // namespace

double busiest_expert_factor(const ModelSpec& m) {
  return m.capacity_factor > 0 ? std::min(m.expert_load_imbalance, m.capacity_factor) : m.expert_load_imbalance;
}

double routed_tokens(const ModelSpec& m, const BlockShape& sh) {
  const double T = static_cast<double>(sh.micro_batch) * sh.seq_len / sh.cp;
  return (sh.sp ? T / sh.tp : T) * m.top_k;
}

double dispatch_bytes(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  return routed_tokens(m, sh) * m.hidden * tr.element_bytes();
}

Block router_block(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  const MoeDims d = dims_of(m, tr, sh);
  Block blk;
  blk.kind = BlockKind::router;
  const double scores = d.Tr * d.experts;  // elements
  auto& f = blk.forward;
  f.push_back(memory("norm2", 2 * d.e * d.Tr * d.h, tr.precision));
  f.push_back(gemm("router", d.Tr, d.experts, d.h, d, d.router));
  // Logits read, fp32 scores written; top-k indices and probabilities (4 + 8 bytes per copy).
  f.push_back(memory("routing", scores * (d.e + 4) + d.Tr * d.k * 12, Precision::fp32));
  // Each token read once, written once per expert it goes to.
  f.push_back(memory("permute", d.e * d.Tr * d.h * (1 + d.k), tr.precision));
  auto& bi = blk.backward_input;
  bi.push_back(memory("permute_grad", d.e * d.Tr * d.h * (1 + d.k), tr.precision));
  bi.push_back(memory("routing_grad", scores * (4 + 4 + d.e), Precision::fp32));
  bi.push_back(gemm("router_dgrad", d.Tr, d.h, d.experts, d, d.router));
  bi.push_back(memory("norm2_grad", 4 * d.e * d.Tr * d.h, tr.precision));
  blk.backward_weight.push_back(gemm("router_wgrad", d.h, d.experts, d.Tr, d, d.router));
  // Norm input, router input (the norm's output, also the shared experts' input), fp32 scores.
  finish(blk, 2 * d.e * d.Tr * d.h + 4 * scores, sh.recompute);
  // The pre-MLP norm stands alone before the MoE part: `layernorm` frees its output; `moe` keeps the
  // MoE part's input (that output) and reruns the router after it.
  const bool norm = selective_module(m, tr, sh, RecomputeModule::layernorm);
  if (selective_module(m, tr, sh, RecomputeModule::moe)) {
    recompute_part(blk, 4 * scores + (norm ? d.e * d.Tr * d.h : 0.0), [&](const Op& op) { return norm || !named(op, "norm2"); });
  } else if (norm) {
    recompute_part(blk, d.e * d.Tr * d.h, [](const Op& op) { return named(op, "norm2"); });
  }
  add_fp8_quantization(blk);
  add_gradient_accumulation(blk, tr);
  return blk;
}

Block experts_block(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  const MoeDims d = dims_of(m, tr, sh);
  Block blk;
  blk.kind = BlockKind::experts;
  const double n = d.busiest, per_expert = n / d.local;  // token copies in all, and per local expert
  auto& f = blk.forward;
  f.push_back(gemm("experts_fc1", per_expert, d.up, d.h, d, d.gemm, d.local));
  f.push_back(memory(d.swiglu ? "experts_swiglu" : "experts_gelu", d.e * n * (d.up + d.width), tr.precision));
  f.push_back(gemm("experts_fc2", per_expert, d.h, d.width, d, d.gemm, d.local));
  // After the combine: the routed copies weighted by their probabilities and summed per token, then
  // the residual add.
  f.push_back(memory("unpermute", d.e * d.Tr * d.h * (d.k + 1), tr.precision));
  f.push_back(memory("bias_dropout_add", d.Tr * d.h * (3 * d.e + d.mask), tr.precision));
  auto& bi = blk.backward_input;
  bi.push_back(memory("bias_dropout_add_grad", d.Tr * d.h * (2 * d.e + d.mask), tr.precision));
  bi.push_back(memory("unpermute_grad", d.e * d.Tr * d.h * (2 * d.k + 1), tr.precision));
  bi.push_back(gemm("experts_fc2_dgrad", per_expert, d.width, d.h, d, d.gemm, d.local));
  bi.push_back(memory(d.swiglu ? "experts_swiglu_grad" : "experts_gelu_grad", d.e * n * (2 * d.up + d.width), tr.precision));
  bi.push_back(gemm("experts_fc1_dgrad", per_expert, d.h, d.up, d, d.gemm, d.local));
  auto& bw = blk.backward_weight;
  bw.push_back(gemm("experts_fc2_wgrad", d.width, d.h, per_expert, d, d.gemm, d.local));
  bw.push_back(gemm("experts_fc1_wgrad", d.h, d.up, per_expert, d, d.gemm, d.local));
  // fc1 input (the received copies), activation input and output; the experts' output before the
  // probability weighting (Tr·k copies) and the dropout mask.
  finish(blk, n * (tr.gemm_input_bytes() * (d.h + d.width) + d.e * d.up) + d.e * d.Tr * d.k * d.h + d.Tr * d.h * d.mask, sh.recompute);
  // Backward holds beside what it kept the output's gradient and, at the activation's backward, fc1's
  // output gradient for every routed copy (as a dense MLP does, mlp_block).
  blk.transient_bytes = d.e * (d.Tr * d.h + n * d.up);
  // `moe`: all of it rerun but the dropout after the MoE part; `moe_act`: the activation's output
  // (fc2's input, which fc2 then does not keep a cast of either) freed and the activation rerun.
  const std::string_view activation = d.swiglu ? "experts_swiglu" : "experts_gelu";
  if (selective_module(m, tr, sh, RecomputeModule::moe)) {
    recompute_part(blk, blk.stored_activation_bytes - d.Tr * d.h * d.mask, [](const Op& op) { return !named(op, "bias_dropout_add"); });
  } else if (selective_module(m, tr, sh, RecomputeModule::moe_act)) {
    recompute_part(blk, n * tr.gemm_input_bytes() * d.width, [&](const Op& op) { return named(op, activation); });
  }
  add_fp8_quantization(blk);
  add_gradient_accumulation(blk, tr);
  return blk;
}

Block shared_experts_block(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  const MoeDims d = dims_of(m, tr, sh);
  Block blk;
  blk.kind = BlockKind::shared_experts;
  auto& f = blk.forward;
  // A tensor-parallel MLP over the TP group's T tokens (gathered with SP), all shared experts side
  // by side; Qwen2-MoE's gate works on the rank's own tokens.
  f.push_back(gemm("shared_fc1", d.T, d.shared_up, d.h, d, d.gemm));
  f.push_back(memory(d.swiglu ? "shared_swiglu" : "shared_gelu", d.e * d.T * (d.shared_up + d.shared_width), tr.precision));
  f.push_back(gemm("shared_fc2", d.T, d.h, d.shared_width, d, d.gemm));
  if (m.shared_expert_gate) f.push_back(gemm("shared_gate", d.Tr, 1, d.h, d, d.router));
  auto& bi = blk.backward_input;
  bi.push_back(gemm("shared_fc2_dgrad", d.T, d.shared_width, d.h, d, d.gemm));
  bi.push_back(memory(d.swiglu ? "shared_swiglu_grad" : "shared_gelu_grad", d.e * d.T * (2 * d.shared_up + d.shared_width), tr.precision));
  bi.push_back(gemm("shared_fc1_dgrad", d.T, d.h, d.shared_up, d, d.gemm));
  if (m.shared_expert_gate) bi.push_back(gemm("shared_gate_dgrad", d.Tr, d.h, 1, d, d.router));
  auto& bw = blk.backward_weight;
  bw.push_back(gemm("shared_fc2_wgrad", d.shared_width, d.h, d.T, d, d.gemm));
  bw.push_back(gemm("shared_fc1_wgrad", d.h, d.shared_up, d.T, d, d.gemm));
  if (m.shared_expert_gate) bw.push_back(gemm("shared_gate_wgrad", d.h, 1, d.Tr, d, d.router));
  // The activation's input and output (its input, the router block's norm output, is kept there).
  finish(blk, d.T * (d.e * d.shared_up + tr.gemm_input_bytes() * d.shared_width), sh.recompute);
  blk.transient_bytes = d.e * (d.Tr * d.h + d.T * d.shared_up);  // as a dense MLP's (mlp_block)
  if (selective_module(m, tr, sh, RecomputeModule::moe) || selective_module(m, tr, sh, RecomputeModule::shared_experts)) {
    recompute_part(blk, blk.stored_activation_bytes, [](const Op&) { return true; });
  }
  add_fp8_quantization(blk);
  add_gradient_accumulation(blk, tr);
  return blk;
}

double layer_active_matmul_weights(const ModelSpec& m, int layer) {
  const double h = m.hidden, q = m.q_width(), kv = m.kv_width();
  const double mats = m.activation == Activation::swiglu ? 3 : 2;
  const double attention = (m.is_mla() ? latent_attention_matmul_weights(m) : h * (q + 2 * kv)) + static_cast<double>(m.v_width()) * h;
  if (!m.moe_layer(layer)) return attention + mats * h * m.ffn_hidden;
  return attention + h * m.experts + m.top_k * mats * h * m.expert_ffn_hidden + m.shared_experts * mats * h * m.shared_expert_ffn_hidden +
         (m.shared_expert_gate ? h : 0.0);
}

double nodes_per_token(const ModelSpec& m, int nodes) {
  const double n = nodes, k = m.top_k;
  if (nodes <= 1) return 1;
  const int g = m.routing_groups, limit = m.routing_groups_per_token;
  if (g > 0 && limit > 0 && g % nodes == 0) {
    // `limit` of the g groups, g/n on each node: the expected number of nodes holding one, n·(1 − C(g − g/n, limit)/C(g, limit)).
    double none_on_a_node = 1;
    const double per_node = static_cast<double>(g) / n;
    for (int i = 0; i < limit; ++i) none_on_a_node *= (g - per_node - i) / (g - i);
    return std::min(k, n * (1 - none_on_a_node));
  }
  // top_k draws over the nodes: n·(1 − (1 − 1/n)^k) distinct.
  return n * (1 - std::pow(1 - 1 / n, k));
}

double dispatch_network_share(const ModelSpec& m, const TrainingSpec& tr, int nodes) {
  if (tr.moe_dispatcher != MoeDispatcher::deepep || nodes <= 1 || m.top_k <= 0) return 1;
  // Both count the copies that leave the node: a (n − 1)/n share of what goes out either way.
  return nodes_per_token(m, nodes) / m.top_k;
}

}  // namespace parasim::workload
