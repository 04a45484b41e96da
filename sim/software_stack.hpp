#pragma once
// The training stack a published run names in its `source` (a repository or paper), for the fill
// policy of `validate`: where a source does not print a setting, the stack's own default of the
// time stands in for it (../shared/validation/README.md allows "the trainer's default of that era").
// A source naming no known stack keeps the policy's stack-free rules.
#include <optional>
#include <string_view>

#include "workload/training.hpp"

namespace parasim::sim {

enum class SoftwareStack {
  unknown,
  megatron_lm,         ///< NVIDIA/Megatron-LM and the papers run on it (SC21, Korthikanti et al.)
  nemo,                ///< NeMo, Megatron-Bridge and NVIDIA's DGX Cloud recipes on them (Megatron-Core)
  megatron_deepspeed,  ///< Megatron-DeepSpeed (BigScience's BLOOM runs)
  llm_foundry,         ///< mosaicml/llm-foundry on Composer: PyTorch FSDP
  maxtext,             ///< MaxText on JAX/XLA
  torchtitan,          ///< pytorch/torchtitan: FSDP2, DTensor TP, PyTorch SDPA for attention
};

/// What a printed peak counts.
enum class PrintedMemory {
  device,     ///< the GPU's whole use, as nvidia-smi shows it (where the source does not say)
  reserved,   ///< PyTorch's caching allocator's reserve (torch.cuda.max_memory_reserved)
  allocated,  ///< the tensors alone (torch.cuda.max_memory_allocated)
};
std::string_view printed_memory_name(PrintedMemory kind);
/// The figure a stack's own logs print as its memory, where it prints one alone: torchtitan's step
/// lines and benchmark tables give torch.cuda.max_memory_reserved. Others: nullopt.
std::optional<PrintedMemory> memory_printed_by(SoftwareStack stack);

/// Whether the stack's selective recompute takes Megatron-Core's --recompute-modules (Megatron-LM,
/// NeMo and Megatron-Bridge); the others rerun what their own policy says.
bool takes_recompute_modules(SoftwareStack stack);

/// The kernels torchtitan runs whatever a job asks: PyTorch SDPA's flash backend (FlashAttention-2,
/// where attention is flash), PyTorch's cross_entropy over an fp32 copy of the logits, and op-level
/// selective checkpointing (its selective_ac_option "op"). validate applies it to torchtitan's rows,
/// plan and confirm to --framework torchtitan.
void run_as_torchtitan(workload::TrainingSpec& training);

/// Whether a source is BigScience's (its repositories and chronicles): their Megatron-DeepSpeed fork
/// of October 2021 to March 2022 ran the fused causal softmax by the head count
/// (workload::EagerSoftmax::fused_by_head_count).
bool names_bigscience(std::string_view source);

/// The stack a source string names (case-insensitive repository and product names).
SoftwareStack software_stack_of(std::string_view source);
std::string_view software_stack_name(SoftwareStack stack);

}  // namespace parasim::sim
