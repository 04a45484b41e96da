#include "sim/software_stack.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace parasim::sim {

namespace {

bool mentions(const std::string& lower_source, std::string_view name) { return lower_source.find(name) != std::string::npos; }

std::string lowercase(std::string_view source) {
  std::string s(source);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

void run_as_torchtitan(workload::TrainingSpec& training) {
  if (training.attention == workload::AttentionKernel::flash) training.flash_kernel = workload::FlashKernel::flash2;
  training.cross_entropy = workload::CrossEntropy::torch;
  training.selective_recompute = workload::SelectiveRecompute::ops;
}

bool names_bigscience(std::string_view source) { return mentions(lowercase(source), "bigscience"); }

SoftwareStack software_stack_of(std::string_view source) {
  const std::string s = lowercase(source);
  // Most specific first: NVIDIA's DGX Cloud recipes include MaxText's, and BigScience ran a fork of
  // Megatron-LM.
  if (mentions(s, "maxtext")) return SoftwareStack::maxtext;
  if (mentions(s, "llm-foundry")) return SoftwareStack::llm_foundry;
  if (mentions(s, "torchtitan")) return SoftwareStack::torchtitan;
  // A source naming DeepSpeed and Megatron together ran Megatron-DeepSpeed (MT-NLG's paper: "Using
  // DeepSpeed and Megatron to Train Megatron-Turing NLG 530B").
  const bool both = mentions(s, "deepspeed") && mentions(s, "megatron");
  if (mentions(s, "bigscience") || mentions(s, "megatron-deepspeed") || both) return SoftwareStack::megatron_deepspeed;
  if (mentions(s, "nemo") || mentions(s, "megatron-bridge") || mentions(s, "dgxc-benchmarking")) return SoftwareStack::nemo;
  if (mentions(s, "megatron-lm") || mentions(s, "narayanan et al") || mentions(s, "korthikanti et al")) return SoftwareStack::megatron_lm;
  return SoftwareStack::unknown;
}

std::string_view software_stack_name(SoftwareStack stack) {
  switch (stack) {
    case SoftwareStack::unknown: return "unknown";
    case SoftwareStack::megatron_lm: return "Megatron-LM";
    case SoftwareStack::nemo: return "NeMo";
    case SoftwareStack::megatron_deepspeed: return "Megatron-DeepSpeed";
    case SoftwareStack::llm_foundry: return "llm-foundry";
    case SoftwareStack::maxtext: return "MaxText";
    case SoftwareStack::torchtitan: return "torchtitan";
  }
  return "unknown";
}

std::string_view printed_memory_name(PrintedMemory kind) {
  switch (kind) {
    case PrintedMemory::reserved: return "reserved";
    case PrintedMemory::allocated: return "allocated";
    case PrintedMemory::device: break;
  }
  return "device";
}

std::optional<PrintedMemory> memory_printed_by(SoftwareStack stack) {
  if (stack == SoftwareStack::torchtitan) return PrintedMemory::reserved;
  return std::nullopt;
}

bool takes_recompute_modules(SoftwareStack stack) { return stack == SoftwareStack::megatron_lm || stack == SoftwareStack::nemo; }

}  // namespace parasim::sim
