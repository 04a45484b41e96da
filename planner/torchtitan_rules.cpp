#include "planner/torchtitan_rules.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>

#include "workload/microbatch_group.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Schedule;

namespace {

// The flavors of torchtitan v0.2.2's train specs (torchtitan/models/*/__init__.py) parasim maps by
// shape: llama3's dense models (ffn from ffn_dim_multiplier and multiple_of), qwen3's dense and MoE
// ones, deepseek_v3's (multi-head latent attention). llama4 and gpt_oss ship too but are not mapped.
constexpr std::array<TorchtitanFlavor, 14> kFlavors{{
    {"llama3", "8B", 32, 4096, 32, 8, 14336, 0, 0, 0, "./assets/hf/Llama-3.1-8B"},
    {"llama3", "70B", 80, 8192, 64, 8, 28672, 0, 0, 0, "./assets/hf/Llama-3.1-70B"},
    {"llama3", "405B", 126, 16384, 128, 8, 53248, 0, 0, 0, "./assets/hf/Llama-3.1-405B"},
    {"qwen3", "0.6B", 28, 1024, 16, 8, 3072, 0, 0, 0, "./assets/hf/Qwen3-0.6B"},
    {"qwen3", "1.7B", 28, 2048, 16, 8, 6144, 0, 0, 0, "./assets/hf/Qwen3-1.7B"},
    {"qwen3", "4B", 36, 2560, 32, 8, 9728, 0, 0, 0, "./assets/hf/Qwen3-4B"},
    {"qwen3", "8B", 36, 4096, 32, 8, 12288, 0, 0, 0, "./assets/hf/Qwen3-8B"},
    {"qwen3", "14B", 40, 5120, 40, 8, 17408, 0, 0, 0, "./assets/hf/Qwen3-14B"},
    {"qwen3", "32B", 64, 5120, 64, 8, 25600, 0, 0, 0, "./assets/hf/Qwen3-32B"},
    {"qwen3", "30B-A3B", 48, 2048, 32, 4, 6144, 128, 8, 768, "./assets/hf/Qwen3-30B-A3B"},
    {"qwen3", "235B-A22B", 94, 4096, 64, 4, 12288, 128, 8, 1536, "./assets/hf/Qwen3-235B-A22B"},
    {"deepseek_v3", "16B", 27, 2048, 16, 0, 10944, 64, 6, 1408, "./assets/hf/deepseek-moe-16b-base"},
    {"deepseek_v3", "236B", 60, 5120, 128, 0, 12288, 160, 6, 1536, "./assets/hf/DeepSeek-V2"},
    {"deepseek_v3", "671B", 61, 7168, 128, 0, 18432, 256, 8, 2048, "./assets/hf/DeepSeek-V3.1-Base"},
}};

bool same_shape(const TorchtitanFlavor& f, const workload::ModelSpec& m) {
  if (f.layers != m.layers || f.hidden != m.hidden || f.heads != m.heads || f.experts != m.experts) return false;
  if ((f.kv_heads == 0) != m.is_mla() || (f.kv_heads > 0 && f.kv_heads != m.kv_heads)) return false;
  if (f.experts > 0 && (f.top_k != m.top_k || f.expert_ffn_hidden != m.expert_ffn_hidden)) return false;
  // An MoE model without dense layers never builds its dense MLP.
  const bool dense_mlp = f.experts == 0 || m.first_dense_layers > 0;
  return !dense_mlp || f.ffn_hidden == m.ffn_hidden;
}

}  // namespace

std::optional<TorchtitanFlavor> torchtitan_flavor(const workload::ModelSpec& model) {
  for (const auto& f : kFlavors) {
    if (same_shape(f, model)) return f;
  }
  return std::nullopt;
}

std::optional<std::string> torchtitan_job_problem(const workload::ModelSpec& model, const workload::TrainingSpec& training) {
  if (!torchtitan_flavor(model)) {
    return fmt::format(
        "torchtitan {} ships no model of {}'s shape ({} layers, hidden {}, {} heads{}): it builds llama3 8B/70B/405B, qwen3 "
        "0.6B-32B, 30B-A3B and 235B-A22B, deepseek_v3 16B/236B/671B (and llama4 and gpt_oss, which parasim does not map yet)",
        kTorchtitanRelease, model.name, model.layers, model.hidden, model.heads, model.is_moe() ? fmt::format(", {} experts", model.experts) : "");
  }
  if (training.precision == Precision::fp16) return std::string("torchtitan trains in bf16 (or fp32), not fp16");
  return std::nullopt;
}

std::string_view torchtitan_schedule_name(const Plan& p) {
  switch (p.schedule) {
    case Schedule::one_f_one_b: return p.vpp > 1 ? "" : "1F1B";
    case Schedule::gpipe: return p.vpp > 1 ? "" : "GPipe";
    case Schedule::interleaved_1f1b: return "Interleaved1F1B";
    case Schedule::zb_v: return "ZBVZeroBubble";
    case Schedule::dualpipe_v: return "DualPipeV";
    default: return "";
  }
}

