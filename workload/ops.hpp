#pragma once
// What one Transformer block does on one GPU for one micro-batch: GEMMs with their M, N, K, the
// attention core, memory-bound ops with the bytes they move, and the activation bytes kept for
// backward. Counts are per GPU after tensor parallelism (tp = t) and, with sequence parallelism,
// after splitting the sequence too.
//
// Activation accounting follows Korthikanti et al. 2022 (Reducing Activation Recomputation), term by
// term, so that for a GPT layer with dropout and eager attention it adds up to
// s·b·h·(10 + 24/t + 5·a·s/(h·t)) bytes without SP and s·b·h·(34 + 5·a·s/h)/t with SP:
//   replicated across TP ranks unless SP (the "10"): norm inputs 2sbh x 2, QKV and fc1 inputs
//     2sbh x 2, dropout masks sbh x 2;
//   split by t (the "24"): Q and K 4sbh, V 2sbh, projection input 2sbh, fc1 output (GELU input) 8sbh,
//     GELU output 8sbh;
//   attention scores (the "5as/h"): softmax output 2as²b, dropout mask as²b, dropout output 2as²b
//     (with the softmax unfused, training.eager_softmax, its fp32 output 4as²b beside the dropout's
//     bf16 output: 7as²b).
// FlashAttention keeps no scores, only the softmax statistics (fp32, 4·a·s·b/t). In fp8 training
// (Transformer Engine) the inputs of the fp8 GEMMs kept for the weight gradients — QKV, projection,
// fc1 and fc2 inputs — are their fp8 casts, one byte per element; the rest stays bf16.
//
// Context parallelism (cp = c) gives each rank s/c tokens of every sample: every token-proportional
// count (GEMMs, memory-bound ops, stored activations) is divided by c. The attention core differs by
// kind. Ring: the rank's s/c queries meet all s keys as the KV chunks come round; with Megatron-LM's
// causal load balancing (rank i holds chunks i and 2c−1−i of 2c) each rank does 1/c of the causal
// s² work: the core is s/c queries × s keys, causal, a/t heads. Ulysses: after the all-to-all the rank
// holds the whole sequence for a/(t·c) heads: s × s, causal. Both give the core 1/c of its FLOPs.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/precision.hpp"
#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"

namespace parasim::workload {

enum class OpKind {
  gemm,            ///< dense matrix multiply, C[m x n] = A[m x k] B[k x n]
  attention,       ///< attention core forward (QK^T, softmax, AV)
  attention_grad,  ///< attention core backward
  memory_bound,    ///< norms, activations, dropout, residual adds, softmax, cross-entropy, optimizer
};

std::string_view op_kind_name(OpKind kind);

struct Op {
  std::string_view name;
  OpKind kind = OpKind::gemm;
  Precision precision = Precision::bf16;
  std::int64_t m = 0, n = 0, k = 0;  ///< GEMM shape
  // Attention core shape (per GPU).
  int batch = 0, heads = 0, kv_heads = 0, seq_q = 0, seq_kv = 0, head_dim = 0;
  /// Local attention: a query meets at most `window` keys (0: all), the ones before it (a sliding
  /// window) or those of its own chunk of `window` tokens (chunked).
  int window = 0;
  bool chunked = false;
  bool causal = true;
  bool flash = true;
  FlashKernel flash_kernel = FlashKernel::native;  ///< which generation, where the GPU runs them differently
  /// A GEMM whose operand rows all start on 16 bytes, as tensor-core kernels load them. False for a
  /// 16-bit GEMM over per-head slices whose head dim is not a multiple of 8 (BLOOM's 108): cuBLAS then
  /// has no tensor-core kernel for it and runs it on the CUDA cores (calibrate/cost_model.hpp).
  bool aligned = true;
  /// fp8: the norm ahead writes this GEMM's input already cast (Transformer Engine's LayerNormLinear),
  /// leaving only the transposed copy to make (add_fp8_quantization).
  bool input_cast_fused = false;
  double flops = 0;  ///< model FLOPs (matrix products only; elementwise work is counted in bytes)
  double bytes = 0;  ///< bytes read and written in HBM
  bool operator==(const Op&) const = default;
};

/// Which part of the model a block is. A MoE layer has three in place of the MLP (workload/moe_ops.hpp):
/// the router, the routed experts and the shared experts.
enum class BlockKind { embedding, attention, mlp, head, optimizer, router, experts, shared_experts, mtp_projection };
std::string_view block_kind_name(BlockKind kind);

/// One block's work for one micro-batch on one GPU, per pass.
struct Block {
  BlockKind kind = BlockKind::attention;
  std::vector<Op> forward;
  std::vector<Op> backward_input;   ///< gradients of the inputs (dgrad GEMMs, attention backward, …)
  std::vector<Op> backward_weight;  ///< gradients of the weights (wgrad GEMMs)
  std::vector<Op> recompute;        ///< what backward reruns of the forward (selective or full)
  /// Bytes kept from forward to backward under the block's recompute setting.
  double stored_activation_bytes = 0;
  /// Bytes the block's forward produces for backward without recompute (its working set when it is
  /// recomputed).
  double full_activation_bytes = 0;
  /// Bytes beyond the stored ones its passes hold for a moment: the loss's logits, fp32 copies and
  /// gradients; a layer block's backward gradients (its output's, held for the residual sum, and the
  /// widest it makes). They add to the activations alive when the block runs.
  double transient_bytes = 0;
  bool operator==(const Block&) const = default;

