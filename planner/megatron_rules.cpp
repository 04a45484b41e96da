#include "planner/megatron_rules.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <vector>

namespace parasim::planner {

using workload::Recompute;

std::optional<MegatronRecompute> megatron_recompute(const workload::Plan& p, const workload::ModelSpec& m) {
  if (p.recompute_overrides.empty()) {
    if (p.recompute != Recompute::full) return MegatronRecompute{p.recompute, workload::RecomputeMethod::uniform, 0};
    return MegatronRecompute{Recompute::full, p.recompute_method, p.recompute_layers};
  }
  const auto per_layer = workload::layer_recompute(p, m);
  if (std::all_of(per_layer.begin(), per_layer.end(), [&](Recompute r) { return r == per_layer.front(); })) {
    if (per_layer.front() == Recompute::full) return MegatronRecompute{Recompute::full, workload::RecomputeMethod::uniform, 1};
    return MegatronRecompute{per_layer.front(), workload::RecomputeMethod::uniform, 0};
  }
  // Otherwise only Megatron-LM's block method: the same number of leading layers of every chunk in
  // full, the rest not at all.
  const auto sizes = workload::layers_per_chunk(p, m);
  std::vector<int> leading;  // per chunk: layers in full from its start, when that is all it recomputes
  int first = 0;
  for (int size : sizes) {
    int k = 0;
    while (k < size && per_layer[static_cast<std::size_t>(first + k)] == Recompute::full) ++k;
    for (int i = k; i < size; ++i) {
      if (per_layer[static_cast<std::size_t>(first + i)] != Recompute::none) return std::nullopt;
    }
    leading.push_back(k);
    first += size;
  }
  // One count for every chunk; a chunk recomputed whole agrees with any count of at least its size.
  int count = 0;
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    if (leading[c] < sizes[c]) count = leading[c];
  }
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    if (leading[c] < sizes[c] ? leading[c] != count : sizes[c] > count) return std::nullopt;
  }
  return MegatronRecompute{Recompute::full, workload::RecomputeMethod::block, count};
}

std::optional<std::string> megatron_model_problem(const workload::ModelSpec& m) {
  if (!m.causal || m.mlm_head) return fmt::format("{} is an encoder: Megatron-LM's pretrain_gpt.py builds decoders only", m.name);
  if (m.position == workload::PositionEmbedding::alibi) return fmt::format("{} uses ALiBi, which Megatron-LM's GPT model does not implement", m.name);
  if (m.attention_chunk > 0) return fmt::format("{} uses chunked attention (Llama-4), which Megatron-LM's GPT model does not implement", m.name);
  return std::nullopt;
}

std::optional<std::string> megatron_order_problem(const workload::Plan& p) {
  using D = workload::ParallelDim;
  // Dimensions of extent 1 take no place in the order.
  auto used = [&](std::vector<D> order) {
    std::erase_if(order, [&](D d) { return (d == D::tp ? p.tp : d == D::cp ? p.cp : d == D::dp ? p.dp : p.pp) == 1; });
    return order;
  };
  const auto order = used(workload::full_order(p.order));
  if (order != used({D::tp, D::cp, D::dp, D::pp}) && order != used({D::tp, D::cp, D::pp, D::dp})) {
    return std::string("rank order: Megatron-LM nests ranks tp-cp-ep-dp-pp (or tp-cp-ep-pp-dp with --use-tp-pp-dp-mapping)");
  }
  return std::nullopt;
}

