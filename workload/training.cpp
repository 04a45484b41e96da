#include "workload/training.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace parasim::workload {
namespace {

using yaml::Field;
using yaml::FieldType;

constexpr std::string_view kPrecisions[] = {"bf16", "fp16", "fp8", "fp32", "tf32"};
constexpr std::string_view kKernels[] = {"flash", "eager"};
constexpr std::string_view kCrossEntropy[] = {"unfused", "fused", "torch"};
constexpr std::string_view kOptimizerKernels[] = {"fused", "foreach"};
constexpr std::string_view kSelectiveRecompute[] = {"attention", "ops"};
constexpr std::string_view kZero3Engines[] = {"fsdp", "deepspeed"};
constexpr std::string_view kZero1Engines[] = {"megatron", "deepspeed"};
constexpr std::string_view kFlashKernels[] = {"native", "flash1", "flash2"};
constexpr std::string_view kEagerSoftmax[] = {"fused", "unfused", "fused_by_head_count"};
constexpr std::string_view kZero3Prefetch[] = {"none", "post", "pre"};
constexpr std::string_view kMoeDispatchers[] = {"alltoall", "deepep"};

constexpr Field kTrainingFields[] = {
    {.name = "precision", .type = FieldType::choice, .description = "GEMM format; fp8 as Transformer Engine runs it (other ops in bf16)", .default_text = "bf16", .choices = kPrecisions},
    {.name = "seq_len", .type = FieldType::integer, .description = "tokens per sample", .required = true, .min = 1, .max = 1 << 27},
    {.name = "attention", .type = FieldType::choice, .description = "attention kernel: flash (scores never stored) or eager (scores stored)", .default_text = "flash", .choices = kKernels},
    {.name = "flash_kernel", .type = FieldType::choice, .description = "flash attention generation: native (the GPU's own, FlashAttention-3/cuDNN on Hopper) or flash1 (flash-attn 1.x of 2022-23 PyTorch stacks: built for Ampere, so at half the tensor-core rate on Hopper, and taking only unpadded tokens, so q, k, v are gathered and the output scattered back around it) or flash2 (flash-attn 2.x or PyTorch SDPA's flash backend, as torchtitan runs it: also built for Ampere, so at half the tensor-core rate on Hopper)", .default_text = "native", .choices = kFlashKernels},
    {.name = "eager_softmax", .type = FieldType::choice, .description = "eager attention's softmax: fused (Megatron's scale-mask-softmax kernel), unfused (PyTorch's ops: a copy to fp32, scale, mask, softmax, cast back; five passes each way) or fused_by_head_count (fused only where the micro-batch's causal score matrices fill the kernel's blocks as BigScience's Megatron-DeepSpeed of October 2021 to March 2022 sized them, by the heads on the rank; unfused elsewhere)", .default_text = "fused", .choices = kEagerSoftmax},
    {.name = "cross_entropy", .type = FieldType::choice, .description = "loss kernel: unfused (Megatron-LM's passes over fp32 logits), fused (one kernel each way, flash-attn's or XLA's) or torch (PyTorch's cross_entropy over an fp32 copy: torchtitan, Hugging Face)", .default_text = "unfused", .choices = kCrossEntropy},
    {.name = "selective_recompute", .type = FieldType::choice, .description = "what recompute: selective reruns: attention (the attention core, everything else kept: Megatron-LM) or ops (torchtitan's op-level policy: the attention outputs and every second matmul's output kept, the other matmuls and the elementwise ops rerun)", .default_text = "attention", .choices = kSelectiveRecompute},
    {.name = "async_tp_allreduce", .type = FieldType::boolean, .description = "without SP, the input-gradient all-reduce of a tensor-parallel block runs under its weight-gradient GEMMs (Megatron-LM since late 2021); false: after both, synchronously (2021 stacks)", .default_text = "true"},
    {.name = "zero1_engine", .type = FieldType::choice, .description = "ZeRO-1 engine: megatron (the distributed optimizer: gradients reduce-scattered) or deepspeed (stage 1, its bf16 optimizer: gradients all-reduced in full); both all-gather the updated parameters", .default_text = "megatron", .choices = kZero1Engines},
    {.name = "zero3_engine", .type = FieldType::choice, .description = "ZeRO-3 engine: fsdp (a layer gathered and reduced whole, kept through its recompute) or deepspeed (a module at a time, again after the recompute, gradients in buckets of 5e8)", .default_text = "fsdp", .choices = kZero3Engines},
    {.name = "zero3_backward_prefetch", .type = FieldType::choice, .description = "FSDP backward prefetch: none (a layer's gather queued behind the previous layer's reduce-scatter), post (issued after the layer's gradients, ahead of their reduce-scatter: BACKWARD_POST) or pre (issued as the layer's backward starts: BACKWARD_PRE, XLA)", .default_text = "none", .choices = kZero3Prefetch},
    {.name = "recompute_early_stop", .type = FieldType::boolean, .description = "full recompute stops once backward has what it saves (PyTorch's non-reentrant checkpoint): the MLP's down projection is not rerun without dropout", .default_text = "false"},
    {.name = "moe_dispatcher", .type = FieldType::choice, .description = "mixture of experts: alltoall (every routed copy in one all-to-all, Megatron-LM's alltoall dispatcher) or deepep (a token crosses the network once per destination node, then NVLink: DeepEP, Megatron-LM's flex dispatcher)", .default_text = "alltoall", .choices = kMoeDispatchers},
    {.name = "optimizer_bytes_per_param", .type = FieldType::number, .description = "optimizer state per parameter beyond weights and gradients (Adam with fp32 master: 12)", .default_text = "12", .min = 0},
    {.name = "optimizer_kernel", .type = FieldType::choice, .description = "how Adam steps: fused (one multi-tensor kernel in place: Transformer Engine's, apex's, DeepSpeed's) or foreach (PyTorch's AdamW default: sqrt of the second moments out of place, 4 bytes per parameter it steps while it steps)", .default_text = "fused", .choices = kOptimizerKernels},
    {.name = "fp32_grad_accumulation", .type = FieldType::boolean, .description = "gradients accumulated in fp32 (Megatron's main_grad): 4 bytes per parameter instead of 2", .default_text = "true"},
    {.name = "gradient_accumulation_fusion", .type = FieldType::boolean, .description = "weight-gradient GEMMs add into the accumulator (Megatron-LM's default since 2022); false: a separate pass per micro-batch (Megatron-LM 2021, DeepSpeed)", .default_text = "true"},
    {.name = "gradient_accumulation_copy", .type = FieldType::boolean, .description = "without fusion, each gradient is cast to the accumulator's format in a copy before it is added (DeepSpeed's BF16_Optimizer): 18 bytes a weight instead of 10", .default_text = "false"},
};

}  // namespace