  double flops(const std::vector<Op>& ops) const;
};

double total_flops(const std::vector<Op>& ops);
double total_bytes(const std::vector<Op>& ops);

/// The shape a block is built for.
struct BlockShape {
  int micro_batch = 1;
  int seq_len = 2048;
  int tp = 1;
  bool sp = false;
  Recompute recompute = Recompute::none;
  int cp = 1;  ///< context-parallel degree: the block sees seq_len / cp tokens of each sample
  CpKind cp_kind = CpKind::ring;
  int ep = 1;   ///< expert parallelism: a MoE layer's experts spread over ep ranks
  int etp = 1;  ///< expert tensor parallelism: each expert split over etp ranks
  bool local = false;  ///< a layer with local attention (ModelSpec::local_attention_layer)
  RecomputeModules modules = RecomputeModules();  ///< what selective recompute reruns (workload/recompute_modules.hpp)
};

/// Whether selective recompute reruns Megatron-Core's modules (BlockShape::modules) rather than
/// torchtitan's op-level policy (TrainingSpec::selective_recompute), which has no MLA form.
bool recomputes_by_module(const ModelSpec& model, const TrainingSpec& training);

/// The shape of a plan's blocks: a micro-batch of `micro_batch` samples under `recompute`.
BlockShape block_shape(const Plan& plan, int seq_len, int micro_batch, Recompute recompute);

Block attention_block(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);
Block mlp_block(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);
/// Token (and position) embedding of the first stage.
Block embedding_block(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);
/// Final norm, LM head over the padded vocabulary and cross-entropy of the last stage.
Block head_block(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);
/// The entry of a multi-token-prediction module (DeepSeek-V3): the next tokens' embedding looked up
/// again, it and the hidden state normed, and their concatenation projected from 2h to h. The
/// module's layer and its head are the model's attention, MLP (or MoE) and head blocks.
Block mtp_projection_block(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);
/// Without gradient-accumulation fusion each micro-batch's weight gradients are written by the
/// wgrad GEMMs and a separate pass adds them to the accumulator: reads the gradient (element bytes)
/// and reads and writes the accumulator (gradient bytes each). Appends that pass over the weights
/// the block's wgrad GEMMs produce plus `other_weights` (elements on this GPU) to its weight-gradient
/// ops; nothing with the fusion.
/// fp8 training quantizes each fp8 GEMM's activation input in forward (and recompute) and its output
/// gradient in backward into a row-wise and a transposed (column-wise) fp8 copy, as Transformer
/// Engine does for Hopper's fp8 GEMMs: a pass reading 2 bytes and writing 1 + 1 an element, before the
/// GEMM. Where TE fuses the norm ahead into the cast (Op::input_cast_fused: Megatron-Core's
/// TELayerNormColumnParallelLinear, qkv, q_up, kv_up, fc1), the norm writes fp8 (one byte less) and
/// only the transpose remains (read 1, write 1): 1 byte an element net. Weights are cast once per
/// iteration and left out.
void add_fp8_quantization(Block& block);
void add_gradient_accumulation(Block& block, const TrainingSpec& training, double other_weights = 0);
/// Adam step over `params` parameters held by this GPU (fp32 master, momentum, variance).
Block optimizer_block(double params, const TrainingSpec& training);

/// Training FLOPs per token of the whole model, as the task graph counts them (forward + backward,
/// no recompute): GEMMs 6 per matmul parameter a token uses (MoE layers: router, top_k experts,
/// shared experts; the LM head over the *padded* vocabulary for `tp`) plus attention
/// 12·l·s·(heads·head_dim).
double training_flops_per_token(const ModelSpec& model, int seq_len, int tp = 1);

/// Megatron-LM's model-FLOPs formula for a GPT iteration of B samples:
/// 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)); with full recompute 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)).
double megatron_flops(const ModelSpec& model, double samples, int seq_len, int vocab, bool full_recompute);

}  // namespace parasim::workload
