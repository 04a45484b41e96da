#pragma once
// How a model is trained, apart from the parallel plan: numeric formats, sequence length, the
// attention and loss kernels, how gradients accumulate and tensor-parallel gradients reduce, which
// engines run ZeRO and what the optimizer keeps per parameter.
#include "core/precision.hpp"
#include "core/schema.hpp"

namespace parasim::workload {

enum class AttentionKernel {
  flash,  ///< FlashAttention-class: scores never stored, recomputed in backward
  eager,  ///< scores and softmax stored (Megatron-LM before 2022)
};

/// How eager attention's scale-mask-softmax runs over the s x s scores.
enum class EagerSoftmax {
  fused,    ///< Megatron's fused scale-mask-softmax: one kernel each way over the scores
  unfused,  ///< PyTorch's ops: the scores copied to fp32 (Megatron's default query-key layer scaling
            ///< makes the softmax fp32), scaled, masked, softmaxed and cast back; the reverse in backward
  /// Fused where the micro-batch's b·np causal score matrices (np: the heads on the rank) fill whole
  /// blocks of 256/p of them, p being np rounded up to a power of two (8 from 32 heads on), unfused
  /// elsewhere: BigScience's Megatron-DeepSpeed from October 2021 to March 2022 passed its arguments to
  /// the kernel's block-size query out of order, so the block was sized by the heads instead of the keys.
  fused_by_head_count,
};
/// Whether eager attention's softmax runs fused for b sequences of `heads_local` causal score matrices.
bool eager_softmax_fused(EagerSoftmax rule, double micro_batch, double heads_local, bool causal);

/// How Adam steps: what its update holds beside its state for the step.
enum class OptimizerKernel {
  fused,    ///< one multi-tensor kernel updates in place (Transformer Engine's or apex's FusedAdam, DeepSpeed's)
  foreach,  ///< PyTorch's foreach AdamW (torch.optim's default on GPUs; Megatron-LM without Transformer Engine
            ///< or apex falls back to it): sqrt(v) taken out of place, a copy of the second moments
};

/// How the loss over the vocabulary is computed: it moves more bytes than a layer when the vocabulary
/// is large against the hidden size.
enum class CrossEntropy {
  unfused,  ///< Megatron-LM's vocabulary-parallel chain of passes over fp32 logits (its default)
  fused,    ///< one kernel each way over the bf16 logits (flash-attn's, llm-foundry's default; XLA)
  torch,    ///< PyTorch's cross_entropy over an fp32 copy of the logits (torchtitan, Hugging Face): the
            ///< log-softmax kept, its gradient out of place
};

/// What selective recompute keeps and reruns.
enum class SelectiveRecompute {
  attention,  ///< the attention core is rerun, everything else kept (Megatron-LM, Korthikanti et al.)
  ops,        ///< torchtitan's op-level policy: a layer's attention outputs and every second matmul's
              ///< output kept (wq, wv, w1, w2 of a Llama layer), the other matmuls and every
              ///< elementwise op rerun
};

/// Which engine shards parameters under ZeRO-3; they differ in what a recomputed layer gathers.
enum class Zero3Engine {
  fsdp,       ///< PyTorch FSDP: a layer's flat parameter gathered (and its gradient reduced) whole; gathered
              ///< for backward, it stays gathered through its recompute
  deepspeed,  ///< DeepSpeed ZeRO-3: a module's parameters gathered at a time by its forward hooks, released
              ///< after, so gathered again for backward after a recompute; gradients reduced in buckets
};

/// When a ZeRO-3 backward gathers the next layer's parameters (PyTorch FSDP's backward_prefetch). All
/// collectives of a stage share one NCCL stream, so what matters is whether the gather is queued
/// ahead of the current layer's gradient reduce-scatter.
enum class Zero3Prefetch {
  none,  ///< a layer's gather is issued when its backward is reached, behind the previous layer's
         ///< reduce-scatter: both sit between consecutive layers (FSDP's backward_prefetch=None)
  post,  ///< issued once the current layer's gradients are computed, ahead of their reduce-scatter
         ///< (FSDP's BACKWARD_POST, Composer's default): the next layer waits for the gather alone
  pre,   ///< issued when the current layer's backward starts (FSDP's BACKWARD_PRE, PyTorch's
         ///< default; XLA's latency-hiding scheduler): it runs under the layer's compute
};

/// The flash-attention kernel, where a GPU runs more than one generation of it differently.
enum class FlashKernel {
  native,  ///< the GPU's own (its profile's attention figures: FlashAttention-3/cuDNN on Hopper)
  flash1,  ///< FlashAttention-1 (flash-attn 1.x, PyTorch stacks of 2022-23): Ampere's instructions,
           ///< which a Hopper GPU issues at half its tensor-core rate (the profile's attention.flash1),
           ///< behind an interface that takes unpadded tokens (q, k, v gathered, the output scattered back)
  flash2,  ///< FlashAttention-2 (flash-attn 2.x, and PyTorch SDPA's flash backend, the kernel of
           ///< PyTorch-native stacks such as torchtitan in 2024): also built for Ampere's instructions,
           ///< so at half the tensor-core rate on Hopper (the profile's attention.flash2); padded batches
};

/// Which engine runs ZeRO-1 (optimizer states sharded over the data-parallel ranks); both gather the
/// updated parameters back, they differ in how the gradients are reduced.
enum class Zero1Engine {
  megatron,   ///< Megatron-LM's distributed optimizer: each rank receives its shard, reduce-scattered
  deepspeed,  ///< DeepSpeed's stage 1 (its bf16 optimizer; stage_1_and_2 without gradient partitioning):
              ///< every rank's fp32 gradients all-reduced in full, then each steps its own partition
};

/// How a mixture of experts' tokens reach their experts across the EP group.
enum class MoeDispatcher {
  alltoall,  ///< one all-to-all of every routed copy (Megatron-LM's alltoall dispatcher)
  deepep,    ///< DeepEP: a token crosses the network once per destination node and is forwarded to
             ///< its experts' GPUs over NVLink there (Megatron-LM's flex dispatcher, DeepSeek-V3)
};

/// DeepSpeed's ZeRO `reduce_bucket_size` default: gradients reduced at a time. Under its ZeRO-3 a
/// layer with more takes several reduce-scatters.
inline constexpr double kDeepSpeedReduceBucketGradients = 5e8;

struct TrainingSpec {
  /// Format of the GEMMs; fp8 as Transformer Engine runs it (GEMMs in fp8, everything else bf16).
  Precision precision = Precision::bf16;
  int seq_len = 2048;
  AttentionKernel attention = AttentionKernel::flash;
  FlashKernel flash_kernel = FlashKernel::native;
  EagerSoftmax eager_softmax = EagerSoftmax::fused;
  CrossEntropy cross_entropy = CrossEntropy::unfused;
  SelectiveRecompute selective_recompute = SelectiveRecompute::attention;
  /// Bytes per parameter the optimizer keeps beyond weights and gradients (Adam: fp32 master weights,
  /// momentum and variance = 12).
  double optimizer_bytes_per_param = 12;
  OptimizerKernel optimizer_kernel = OptimizerKernel::fused;
  /// Gradients accumulated in fp32 (Megatron's default: main_grad buffers): 4 bytes instead of 2.
  bool fp32_grad_accumulation = true;
  /// The weight-gradient GEMMs add into the accumulator themselves (Megatron-LM's
  /// --gradient-accumulation-fusion, on since 2022; Transformer Engine's fuse_wgrad_accumulation).
  /// Without it each micro-batch's gradient is written and a separate pass adds it to the
  /// accumulator (Megatron-LM's 2021 gradient hooks, DeepSpeed's optimizers).
  bool gradient_accumulation_fusion = true;
  /// The separate pass casts each gradient to the accumulator's format in a copy before adding it
  /// (DeepSpeed's BF16_Optimizer: `hp_grad.add_(lp.grad.to(fp32))`): the copy is written and read
  /// again, 18 bytes a weight instead of 10 for bf16 gradients into fp32.
  bool gradient_accumulation_copy = false;
  /// Without SP, a tensor-parallel block's input-gradient all-reduce runs under its weight-gradient
  /// GEMMs (Megatron-LM's --async-tensor-model-parallel-allreduce, on since late 2021). Off: it runs
  /// after both GEMMs and the next kernel waits for it (Megatron-LM and Megatron-DeepSpeed of 2021,
  /// where autograd reached the all-reduce after the layer's whole backward).
  bool async_tp_allreduce = true;
  Zero1Engine zero1_engine = Zero1Engine::megatron;
  Zero3Engine zero3_engine = Zero3Engine::fsdp;
  /// FSDP's backward prefetch (DeepSpeed's engine gathers a module at a time, unaffected).
  Zero3Prefetch zero3_backward_prefetch = Zero3Prefetch::none;
  /// Full recompute stops once backward has every tensor it saves (PyTorch's non-reentrant
  /// checkpoint, the FSDP stacks'): a dense MLP's down projection is not rerun when no dropout
  /// follows it. Megatron-LM's (reentrant) recompute reruns the whole layer.
  bool recompute_early_stop = false;
  MoeDispatcher moe_dispatcher = MoeDispatcher::alltoall;
  bool operator==(const TrainingSpec&) const = default;

  /// Bytes of an activation or weight element outside fp8 GEMMs (bf16/fp16; fp32 for fp32 training).
  double element_bytes() const { return precision == Precision::fp32 || precision == Precision::tf32 ? 4.0 : 2.0; }
  double weight_bytes() const { return element_bytes(); }
  /// Bytes per element of a GEMM input kept for the weight gradient: in fp8 Transformer Engine keeps
  /// the fp8 cast of the input (its Linear saves inputmat_t, LayerNormLinear the fp8 norm output,
  /// LayerNormMLP the fp8 activation output) rather than the bf16 tensor.
  double gemm_input_bytes() const { return precision == Precision::fp8 ? 1.0 : element_bytes(); }
  double gradient_bytes() const { return fp32_grad_accumulation ? 4.0 : element_bytes(); }
};

extern const yaml::Schema kTrainingSchema;
TrainingSpec parse_training(const yaml::Record& record);

std::string_view attention_kernel_name(AttentionKernel kernel);
std::string_view zero3_prefetch_name(Zero3Prefetch prefetch);

}  // namespace parasim::workload