const yaml::Schema kTrainingSchema{"training", "Formats, sequence length, attention and loss kernels, gradient accumulation, ZeRO engines and optimizer state.", kTrainingFields};

bool eager_softmax_fused(EagerSoftmax rule, double micro_batch, double heads_local, bool causal) {
  if (rule != EagerSoftmax::fused_by_head_count) return rule == EagerSoftmax::fused;
  // Without a causal mask the kernel's condition was on the queries, which any block size divides.
  if (!causal) return true;
  // The kernel's warp takes min(p, 32) scores of a row, two rows per warp up to p = 128, in blocks of
  // 128 threads: blocks of 2 x 128 / min(p, 32) matrices (1 x … past 128), and b·np a multiple of 4.
  double p = 1;
  while (p < heads_local) p *= 2;
  const double block = (p <= 128 ? 2.0 : 1.0) * 128.0 / std::min(p, 32.0);
  const double batches = micro_batch * heads_local;
  return std::fmod(batches, 4.0) == 0.0 && std::fmod(batches, block) == 0.0;
}

std::string_view attention_kernel_name(AttentionKernel k) { return k == AttentionKernel::flash ? "flash" : "eager"; }
std::string_view zero3_prefetch_name(Zero3Prefetch p) { return kZero3Prefetch[static_cast<std::size_t>(p)]; }

TrainingSpec parse_training(const yaml::Record& r) {
  TrainingSpec t;
  t.precision = *precision_from_name(r.string("precision"));
  t.seq_len = static_cast<int>(r.integer("seq_len"));
  t.attention = r.string("attention") == "eager" ? AttentionKernel::eager : AttentionKernel::flash;
  const auto& flash_kernel = r.string("flash_kernel");
  t.flash_kernel = flash_kernel == "flash1" ? FlashKernel::flash1 : flash_kernel == "flash2" ? FlashKernel::flash2 : FlashKernel::native;
  const auto& softmax = r.string("eager_softmax");
  t.eager_softmax = softmax == "unfused" ? EagerSoftmax::unfused : softmax == "fused_by_head_count" ? EagerSoftmax::fused_by_head_count : EagerSoftmax::fused;
  const std::string loss = r.string("cross_entropy");
  t.cross_entropy = loss == "fused" ? CrossEntropy::fused : loss == "torch" ? CrossEntropy::torch : CrossEntropy::unfused;
  t.selective_recompute = r.string("selective_recompute") == "ops" ? SelectiveRecompute::ops : SelectiveRecompute::attention;
  t.async_tp_allreduce = r.boolean("async_tp_allreduce");
  t.zero1_engine = r.string("zero1_engine") == "deepspeed" ? Zero1Engine::deepspeed : Zero1Engine::megatron;
  t.zero3_engine = r.string("zero3_engine") == "deepspeed" ? Zero3Engine::deepspeed : Zero3Engine::fsdp;
  const auto& prefetch = r.string("zero3_backward_prefetch");
  t.zero3_backward_prefetch = prefetch == "pre" ? Zero3Prefetch::pre : prefetch == "post" ? Zero3Prefetch::post : Zero3Prefetch::none;
  t.recompute_early_stop = r.boolean("recompute_early_stop");
  t.moe_dispatcher = r.string("moe_dispatcher") == "deepep" ? MoeDispatcher::deepep : MoeDispatcher::alltoall;
  t.optimizer_bytes_per_param = r.number("optimizer_bytes_per_param");
  t.optimizer_kernel = r.string("optimizer_kernel") == "foreach" ? OptimizerKernel::foreach : OptimizerKernel::fused;
  t.fp32_grad_accumulation = r.boolean("fp32_grad_accumulation");
  t.gradient_accumulation_fusion = r.boolean("gradient_accumulation_fusion");
  t.gradient_accumulation_copy = r.boolean("gradient_accumulation_copy");
  return t;
}

}  // namespace parasim::workload