std::optional<std::string> megatron_schedule_problem(const workload::Plan& p) {
  using workload::Schedule;
  switch (p.schedule) {
    case Schedule::one_f_one_b:
    case Schedule::interleaved_1f1b: break;
    case Schedule::gpipe: return std::string("Megatron-LM has no GPipe schedule");
    case Schedule::zb_h1:
    case Schedule::zb_1p:
    case Schedule::zb_2p: return fmt::format("Megatron-LM has no zero-bubble schedule ({}: Qi et al.'s Megatron-LM fork runs it)", workload::schedule_name(p.schedule));
    case Schedule::zb_v: return std::string("Megatron-LM has no zero-bubble schedule (zb-v: torchtitan's ZBVZeroBubble, Qi et al.'s fork)");
    case Schedule::dualpipe: return std::string("Megatron-LM has no DualPipe schedule (dualpipe: DeepSeek's DualPipe runtime)");
    case Schedule::dualpipe_v: return std::string("Megatron-LM has no DualPipe schedule (dualpipe-v: torchtitan's DualPipeV)");
  }
  // --overlap-moe-expert-parallel-comm (TransformerConfig's checks at the target commit): no full
  // recompute and no recompute method; a virtual pipeline once there is a pipeline.
  if (p.overlap.ep_comm) {
    const bool full = p.recompute == workload::Recompute::full ||
                      std::any_of(p.recompute_overrides.begin(), p.recompute_overrides.end(), [](const auto& o) { return o.recompute == workload::Recompute::full; });
    if (full) return std::string("the expert all-to-all overlap (--overlap-moe-expert-parallel-comm) runs without full recompute");
    if (p.recompute == workload::Recompute::selective && p.recompute_modules.has(workload::RecomputeModule::moe)) {
      return std::string("the expert all-to-all overlap runs without the MoE part recomputed whole (recompute module moe)");
    }
    if (p.pp > 1 && p.schedule != Schedule::interleaved_1f1b) return std::string("the expert all-to-all overlap needs virtual pipeline stages with pp > 1");
  }
  return std::nullopt;
}

std::optional<std::string> megatron_structure_problem(const workload::Plan& p) {
  if (auto problem = megatron_schedule_problem(p)) return problem;
  if (p.vpp > 1 && p.pp == 1) return std::string("virtual pipeline stages need pp > 1");
  if (auto problem = megatron_order_problem(p)) return problem;
  // Megatron-FSDP composes with TP, EP and CP, not with pipeline stages (Megatron-Core's guide; Bridge
  // refuses it with the tp-pp-dp mapping too).
  if (p.zero >= 2 && p.pp > 1) return fmt::format("ZeRO-{} runs as Megatron-FSDP, which does not run with pipeline parallelism", p.zero);
  if (p.zero >= 2 && p.zero_group > 0 && p.zero_group != p.data_ranks()) {
    return fmt::format("ZeRO-{} sharded over {} of {} data ranks (hybrid sharding): not expressed for Megatron-FSDP", p.zero, p.zero_group,
                       p.data_ranks());
  }
  if (p.zero == 1 && p.zero_group > 0 && p.data_ranks() % p.zero_group != 0) {
    return fmt::format("optimizer sharded over {} of {} data ranks: not a whole number of optimizer instances", p.zero_group, p.data_ranks());
  }
  if (p.overlap.tp_comm && !p.sp) return std::string("TP communication overlap needs sequence parallelism");
  return std::nullopt;
}

std::optional<std::string> megatron_plan_problem(const workload::Plan& p, const workload::ModelSpec& m) {
  if (auto problem = megatron_model_problem(m)) return problem;
  if (auto problem = megatron_structure_problem(p)) return problem;
  if (p.overlap.ep_comm && m.mtp_layers > 1) return std::string("the expert all-to-all overlap runs with at most one MTP layer");
  if (!megatron_recompute(p, m)) {
    return std::string("per-layer recompute mixes selective and full, or recomputes a different number of layers per chunk");
  }
  return std::nullopt;
}

std::optional<std::string> cuda_device_max_connections(const workload::Plan& p, const topology::GpuSpec& gpu) {
  if (uses_megatron_fsdp(p)) return std::nullopt;
  const bool before_blackwell = gpu.compute_capability.first < 10;  // unknown (0) counts as before
  if ((p.tp > 1 || p.cp > 1) && before_blackwell) return std::string("1");
  return std::nullopt;
}

std::string megatron_attention_backend(const workload::TrainingSpec& tr, const topology::GpuSpec& gpu) {
  if (tr.attention == workload::AttentionKernel::eager) return "unfused";
  return gpu.compute_capability.first >= 9 ? "fused" : "flash";
}

}  // namespace parasim::planner