namespace {

std::optional<std::string> mesh_problem(const Plan& p) {
  const std::vector<workload::ParallelDim> torchtitan_order{workload::ParallelDim::tp, workload::ParallelDim::cp, workload::ParallelDim::dp,
                                                            workload::ParallelDim::pp};
  if (p.order != torchtitan_order) return std::string("torchtitan's device mesh nests tp, cp, dp, pp from the innermost; this plan orders them otherwise");
  if (p.tp > 1 && !p.sp) return std::string("torchtitan's tensor parallelism always shards the norms' sequence (sequence parallelism)");
  if (p.cp > 1 && p.cp_kind != workload::CpKind::ring) return std::string("torchtitan's context parallelism is ring attention, not Ulysses");
  if (p.zero == 1) return std::string("torchtitan has no optimizer-only sharding (ZeRO-1): FSDP2 shards weights, gradients and optimizer state");
  if (p.zero == 0 && p.data_ranks() > 1 && p.gpus() != p.dp) {
    return std::string("torchtitan's DDP (data parallelism without sharding) runs alone, not beside tp, cp or pp");
  }
  if (p.zero >= 2 && p.sharding_group() % p.cp != 0) {
    return fmt::format("torchtitan's FSDP shards over whole context-parallel groups: a group of {} over cp {}", p.sharding_group(), p.cp);
  }
  if (p.ep > 1) {
    if (p.expert_tp() != 1 && p.expert_tp() != p.tp) return std::string("torchtitan splits experts over all of tp or none (ETP = TP or 1)");
    if (p.zero < 2) return std::string("torchtitan wraps expert-parallel MoE layers in FSDP2: ZeRO-2 or 3");
    if ((p.sharding_group() * p.tp / p.expert_tp()) % p.ep != 0) {
      return fmt::format("torchtitan carves ep {} out of the FSDP (and, with ETP 1, TP) ranks, which are {}", p.ep, p.sharding_group() * p.tp / p.expert_tp());
    }
  }
  return std::nullopt;
}

std::optional<std::string> pipeline_problem(const Plan& p) {
  if (p.pp == 1) return std::nullopt;
  if (torchtitan_schedule_name(p).empty()) {
    return fmt::format("torchtitan has no {} schedule{}", workload::schedule_name(p.schedule), p.vpp > 1 ? " with virtual stages" : "");
  }
  if (p.schedule == Schedule::interleaved_1f1b && p.vpp < 2) return std::string("torchtitan's Interleaved1F1B needs two stages a rank or more");
  if (p.schedule == Schedule::interleaved_1f1b) {
    const int m = p.micro_batches(), round = workload::pytorch_interleaved_group(m, p.pp);
    if (round == 0) return fmt::format("PyTorch's Interleaved1F1B splits the {} micro-batches into {} equal rounds, which they are not", m, std::max(1, m / p.pp));
    if (p.microbatch_group_size() != round) {
      return fmt::format("PyTorch's Interleaved1F1B runs the {} micro-batches in rounds of {}, not groups of {}", m, round, p.microbatch_group_size());
    }
  }
  if (p.schedule == Schedule::dualpipe_v && p.ep > 1 && p.recompute != workload::Recompute::none) {
    return std::string("torchtitan refuses DualPipeV with expert parallelism and activation checkpointing together");
  }
  const int per_replica = p.global_batch / p.dp;
  if (per_replica % p.micro_batch != 0) {
    return fmt::format("torchtitan splits the local batch of {} into whole micro-batches of {}", per_replica, p.micro_batch);
  }
  return std::nullopt;
}

std::optional<std::string> checkpointing_problem(const Plan& p) {
  if (!p.recompute_overrides.empty()) return std::string("torchtitan checkpoints every layer alike (or every k-th), not ranges of layers");
  if (p.recompute == workload::Recompute::full && (p.recompute_method != workload::RecomputeMethod::uniform || p.recompute_layers != 1)) {
    return std::string("torchtitan checkpoints each layer on its own, not Megatron-LM's groups or blocks of layers");
  }
  if (p.recomputes_selectively() && !p.recompute_modules.is_default()) {
    return fmt::format("torchtitan's selective checkpointing keeps every second matmul's output; it has no modules to choose ({})", p.recompute_modules.joined());
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> torchtitan_plan_problem(const Plan& p) {
  if (auto why = mesh_problem(p)) return why;
  if (auto why = pipeline_problem(p)) return why;
  if (auto why = checkpointing_problem(p)) return why;
  if (p.pp == 1 && p.global_batch % (p.micro_batch * p.dp) != 0) {
    return fmt::format("torchtitan accumulates whole local batches: global batch {} is no multiple of {} x dp {}", p.global_batch, p.micro_batch, p.dp);
  }
  return std::nullopt;
}

}  // namespace parasim::planner
