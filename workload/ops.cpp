#include "workload/ops.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <span>

#include "workload/moe_ops.hpp"

namespace parasim::workload {
namespace {

// Tensor sizes of one micro-batch on one GPU.
struct Dims {
  double e;        // bytes per activation element
  double e_in;     // bytes per element of a GEMM input kept for the weight gradient (1 in fp8)
  double T;        // tokens of the micro-batch
  double Tr;       // tokens of a "replicated" tensor on this GPU: T, or T/t with SP
  double t;        // tensor-parallel degree
  double h, q, kv, f, hd;
  double qk_dim, v_dim;  // attention core: query/key and value width of a head (MLA: 192 and 128)
  double window;         // keys a query meets at most on a local layer; 0: all
  bool chunked;
  double b, s, heads_local, kv_local;
  double sq, skv;  // attention core: queries and keys per sequence on this GPU (context parallelism)
  double mask;     // bytes of a dropout mask element, 0 without dropout
  bool causal;     // decoder attention (encoders attend both ways)
  Precision gemm, core;
  FlashKernel flash_kernel;
  bool softmax_fused;  // eager attention: the fused scale-mask-softmax, or PyTorch's ops
};

Dims dims_of(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  Dims d{};
  d.e = tr.element_bytes();
  d.e_in = tr.gemm_input_bytes();
  d.b = sh.micro_batch;
  d.s = sh.seq_len;
  const double cp = sh.cp;
  d.T = d.b * d.s / cp;  // tokens on this GPU: its share of the sequence under context parallelism
  d.t = sh.tp;
  d.Tr = sh.sp ? d.T / d.t : d.T;
  d.h = m.hidden;
  d.q = m.q_width();
  d.kv = m.kv_width();
  d.f = m.ffn_hidden;
  d.hd = m.head_dim;
  d.qk_dim = m.is_mla() ? m.mla.qk_head_dim() : m.head_dim;
  d.v_dim = m.is_mla() ? m.mla.v_head_dim : m.head_dim;
  d.window = sh.local ? (m.sliding_window > 0 ? m.sliding_window : m.attention_chunk) : 0;
  d.chunked = sh.local && m.sliding_window == 0;
  d.heads_local = static_cast<double>(m.heads) / sh.tp;
  d.kv_local = static_cast<double>(m.kv_heads) / sh.tp;
  // See the header: ring keeps the heads and sees s/c queries against s keys; Ulysses trades heads
  // for the whole sequence.
  d.sq = d.skv = d.s;
  if (sh.cp > 1 && sh.cp_kind == CpKind::ring) d.sq = d.s / cp;
  if (sh.cp > 1 && sh.cp_kind == CpKind::ulysses) {
    d.heads_local /= cp;
    d.kv_local /= cp;
  }
  d.mask = m.dropout > 0 ? 1.0 : 0.0;
  d.causal = m.causal;
  d.gemm = tr.precision;
  // Transformer Engine runs the attention core in bf16 even in fp8 training.
  d.core = tr.precision == Precision::fp8 ? Precision::bf16 : tr.precision;
  d.flash_kernel = tr.flash_kernel;
  d.softmax_fused = eager_softmax_fused(tr.eager_softmax, d.b, d.heads_local, d.causal);
  return d;
}

// C[m x n] = A[m x k] B[k x n], `batch` of them.
Op gemm(std::string_view name, double m, double n, double k, const Dims& d, Precision p, double batch = 1) {
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

// A GEMM whose input a norm writes, fused with the fp8 cast in Transformer Engine's
// LayerNormLinear (Megatron-Core's TELayerNormColumnParallelLinear).
Op after_norm(Op op) {
  op.input_cast_fused = true;
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

Op attention_core(const Dims& d, bool flash, bool backward) {
  Op op;
  op.name = backward ? "attention_grad" : "attention";
  op.kind = backward ? OpKind::attention_grad : OpKind::attention;
  op.precision = d.core;
  op.batch = static_cast<int>(d.b);
  op.heads = static_cast<int>(d.heads_local);
  op.kv_heads = static_cast<int>(d.kv_local);
  op.seq_q = static_cast<int>(d.sq);
  op.seq_kv = static_cast<int>(d.skv);
  // The exponentials' share follows the matmul FLOPs per score, 2·(d_qk + d_v) = 4·head_dim.
  op.head_dim = static_cast<int>((d.qk_dim + d.v_dim) / 2);
  op.causal = d.causal;
  op.flash = flash;
  op.flash_kernel = d.flash_kernel;
  // A local layer's query meets at most the window's (or chunk's) keys: the s of s² is min(s, w).
  const double keys = d.window > 0 ? std::min(d.skv, d.window) : d.skv;
  if (d.window > 0 && d.window < d.skv) {
    op.window = static_cast<int>(d.window);
    op.chunked = d.chunked;
  }
  // QK^T (d_qk) and AV (d_v): 2·b·s²·(a/t)·(d_qk + d_v) forward; backward computes four such products.
  // Under context parallelism s² becomes the rank's queries × keys (see the header).
  op.flops = (backward ? 4.0 : 2.0) * d.b * d.sq * keys * d.heads_local * (d.qk_dim + d.v_dim);
  // Q and O of the rank's queries; K and V of every key it meets (ring: all of them, chunk by chunk).
  const double q = d.e * d.b * d.sq * d.heads_local * d.qk_dim, o = d.e * d.b * d.sq * d.heads_local * d.v_dim;
  const double k = d.e * d.b * d.skv * d.kv_local * d.qk_dim, v = d.e * d.b * d.skv * d.kv_local * d.v_dim;
  // Forward reads Q, K, V and writes O; backward reads Q, K, V, O, dO and writes dQ, dK, dV.
  op.bytes = backward ? (q + k + v + 2 * o) + (q + k + v) : (q + k + v) + o;
  return op;
}

// Eager attention as Megatron-LM ran it before FlashAttention: batched GEMMs around a softmax whose
// output (and dropout mask and output) is materialized. Each pass over the s² scores is its own
// kernel: the fused scale-mask-softmax reads the scores and writes the probabilities (2e bytes per
// score); dropout reads them and writes its output and a byte mask (2e + 1). Backward, dropout's
// gradient reads dP and the mask and writes (2e + 1); the softmax gradient reads that and the
// probabilities and writes dS (3e).
//
// Unfused (PyTorch's ops, the softmax in fp32 as Megatron's query-key layer scaling sets it), each
// pass its own kernel over the scores: forward copies them to fp32 (e + 4 bytes a score), scales
// (8) and masks (8) the copy, softmaxes it (8) and casts the probabilities back (4 + e); backward
// casts their gradient to fp32 (e + 4), takes the softmax's gradient (12: it reads the fp32
// probabilities), masks (8) and scales (8) it and casts it back (4 + e).
std::vector<Op> softmax_passes(const Dims& d, double scores, bool backward) {
  if (d.softmax_fused) return {backward ? memory("softmax_grad", scores * 3 * d.e, d.core) : memory("softmax", scores * 2 * d.e, d.core)};
  struct Pass {
    std::string_view name;
    double bytes_per_score;
    bool cast;  // there only when the scores are not fp32 already
  };
  const Pass forward[] = {{"softmax_to_fp32", d.e + 4, true}, {"softmax_scale", 8, false}, {"softmax_mask", 8, false},
                          {"softmax", 8, false}, {"softmax_from_fp32", 4 + d.e, true}};
  const Pass gradient[] = {{"softmax_grad_to_fp32", d.e + 4, true}, {"softmax_grad", 12, false}, {"softmax_mask_grad", 8, false},
                           {"softmax_scale_grad", 8, false}, {"softmax_grad_from_fp32", 4 + d.e, true}};
  std::vector<Op> ops;
  for (const Pass& p : backward ? std::span<const Pass>(gradient) : std::span<const Pass>(forward)) {
    if (!p.cast || d.e < 4) ops.push_back(memory(p.name, scores * p.bytes_per_score, Precision::fp32));
  }
  return ops;
}

// The batched GEMMs address each head's slice of the [tokens, heads, head_dim] projections, so a
// slice starts on 16 bytes only when head_dim x e is a multiple of 16; otherwise none of them can use
// tensor-core kernels (see Op::aligned).
void eager_core(const Dims& d, std::vector<Op>& fwd, std::vector<Op>& bwd) {
  const double heads = d.b * d.heads_local;
  const double scores = d.b * d.heads_local * d.sq * d.skv;  // elements
  const auto starts_on_16_bytes = [&](double head_dim) { return std::fmod(head_dim * d.e, 16.0) == 0.0; };
  const bool aligned = starts_on_16_bytes(d.qk_dim) && starts_on_16_bytes(d.v_dim);
  const auto head_gemm = [&](std::string_view name, double m, double n, double k) {
    Op op = gemm(name, m, n, k, d, d.core, heads);
    op.aligned = aligned;
    return op;
  };
  // An eager implementation computes the whole square and masks it, local layers included.
  fwd.push_back(head_gemm("scores", d.sq, d.skv, d.qk_dim));
  for (auto& op : softmax_passes(d, scores, false)) fwd.push_back(std::move(op));
  if (d.mask > 0) fwd.push_back(memory("attention_dropout", scores * (2 * d.e + d.mask), d.core));
  fwd.push_back(head_gemm("context", d.sq, d.v_dim, d.skv));
  bwd.push_back(head_gemm("context_grad_v", d.skv, d.v_dim, d.sq));
  bwd.push_back(head_gemm("context_grad_p", d.sq, d.skv, d.v_dim));
  if (d.mask > 0) bwd.push_back(memory("attention_dropout_grad", scores * (2 * d.e + d.mask), d.core));
  for (auto& op : softmax_passes(d, scores, true)) bwd.push_back(std::move(op));
  bwd.push_back(head_gemm("scores_grad_q", d.sq, d.qk_dim, d.skv));
  bwd.push_back(head_gemm("scores_grad_k", d.skv, d.qk_dim, d.sq));
}

}  // namespace

std::string_view op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::gemm: return "gemm";
    case OpKind::attention: return "attention";
    case OpKind::attention_grad: return "attention_grad";
    case OpKind::memory_bound: return "memory_bound";
  }
  return "";
}

std::string_view block_kind_name(BlockKind k) {
  switch (k) {
    case BlockKind::embedding: return "embedding";
    case BlockKind::attention: return "attention";
    case BlockKind::mlp: return "mlp";
    case BlockKind::head: return "head";
    case BlockKind::optimizer: return "optimizer";
    case BlockKind::router: return "router";
    case BlockKind::experts: return "experts";
    case BlockKind::shared_experts: return "shared_experts";
    case BlockKind::mtp_projection: return "mtp_projection";
  }
  return "";
}

bool recomputes_by_module(const ModelSpec& m, const TrainingSpec& tr) {
  return tr.selective_recompute == SelectiveRecompute::attention || m.is_mla();
}

BlockShape block_shape(const Plan& p, int seq_len, int micro_batch, Recompute recompute) {
  BlockShape shape{micro_batch, seq_len, p.tp, p.sp, recompute, p.cp, p.cp_kind, p.ep, p.expert_tp()};
  shape.modules = p.recompute_modules;
  return shape;
}

double total_flops(const std::vector<Op>& ops) {
  return std::accumulate(ops.begin(), ops.end(), 0.0, [](double a, const Op& o) { return a + o.flops; });
}
double total_bytes(const std::vector<Op>& ops) {
  return std::accumulate(ops.begin(), ops.end(), 0.0, [](double a, const Op& o) { return a + o.bytes; });
}
double Block::flops(const std::vector<Op>& ops) const { return total_flops(ops); }

namespace {

// What feeds the attention core from the normed input, and its backward: the QKV projection (with
// RoPE and per-head q/k norms) or MLA's latents. Bytes kept for backward, per GPU.
struct Projections {
  std::vector<Op> forward, backward_input, backward_weight;
  double kept = 0;
  /// MLA under mla_up_proj: the bytes of kept not held through forward (Q, K and V; the up
  /// projections' inputs) and the forward ops rerun to make them again (all but the down projections).
  double up_projected = 0;
  std::vector<Op> up_projection;
};

Projections qkv_projections(const ModelSpec& m, const TrainingSpec& tr, const Dims& d) {
  Projections in;
  const double qkv_n = (d.q + 2 * d.kv) / d.t, qk = (d.q + d.kv) / d.t;
  in.forward.push_back(after_norm(gemm("qkv", d.T, qkv_n, d.h, d, d.gemm)));
  if (m.qk_norm) in.forward.push_back(memory("qk_norm", 2 * d.e * d.T * qk, tr.precision));
  if (m.position == PositionEmbedding::rope) in.forward.push_back(memory("rope", 2 * d.e * d.T * qk, tr.precision));
  if (m.position == PositionEmbedding::rope) in.backward_input.push_back(memory("rope_grad", 2 * d.e * d.T * qk, tr.precision));
  if (m.qk_norm) in.backward_input.push_back(memory("qk_norm_grad", 4 * d.e * d.T * qk, tr.precision));
  in.backward_input.push_back(gemm("qkv_dgrad", d.T, d.h, qkv_n, d, d.gemm));
  in.backward_weight.push_back(gemm("qkv_wgrad", d.h, qkv_n, d.T, d, d.gemm));
  // The QKV input; Q, K and V; the q/k norms' inputs.
  in.kept = d.Tr * d.h * d.e_in + d.T * d.e * (d.q + 2 * d.kv) / d.t + (m.qk_norm ? d.T * d.e * qk : 0.0);
  return in;
}

// MLA as Megatron-Core runs it: the down projections (to the query latent, and to the key/value
// latent with the shared rotary key) are duplicated on every TP rank, the up projections column-
// parallel over the heads.
Projections latent_projections(const ModelSpec& m, const TrainingSpec& tr, const Dims& d) {
  const auto& a = m.mla;
  const double n = d.heads_local, qk = a.qk_head_dim(), ql = a.q_lora_rank, kl = a.kv_lora_rank, rope = a.qk_rope_head_dim;
  const double kv_up = n * (a.qk_nope_head_dim + a.v_head_dim), kv_down = kl + rope;
  Projections in;
  auto& f = in.forward;
  // The query projections go in as one list: g++ 12 misreads push_back's growth of this vector as an
  // overflow (-Wstringop-overflow), a false positive.
  if (ql > 0) {
    f = {gemm("q_down", d.T, ql, d.h, d, d.gemm), memory("q_norm", 2 * d.e * d.T * ql, tr.precision),
         after_norm(gemm("q_up", d.T, n * qk, ql, d, d.gemm))};
  } else {
    f = {gemm("q", d.T, n * qk, d.h, d, d.gemm)};
  }
  f.push_back(gemm("kv_down", d.T, kv_down, d.h, d, d.gemm));
  f.push_back(memory("kv_norm", 2 * d.e * d.T * kl, tr.precision));
  f.push_back(after_norm(gemm("kv_up", d.T, kv_up, kl, d, d.gemm)));
  // RoPE on the heads' rotary queries and the shared rotary key, which is then copied to every head.
  f.push_back(memory("rope", 2 * d.e * d.T * (n * rope + rope) + d.e * d.T * n * rope, tr.precision));
  auto& bi = in.backward_input;
  bi.push_back(memory("rope_grad", 2 * d.e * d.T * (n * rope + rope) + d.e * d.T * n * rope, tr.precision));
  bi.push_back(gemm("kv_up_dgrad", d.T, kl, kv_up, d, d.gemm));
  bi.push_back(memory("kv_norm_grad", 4 * d.e * d.T * kl, tr.precision));
  bi.push_back(gemm("kv_down_dgrad", d.T, d.h, kv_down, d, d.gemm));
  auto& bw = in.backward_weight;
  bw.push_back(gemm("kv_up_wgrad", kl, kv_up, d.T, d, d.gemm));
  bw.push_back(gemm("kv_down_wgrad", d.h, kv_down, d.T, d, d.gemm));
  if (ql > 0) {
    bi.push_back(gemm("q_up_dgrad", d.T, ql, n * qk, d, d.gemm));
    bi.push_back(memory("q_norm_grad", 4 * d.e * d.T * ql, tr.precision));
    bi.push_back(gemm("q_down_dgrad", d.T, d.h, ql, d, d.gemm));
    bw.push_back(gemm("q_up_wgrad", ql, n * qk, d.T, d, d.gemm));
    bw.push_back(gemm("q_down_wgrad", d.h, ql, d.T, d, d.gemm));
  } else {
    bi.push_back(gemm("q_dgrad", d.T, d.h, n * qk, d, d.gemm));
    bw.push_back(gemm("q_wgrad", d.h, n * qk, d.T, d, d.gemm));
  }
  // The down projections' input; each latent's norm input and up projection's input; the rotary
  // key; Q, K and V of the rank's heads.
  in.kept = d.Tr * d.h * d.e_in + d.T * (ql + kl) * (d.e + d.e_in) + d.T * rope * d.e + d.T * d.e * n * (2 * qk + a.v_head_dim);
  // Megatron-Core's output-discarding checkpoint runs the up projections without keeping their
  // inputs and frees Q, K and V once the core has used them; the latents it was given stay.
  in.up_projected = d.T * (ql + kl) * d.e_in + d.T * d.e * n * (2 * qk + a.v_head_dim);
  std::copy_if(f.begin(), f.end(), std::back_inserter(in.up_projection), [](const Op& op) { return op.name != "q_down" && op.name != "kv_down"; });
  return in;
}

// torchtitan's op-level selective checkpointing of a Llama layer (its `_save_list` policy): the
// outputs of the attention kernel and of every second matmul in forward order are kept (wq 1, wv 3,
// w1 5, w2 7), with the layer's input; backward reruns what it needs of the rest: the norms, wk and
// RoPE (attention's backward needs the rotated keys), wo (the residual sum is the MLP norm's input),
// w3 and the SwiGLU (w2's input). The MLP's part is in mlp_block.
void keep_every_second_matmul(const ModelSpec& m, const TrainingSpec& tr, const Dims& d, double attention_statistics, Block& blk) {
  const double q = d.q / d.t, kv = d.kv / d.t, v_width = static_cast<double>(m.v_width()) / d.t;
  blk.stored_activation_bytes = d.e * (d.Tr * d.h + d.T * (q + kv + v_width)) + attention_statistics;
  auto& r = blk.recompute;
  r.push_back(memory("norm1", 2 * d.e * d.Tr * d.h, tr.precision));
  r.push_back(after_norm(gemm("k", d.T, kv, d.h, d, d.gemm)));
  const double qk = (d.q + d.kv) / d.t;
  if (m.qk_norm) r.push_back(memory("qk_norm", 2 * d.e * d.T * qk, tr.precision));
  if (m.position == PositionEmbedding::rope) r.push_back(memory("rope", 2 * d.e * d.T * qk, tr.precision));
  r.push_back(gemm("proj", d.T, d.h, v_width, d, d.gemm));
  r.push_back(memory("bias_dropout_add", d.Tr * d.h * (3 * d.e + d.mask), tr.precision));
}

// Megatron-Core's selective recompute of an attention block, by module (workload/recompute_modules.hpp),
// from everything kept: the core (its scores or statistics), MLA's Q, K and V with the up
// projections' inputs, and MLA's input norm's output (the down projections' input; a norm fused
// into its linear, as in every other attention, is no module of its own).
void recompute_attention_modules(const ModelSpec& m, const TrainingSpec& tr, const Dims& d, RecomputeModules modules, const Projections& in,
                                 const std::vector<Op>& core_fwd, double scores, Block& blk) {
  double stored = blk.full_activation_bytes;
  auto& r = blk.recompute;
  if (modules.has(RecomputeModule::layernorm) && m.is_mla()) {
    stored -= d.Tr * d.h * d.e_in;
    r.push_back(memory("norm1", 2 * d.e * d.Tr * d.h, tr.precision));
  }
  if (modules.has(RecomputeModule::mla_up_proj) && m.is_mla()) {
    stored -= in.up_projected;
    r.insert(r.end(), in.up_projection.begin(), in.up_projection.end());
  }
  if (modules.has(RecomputeModule::core_attn)) {
    stored -= scores;
    r.insert(r.end(), core_fwd.begin(), core_fwd.end());
  }
  blk.stored_activation_bytes = stored;
}

struct CoreOps {
  std::vector<Op> forward, backward;
};

void core_ops(const Dims& d, bool flash, CoreOps& core) {
  if (flash) {
    core.forward.push_back(attention_core(d, true, false));
    core.backward.push_back(attention_core(d, true, true));
  } else {
    eager_core(d, core.forward, core.backward);
  }
}

// The block's passes in order: the norm, the projections, the core, the output projection and the
// residual; backward the same in reverse, the weight gradients apart.
// The widths on this rank of the projections' output (q, k and v) and of the attention output.
struct HeadWidths {
  double qkv, v;
};

void attention_passes(const TrainingSpec& tr, const Dims& d, HeadWidths w, const Projections& in, const CoreOps& core, bool flash, Block& blk) {
  auto& f = blk.forward;
  auto& bi = blk.backward_input;
  auto& bw = blk.backward_weight;
  f.push_back(memory("norm1", 2 * d.e * d.Tr * d.h, tr.precision));
  f.insert(f.end(), in.forward.begin(), in.forward.end());
  // FlashAttention-1's only interface takes unpadded (varlen) tokens: q, k and v are gathered out of
  // the padded batch before the kernel and the output scattered back into zeros after it; backward
  // gathers the output gradient, scatters q, k and v's gradients into zeros and concatenates them
  // into the QKV projection's gradient.
  const bool unpadded = flash && d.flash_kernel == FlashKernel::flash1;
  const double qkv_width = w.qkv, v_width = w.v;
  if (unpadded) f.push_back(memory("unpad_qkv", 2 * d.e * d.T * qkv_width, tr.precision));
  f.insert(f.end(), core.forward.begin(), core.forward.end());
  if (unpadded) f.push_back(memory("pad_output", 3 * d.e * d.T * v_width, tr.precision));
  f.push_back(gemm("proj", d.T, d.h, v_width, d, d.gemm));
  f.push_back(memory("bias_dropout_add", d.Tr * d.h * (3 * d.e + d.mask), tr.precision));

  bi.push_back(memory("bias_dropout_add_grad", d.Tr * d.h * (2 * d.e + d.mask), tr.precision));
  bi.push_back(gemm("proj_dgrad", d.T, v_width, d.h, d, d.gemm));
  if (unpadded) bi.push_back(memory("pad_output_grad", 2 * d.e * d.T * v_width, tr.precision));
  bi.insert(bi.end(), core.backward.begin(), core.backward.end());
  if (unpadded) bi.push_back(memory("unpad_qkv_grad", 5 * d.e * d.T * qkv_width, tr.precision));
  bi.insert(bi.end(), in.backward_input.begin(), in.backward_input.end());
  bi.push_back(memory("norm1_grad", 4 * d.e * d.Tr * d.h, tr.precision));
  bw.push_back(gemm("proj_wgrad", v_width, d.h, d.T, d, d.gemm));
  bw.insert(bw.end(), in.backward_weight.begin(), in.backward_weight.end());
}

// What the block keeps for backward without recompute, and what its backward holds beside that.
// Returns the core's share of what is kept (its statistics, or the eager scores).
double attention_memory(const Dims& d, HeadWidths w, const Projections& in, bool flash, Block& blk) {
  const double v_width = w.v;
  // Stored for backward (see the header for the term-by-term account): the norm input and the
  // dropout mask, what the projections keep, the output projection's input, the core's statistics.
  const double kept = d.Tr * d.h * (d.e + d.mask) + in.kept + d.T * d.e_in * v_width;
  const double score_elems = d.b * d.heads_local * d.sq * d.skv;
  // Eager: the probabilities (the fused softmax's backward reads them; the context GEMM too), with
  // dropout its mask and the dropped probabilities; unfused, the softmax keeps its fp32 output beside
  // the cast the GEMM or dropout reads.
  const double kept_per_score = d.softmax_fused ? d.e + d.mask * (1 + d.e) : 4 + d.e + d.mask;
  const double scores = flash ? 4.0 * d.b * d.heads_local * d.sq  // softmax statistics (fp32)
                              : score_elems * kept_per_score;
  blk.full_activation_bytes = kept + scores;
  // Backward holds beside what the block kept: its output's gradient, until the residual sum takes
  // it, and the core's gradients. Eager: the probabilities' gradient, s² elements a head (Megatron's
  // fused softmax writes the scores' gradient over it), and with dropout the dropped probabilities'
  // gradient beside it; unfused, the chain's fp32 gradients, two at a time (each pass's input and
  // output). Flash: q, k and v's gradients beside the output's.
  const double fused_transient = d.e * (d.mask > 0 ? 2 : 1);
  const double eager_transient = score_elems * (d.softmax_fused ? fused_transient : std::max(fused_transient, 8.0));
  blk.transient_bytes = d.e * d.Tr * d.h + (flash ? d.e * d.T * (w.qkv + v_width) : eager_transient);
  return scores;
}

}  // namespace

Block attention_block(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  const Dims d = dims_of(m, tr, sh);
  const bool flash = tr.attention == AttentionKernel::flash;
  Block blk;
  blk.kind = BlockKind::attention;
  const auto in = m.is_mla() ? latent_projections(m, tr, d) : qkv_projections(m, tr, d);
  const HeadWidths widths{(d.q + 2 * d.kv) / d.t, static_cast<double>(m.v_width()) / d.t};
  CoreOps core;
  core_ops(d, flash, core);
  attention_passes(tr, d, widths, in, core, flash, blk);
  const double scores = attention_memory(d, widths, in, flash, blk);
  switch (sh.recompute) {
    case Recompute::none: blk.stored_activation_bytes = blk.full_activation_bytes; break;
    case Recompute::selective:
      if (!recomputes_by_module(m, tr)) {
        keep_every_second_matmul(m, tr, d, scores, blk);
        break;
      }
      recompute_attention_modules(m, tr, d, sh.modules, in, core.forward, scores, blk);
      break;
    case Recompute::full:
      blk.stored_activation_bytes = d.e * d.Tr * d.h;  // the layer's input only
      blk.recompute = blk.forward;
      break;
  }
  add_fp8_quantization(blk);
  add_gradient_accumulation(blk, tr);
  return blk;
}

namespace {

// Selective recompute of the MLP: Megatron-Core's mlp module reruns it whole, torchtitan's op-level
// policy the norm, w3 and the activation; otherwise everything is kept.
void recompute_mlp_selectively(const ModelSpec& m, const TrainingSpec& tr, const Dims& d, RecomputeModules modules, Block& blk) {
  const bool swiglu = m.activation == Activation::swiglu;
  const double up = (swiglu ? 2 : 1) * d.f / d.t;
  const double inner = d.f / d.t;
  blk.stored_activation_bytes = blk.full_activation_bytes;
  // Megatron-Core's mlp module: a checkpoint of the whole MLP keeps its input (the norm's, the
  // residual stream) and reruns it all; the dropout after it is outside, its mask kept.
  if (recomputes_by_module(m, tr) && modules.has(RecomputeModule::mlp)) {
    blk.stored_activation_bytes = d.Tr * d.h * (d.e + d.mask);
    std::copy_if(blk.forward.begin(), blk.forward.end(), std::back_inserter(blk.recompute), [](const Op& op) { return op.name != "bias_dropout_add"; });
  }
  // torchtitan's op-level policy (see keep_every_second_matmul): w1's output and w2's are kept
  // (fc1's alone without a gate); the norm, w3 and the activation are rerun.
  if (!recomputes_by_module(m, tr)) {
    blk.stored_activation_bytes = swiglu ? d.e * d.T * (inner + d.h) : d.e * d.T * up;
    blk.recompute.push_back(memory("norm2", 2 * d.e * d.Tr * d.h, tr.precision));
    if (swiglu) blk.recompute.push_back(after_norm(gemm("fc1_up", d.T, inner, d.h, d, d.gemm)));
    blk.recompute.push_back(memory(swiglu ? "swiglu" : "gelu", d.e * d.T * (up + inner), tr.precision));
  }
}

}  // namespace

Block mlp_block(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  const Dims d = dims_of(m, tr, sh);
  const bool swiglu = m.activation == Activation::swiglu;
  const double up = (swiglu ? 2 : 1) * d.f / d.t;  // fc1 output width per GPU
  const double inner = d.f / d.t;
  Block blk;
  blk.kind = BlockKind::mlp;
  auto& f = blk.forward;
  f.push_back(memory("norm2", 2 * d.e * d.Tr * d.h, tr.precision));
  f.push_back(after_norm(gemm("fc1", d.T, up, d.h, d, d.gemm)));
  f.push_back(memory(swiglu ? "swiglu" : "gelu", d.e * d.T * (up + inner), tr.precision));
  f.push_back(gemm("fc2", d.T, d.h, inner, d, d.gemm));
  f.push_back(memory("bias_dropout_add", d.Tr * d.h * (3 * d.e + d.mask), tr.precision));

  auto& bi = blk.backward_input;
  bi.push_back(memory("bias_dropout_add_grad", d.Tr * d.h * (2 * d.e + d.mask), tr.precision));
  bi.push_back(gemm("fc2_dgrad", d.T, inner, d.h, d, d.gemm));
  bi.push_back(memory(swiglu ? "swiglu_grad" : "gelu_grad", d.e * d.T * (2 * up + inner), tr.precision));
  bi.push_back(gemm("fc1_dgrad", d.T, d.h, up, d, d.gemm));
  bi.push_back(memory("norm2_grad", 4 * d.e * d.Tr * d.h, tr.precision));
  auto& bw = blk.backward_weight;
  bw.push_back(gemm("fc2_wgrad", inner, d.h, d.T, d, d.gemm));
  bw.push_back(gemm("fc1_wgrad", d.h, up, d.T, d, d.gemm));

  const double replicated = d.Tr * d.h * (d.e + d.e_in + d.mask);  // norm input, fc1 input, dropout mask
  const double split = d.T * (d.e * up + d.e_in * inner);           // activation input, fc2 input
  blk.full_activation_bytes = replicated + split;
  // Backward holds beside what the block kept: its output's gradient, until the residual sum takes
  // it, and at the activation's backward fc1's output gradient (`up` wide) beside the inner one,
  // whose own input (fc2's, as wide) fc2's backward has released by then.
  blk.transient_bytes = d.e * (d.Tr * d.h + d.T * up);
  switch (sh.recompute) {
    case Recompute::none: blk.stored_activation_bytes = blk.full_activation_bytes; break;
    case Recompute::selective: recompute_mlp_selectively(m, tr, d, sh.modules, blk); break;
    case Recompute::full:
      blk.stored_activation_bytes = 0;  // recomputed from the layer input kept by the attention block
      blk.recompute = f;
      // The down projection's output is saved by nothing backward runs (the residual add keeps no
      // input; a dropout after it would keep its mask, and rerunning it needs the projection), so
      // a checkpoint that stops early never reruns it.
      if (tr.recompute_early_stop && d.mask == 0) {
        blk.recompute.erase(std::find_if(blk.recompute.begin(), blk.recompute.end(), [](const Op& op) { return op.name == "fc2"; }),
                            blk.recompute.end());
      }
      break;
  }
  add_fp8_quantization(blk);
  add_gradient_accumulation(blk, tr);
  return blk;
}

Block embedding_block(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  const Dims d = dims_of(m, tr, sh);
  Block blk;
  blk.kind = BlockKind::embedding;
  // Vocabulary-parallel lookup: each rank writes its rows of T x h, then a TP all-reduce (or
  // reduce-scatter with SP) completes them; positions are added and dropout applied.
  blk.forward.push_back(memory("embedding", 2 * d.e * d.T * d.h, tr.precision));
  blk.forward.push_back(memory("embedding_dropout", d.Tr * d.h * (2 * d.e + d.mask), tr.precision));
  blk.backward_weight.push_back(memory("embedding_grad", 3 * d.e * d.T * d.h, tr.precision));
  blk.full_activation_bytes = blk.stored_activation_bytes = d.Tr * d.h * d.mask;
  // Encoders: segment embeddings added (read and added like the positions) and post-LN's norm on
  // the sum, whose input backward keeps.
  if (m.token_types > 0) {
    blk.forward.push_back(memory("token_type_embedding", 2 * d.e * d.Tr * d.h, tr.precision));
    blk.backward_weight.push_back(memory("token_type_embedding_grad", 2 * d.e * d.Tr * d.h, tr.precision));
  }
  if (m.post_norm) {
    blk.forward.push_back(memory("embedding_norm", 2 * d.e * d.Tr * d.h, tr.precision));
    blk.backward_weight.push_back(memory("embedding_norm_grad", 4 * d.e * d.Tr * d.h, tr.precision));
    blk.full_activation_bytes = blk.stored_activation_bytes += d.e * d.Tr * d.h;
  }
  // The vocabulary-parallel table: its rows of the padded vocabulary on this rank.
  add_fp8_quantization(blk);
  add_gradient_accumulation(blk, tr, static_cast<double>(padded_vocab(m, sh.tp)) / d.t * d.h);
  return blk;
}

namespace {

// Bytes the loss moves and holds per logit (of the rank's vocabulary shard), by its kernels.
struct LossBytes {
  double forward, backward;
  double kept;       ///< what backward needs
  double transient;  ///< held beyond it while forward or backward runs
};

LossBytes loss_bytes(CrossEntropy loss, double e, double tp) {
  // Megatron-LM's vocabulary-parallel cross-entropy is a chain of unfused passes over the rank's
  // logits, bytes per logit: the cast to fp32 (e read, 4 written), the max (4), subtracting it in
  // place (8), exp in place (8), the sum (4), dividing by it in place (8): e + 36; the fp32 softmax
  // is kept. Backward scales it by the loss gradient in place (8) and casts it back for the head
  // (4 + e). A fused kernel reads the logits once for the log-sum-exp, and once more in backward to
  // write their gradient; the logits themselves are kept. PyTorch's cross_entropy over an fp32 copy
  // casts (e + 4) and takes the log-softmax (a max and a sum-exp pass over the copy, the output
  // written: 12), keeping the log-softmax; backward writes the gradient of the log-probabilities (4),
  // the log-softmax backward reads it and the kept output and writes the input's gradient (12), cast
  // back (4 + e). At a 131K vocabulary and hidden 2048 the unfused passes move more bytes than the
  // whole layer stack.
  //
  // Over vocabulary-sharded logits (tp > 1: torchtitan's default loss_parallel) PyTorch runs DTensor's
  // decomposition instead, each step its own kernel and tensor: the fp32 copy (e + 4), its max (4),
  // the shifted copy (8), its exponentials summed (4 + 4 written, then read: 12), the log-softmax
  // from the shifted copy (8): e + 36, the log-softmax kept. Backward builds the logits' gradient
  // from zeros (4), adds the exponentials of the kept log-softmax (8 for the exp, 12 for the sum),
  // scales it by the loss gradient (12) and casts it back (4 + e): 40 + e.
  const bool loss_parallel = loss == CrossEntropy::torch && tp > 1;
  LossBytes b;
  b.forward = loss == CrossEntropy::fused ? e : loss_parallel ? e + 36 : loss == CrossEntropy::torch ? e + 16 : e + 36;
  b.backward = loss == CrossEntropy::fused ? 2 * e : loss_parallel ? 40 + e : loss == CrossEntropy::torch ? 20 + e : 12 + e;
  // Kept: the fp32 softmax (unfused), the fp32 log-softmax (torch) or the logits (fused).
  b.kept = loss == CrossEntropy::fused ? e : 4.0;
  // Beyond what is kept, per logit: Megatron-LM's chain holds the head's e-byte logits while it
  // computes the fp32 softmax from them, and in backward the gradient cast back (e); a fused kernel
  // its gradient (e); PyTorch's the logits and their fp32 copy in forward (e + 4), in backward the
  // gradients of the log-probabilities and of the logits in fp32 (8) beside the kept log-softmax.
  // Loss-parallel's decomposition holds more at once: in forward the logits, the fp32 copy, the
  // shifted copy and its exponentials (e + 12 before the log-softmax exists, so e + 8 beyond the 4
  // kept); in backward, beside the kept log-softmax, the zeros-built gradient, its sum with the
  // exponentials and their product with the loss gradient (12).
  b.transient = loss_parallel ? std::max(e + 8, 12.0) : loss == CrossEntropy::torch ? std::max(e + 4, 8.0) : e;
  return b;
}

}  // namespace

Block head_block(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  const Dims d = dims_of(m, tr, sh);
  const double v = static_cast<double>(padded_vocab(m, sh.tp)) / d.t;
  // Transformer Engine keeps the output layer out of fp8.
  const Precision head = tr.precision == Precision::fp8 ? Precision::bf16 : tr.precision;
  Block blk;
  blk.kind = BlockKind::head;
  // Post-LN models norm inside every layer and have no final norm; BERT's masked-LM head
  // transforms the rank's tokens first (a replicated dense layer, GELU, LayerNorm).
  if (!m.post_norm) blk.forward.push_back(memory("final_norm", 2 * d.e * d.Tr * d.h, tr.precision));
  if (m.mlm_head) {
    blk.forward.push_back(gemm("mlm_transform", d.Tr, d.h, d.h, d, head));
    blk.forward.push_back(memory("mlm_gelu_norm", 4 * d.e * d.Tr * d.h, tr.precision));
  }
  blk.forward.push_back(gemm("lm_head", d.T, v, d.h, d, head));
  const double logits = d.T * v;
  const LossBytes loss = loss_bytes(tr.cross_entropy, d.e, d.t);
  blk.forward.push_back(memory("cross_entropy", logits * loss.forward, Precision::fp32));
  blk.backward_input.push_back(memory("cross_entropy_grad", logits * loss.backward, Precision::fp32));
  blk.backward_input.push_back(gemm("lm_head_dgrad", d.T, d.h, v, d, head));
  if (!m.post_norm) blk.backward_input.push_back(memory("final_norm_grad", 4 * d.e * d.Tr * d.h, tr.precision));
  blk.backward_weight.push_back(gemm("lm_head_wgrad", d.h, v, d.T, d, head));
  // Final-norm input, LM-head input, and the fp32 softmax (unfused), the fp32 log-softmax (torch) or
  // the logits (fused).
  blk.full_activation_bytes = blk.stored_activation_bytes = d.e * d.Tr * d.h * 2 + loss.kept * logits;
  blk.transient_bytes = logits * loss.transient;
  if (m.mlm_head) {
    blk.backward_input.push_back(memory("mlm_gelu_norm_grad", 6 * d.e * d.Tr * d.h, tr.precision));
    blk.backward_input.push_back(gemm("mlm_transform_dgrad", d.Tr, d.h, d.h, d, head));
    blk.backward_weight.push_back(gemm("mlm_transform_wgrad", d.h, d.h, d.Tr, d, head));
    // The transform's input, GELU input and norm input (in place of the final norm's).
    blk.full_activation_bytes = blk.stored_activation_bytes += d.e * d.Tr * d.h * (m.post_norm ? 2 : 3);
  }
  add_fp8_quantization(blk);
  add_gradient_accumulation(blk, tr);
  return blk;
}

Block mtp_projection_block(const ModelSpec& m, const TrainingSpec& tr, const BlockShape& sh) {
  const Dims d = dims_of(m, tr, sh);
  Block blk;
  blk.kind = BlockKind::mtp_projection;
  // The projection is column-parallel over its h outputs (Megatron-Core's eh_proj).
  blk.forward.push_back(memory("mtp_embedding", 2 * d.e * d.T * d.h, tr.precision));
  blk.forward.push_back(memory("mtp_norms", 2 * 2 * d.e * d.Tr * d.h, tr.precision));
  blk.forward.push_back(gemm("mtp_eh_proj", d.T, d.h / d.t, 2 * d.h, d, d.gemm));
  blk.backward_input.push_back(gemm("mtp_eh_proj_dgrad", d.T, 2 * d.h, d.h / d.t, d, d.gemm));
  blk.backward_input.push_back(memory("mtp_norms_grad", 2 * 4 * d.e * d.Tr * d.h, tr.precision));
  blk.backward_weight.push_back(gemm("mtp_eh_proj_wgrad", 2 * d.h, d.h / d.t, d.T, d, d.gemm));
  blk.backward_weight.push_back(memory("mtp_embedding_grad", 3 * d.e * d.T * d.h, tr.precision));
  // Both norms' inputs and the projection's input.
  blk.full_activation_bytes = blk.stored_activation_bytes = 2 * d.Tr * d.h * d.e + d.T * 2 * d.h * d.e_in;
  add_fp8_quantization(blk);
  add_gradient_accumulation(blk, tr);
  return blk;
}

void add_fp8_quantization(Block& blk) {
  const auto fp8_gemm = [](const Op& op) { return op.kind == OpKind::gemm && op.precision == Precision::fp8; };
  const auto any_fp8 = [&](const std::vector<Op>& ops) { return std::any_of(ops.begin(), ops.end(), fp8_gemm); };
  if (!any_fp8(blk.forward) && !any_fp8(blk.backward_input)) return;
  const auto with_casts = [&](const std::vector<Op>& ops, bool forward) {
    std::vector<Op> out;
    out.reserve(ops.size() * 2);
    for (const Op& op : ops) {
      if (fp8_gemm(op)) {
        const double input = static_cast<double>(op.m) * static_cast<double>(op.k) * std::max(op.batch, 1);
        out.push_back(memory("fp8_cast", input * (forward && op.input_cast_fused ? 1.0 : 4.0), Precision::bf16));
      }
      out.push_back(op);
    }
    return out;
  };
  blk.forward = with_casts(blk.forward, true);
  blk.recompute = with_casts(blk.recompute, true);
  blk.backward_input = with_casts(blk.backward_input, false);
}

void add_gradient_accumulation(Block& blk, const TrainingSpec& tr, double other_weights) {
  if (tr.gradient_accumulation_fusion) return;
  double weights = other_weights;
  for (const Op& op : blk.backward_weight) {
    if (op.kind == OpKind::gemm) weights += static_cast<double>(op.m) * static_cast<double>(op.n) * std::max(op.batch, 1);
  }
  if (weights <= 0) return;
  // Read the gradient and the accumulator, write the accumulator; a cast copy is written and read
  // once more.
  const double copy = tr.gradient_accumulation_copy ? 2 * tr.gradient_bytes() : 0.0;
  blk.backward_weight.push_back(memory("grad_accumulation", weights * (tr.element_bytes() + 2 * tr.gradient_bytes() + copy), Precision::fp32));
}

Block optimizer_block(double params, const TrainingSpec& tr) {
  Block blk;
  blk.kind = BlockKind::optimizer;
  // Adam reads and writes its state (master weights, momentum, variance), reads the gradient and
  // writes the working-precision weights: 2·12 + 4 + 2 = 30 bytes per parameter.
  const double bytes = params * (2 * tr.optimizer_bytes_per_param + tr.gradient_bytes() + tr.weight_bytes());
  blk.forward.push_back(memory("adam", bytes, Precision::fp32));
  return blk;
}

double training_flops_per_token(const ModelSpec& m, int seq_len, int tp) {
  // Per layer the weights a token meets: the dense MLP's, or in a MoE layer the router, its top_k
  // experts and the shared experts (workload/moe_ops.hpp).
  double layer_weights = 0;
  for (int l = 0; l < m.layers; ++l) layer_weights += layer_active_matmul_weights(m, l);
  double head = static_cast<double>(m.hidden) * padded_vocab(m, tp);
  if (m.mlm_head) head += static_cast<double>(m.hidden) * m.hidden;  // BERT's dense transform before the decoder
  // Each multi-token-prediction module: the 2h x h projection, a layer like the last, and the head.
  const double mtp = m.mtp_layers * (2.0 * m.hidden * m.hidden + layer_active_matmul_weights(m, m.layers - 1) + head);
  // Attention: 6·s_eff·heads·(d_qk + d_v) per layer, s_eff the keys a query attends (the window on
  // local layers); 12·s·q_width where heads·d_qk = heads·d_v = q_width.
  const double qk_v = m.is_mla() ? m.mla.qk_head_dim() + m.mla.v_head_dim : 2.0 * m.head_dim;
  double attention = 0;
  for (int l = 0; l < m.layers; ++l) attention += 6.0 * m.attended_keys(l, seq_len) * m.heads * qk_v;
  attention += m.mtp_layers * 6.0 * m.attended_keys(m.layers - 1, seq_len) * m.heads * qk_v;
  return 6.0 * (layer_weights + head + mtp) + attention;
}

double megatron_flops(const ModelSpec& m, double samples, int seq_len, int vocab, bool full_recompute) {
  const double B = samples, s = seq_len, l = m.layers, h = m.hidden, V = vocab;
  if (full_recompute) return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  return 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
}

}  // namespace parasim::workload
