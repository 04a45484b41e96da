#include "workload/plan.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <numeric>

#include "workload/chunk_placement.hpp"
#include "workload/microbatch_group.hpp"
#include "workload/schedule.hpp"

namespace parasim::workload {
namespace {

using yaml::Field;
using yaml::FieldType;

constexpr std::string_view kSchedules[] = {"1f1b", "interleaved-1f1b", "gpipe", "zb-h1", "zb-1p", "zb-2p", "zb-v", "dualpipe", "dualpipe-v"};
constexpr std::string_view kRecompute[] = {"none", "selective", "full"};
constexpr std::string_view kRecomputeMethods[] = {"uniform", "block"};
constexpr std::string_view kCpKinds[] = {"ring", "ulysses"};

constexpr Field kOverlapFields[] = {
    {.name = "grad_reduce", .type = FieldType::boolean, .description = "DP gradient reduction overlapped with backward, bucket by bucket", .default_text = "false"},
    {.name = "param_gather", .type = FieldType::boolean, .description = "distributed-optimizer parameter all-gather overlapped with the next forward", .default_text = "false"},
    {.name = "tp_comm", .type = FieldType::boolean, .description = "TP collectives pipelined with their GEMMs (Transformer Engine userbuffers)", .default_text = "false"},
    {.name = "ep_comm", .type = FieldType::boolean, .description = "MoE all-to-alls of one micro-batch under another's compute: forward and backward as one step (DualPipe's F&B, Megatron-LM's --overlap-moe-expert-parallel-comm)", .default_text = "false"},
};
constexpr yaml::Schema kOverlapSchema{"overlap", "Communication overlapped with computation.", kOverlapFields};

constexpr Field kOverrideFields[] = {
    {.name = "layers", .type = FieldType::integer_list, .description = "[first, last] layer, inclusive, 0-based", .required = true, .min = 0},
    {.name = "recompute", .type = FieldType::choice, .description = "recompute for these layers", .required = true, .choices = kRecompute},
};
constexpr yaml::Schema kOverrideSchema{"override", "Recompute for a range of layers.", kOverrideFields};

constexpr Field kPlanFields[] = {
    {.name = "tp", .type = FieldType::integer, .description = "tensor-parallel degree", .default_text = "1", .min = 1},
    {.name = "sp", .type = FieldType::boolean, .description = "sequence parallelism (Megatron-LM, with tp)", .default_text = "false"},
    {.name = "pp", .type = FieldType::integer, .description = "pipeline-parallel degree", .default_text = "1", .min = 1},
    {.name = "vpp", .type = FieldType::integer, .description = "model chunks per pipeline stage (interleaved 1F1B; 2 for zb-v and dualpipe-v)", .default_text = "1", .min = 1},
    {.name = "microbatch_group", .type = FieldType::integer, .description = "interleaved 1F1B: micro-batches a chunk runs before the next chunk (Megatron-Core's --microbatch-group-size-per-virtual-pipeline-stage); default pp", .min = 1},
    {.name = "dp", .type = FieldType::integer, .description = "data-parallel degree; default: GPUs / (tp x pp x cp)", .min = 1},
    {.name = "cp", .type = FieldType::integer, .description = "context-parallel degree: each rank holds seq_len / cp tokens of every sample", .default_text = "1", .min = 1},
    {.name = "ep", .type = FieldType::integer, .description = "expert-parallel degree (MoE): experts spread over ep of the dp x cp ranks", .default_text = "1", .min = 1},
    {.name = "etp", .type = FieldType::integer, .description = "expert tensor-parallel degree (MoE); default tp, as Megatron-LM", .min = 1},
    {.name = "cp_kind", .type = FieldType::choice, .description = "ring (KV chunks passed around the CP ring, Megatron-LM's default) or ulysses (all-to-all of heads)", .default_text = "ring", .choices = kCpKinds},
    {.name = "schedule", .type = FieldType::choice, .description = "pipeline schedule; default 1f1b, or interleaved-1f1b with vpp > 1; zb-h1, zb-1p, zb-2p, zb-v: zero bubble (Qi et al. 2024); dualpipe, dualpipe-v: DeepSeek-V3's", .choices = kSchedules},
    {.name = "zero", .type = FieldType::integer, .description = "0 replicated; 1 optimizer state sharded (distributed optimizer); 2 +gradients; 3 +weights (FSDP FULL_SHARD)", .default_text = "0", .min = 0, .max = 3},
    {.name = "zero_group", .type = FieldType::integer, .description = "ranks a ZeRO shard spans when smaller than dp (hybrid sharding, HSDP)", .min = 1},
    {.name = "distributed_optimizer", .type = FieldType::boolean, .description = "Megatron's distributed optimizer: the same as zero: 1", .default_text = "false"},
    {.name = "micro_batch", .type = FieldType::integer, .description = "samples per micro-batch", .default_text = "1", .min = 1},
    {.name = "global_batch", .type = FieldType::integer, .description = "samples per iteration over all replicas", .required = true, .min = 1},
    {.name = "recompute", .type = FieldType::choice, .description = "activation recompute", .default_text = "none", .choices = kRecompute},
    {.name = "recompute_method", .type = FieldType::choice, .description = "full recompute: uniform (groups of recompute_layers) or block (first recompute_layers of each chunk)", .default_text = "uniform", .choices = kRecomputeMethods},
    {.name = "recompute_layers", .type = FieldType::integer, .description = "Megatron's --recompute-num-layers", .default_text = "1", .min = 1},
    {.name = "recompute_modules", .type = FieldType::string_list, .description = "selective recompute: what reruns (Megatron-Core's --recompute-modules): core_attn, mlp, moe, moe_act, shared_experts, layernorm, mla_up_proj", .default_text = "[core_attn]"},
    {.name = "overrides", .type = FieldType::section_list, .description = "per-layer recompute: [{layers: [first, last], recompute: full}]", .schema = &kOverrideSchema},
    {.name = "overlap", .type = FieldType::section, .description = "communication overlapped with computation", .default_text = "{}", .schema = &kOverlapSchema},
    {.name = "order", .type = FieldType::string_list, .description = "dimensions on the device axis, innermost first; cp, when left out, goes after tp", .default_text = "[tp, cp, dp, pp]"},
    {.name = "stage_layers", .type = FieldType::integer_list, .description = "layers per model chunk in pipeline order (pp x vpp entries); default even; the first may be 0 (embedding alone), the last 0 (head alone)", .min = 0},
    {.name = "bucket_params", .type = FieldType::number, .description = "DP gradient bucket in parameters; default Megatron's max(40M, 1M x dp)", .min = 1},
};

}  // namespace

const yaml::Schema kPlanSchema{"plan", "How the training job is parallelized.", kPlanFields};

std::string_view schedule_name(Schedule s) {
  switch (s) {
    case Schedule::gpipe: return "gpipe";
    case Schedule::one_f_one_b: return "1f1b";
    case Schedule::interleaved_1f1b: return "interleaved-1f1b";
    case Schedule::zb_h1: return "zb-h1";
    case Schedule::zb_1p: return "zb-1p";
    case Schedule::zb_2p: return "zb-2p";
    case Schedule::zb_v: return "zb-v";
    case Schedule::dualpipe: return "dualpipe";
    case Schedule::dualpipe_v: return "dualpipe-v";
  }
  return "";
}

std::optional<Schedule> schedule_from_name(std::string_view name) {
  for (auto s : kAllSchedules) {
    if (schedule_name(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "";
}
std::string_view dim_name(ParallelDim d) {
  switch (d) {
    case ParallelDim::tp: return "tp";
    case ParallelDim::dp: return "dp";
    case ParallelDim::pp: return "pp";
    case ParallelDim::cp: return "cp";
  }
  return "";
}
std::string_view cp_kind_name(CpKind k) { return k == CpKind::ulysses ? "ulysses" : "ring"; }

std::vector<ParallelDim> full_order(const std::vector<ParallelDim>& order) {
  std::vector<ParallelDim> out = order;
  if (std::find(out.begin(), out.end(), ParallelDim::cp) == out.end()) {
    const auto tp = std::find(out.begin(), out.end(), ParallelDim::tp);
    out.insert(tp == out.end() ? out.begin() : tp + 1, ParallelDim::cp);
  }
  return out;
}

std::string schedule_text(const Plan& p) {
  std::string out(schedule_name(p.schedule));
  if (p.microbatch_group > 0) out += fmt::format(" in groups of {}", p.microbatch_group);
  return out;
}

double Plan::gradient_bucket_params() const {
  // Megatron-LM sizes buckets by its data-parallel group with context parallelism.
  return bucket_params > 0 ? bucket_params : std::max(40e6, 1e6 * data_ranks());
}

int padded_vocab(const ModelSpec& model, int tp) { return padded_vocab(model.vocab, 128, tp); }

int padded_vocab(int vocab, int divisible, int tp) {
  const long long multiple = static_cast<long long>(divisible) * tp;
  // Past int's range it saturates (and fails the model's vocabulary bound), never wraps.
  return static_cast<int>(std::min<long long>((vocab + multiple - 1) / multiple * multiple, INT_MAX));
}

std::vector<int> layers_per_chunk(const Plan& plan, const ModelSpec& model) {
  if (!plan.chunk_layers.empty()) return plan.chunk_layers;
  return std::vector<int>(static_cast<std::size_t>(plan.chunks()), model.layers / plan.chunks());
}

std::vector<int> first_layer_of_chunk(const Plan& plan, const ModelSpec& model) {
  const auto sizes = layers_per_chunk(plan, model);
  std::vector<int> first(sizes.size());
  std::exclusive_scan(sizes.begin(), sizes.end(), first.begin(), 0);
  return first;
}

bool Plan::recomputes_selectively() const {
  return recompute == Recompute::selective ||
         std::any_of(recompute_overrides.begin(), recompute_overrides.end(), [](const auto& o) { return o.recompute == Recompute::selective; });
}

std::string recompute_text(const Plan& p) {
  const std::string modules = p.recomputes_selectively() && !p.recompute_modules.is_default() ? fmt::format(" ({})", p.recompute_modules.joined()) : "";
  if (p.recompute_overrides.empty()) {
    std::string out(recompute_name(p.recompute));
    if (p.recompute == Recompute::selective) out += modules;
    if (p.recompute == Recompute::full && p.recompute_method == RecomputeMethod::block) out += fmt::format(" block {}", p.recompute_layers);
    return out;
  }
  // The layers the overrides recompute, by kind: "7 full", "2 full, 92 selective".
  int full = 0, selective = 0;
  for (const auto& o : p.recompute_overrides) {
    if (o.recompute != Recompute::none) (o.recompute == Recompute::full ? full : selective) += o.last_layer - o.first_layer + 1;
  }
  std::string out = full > 0 ? fmt::format("{} full", full) : "";
  if (selective > 0) out += fmt::format("{}{} selective{}", out.empty() ? "" : ", ", selective, modules);
  if (p.recompute != Recompute::none) out += fmt::format("{}{} elsewhere", out.empty() ? "" : ", ", recompute_name(p.recompute));
  return out.empty() ? "none" : out;
}

std::vector<Recompute> layer_recompute(const Plan& plan, const ModelSpec& model) {
  std::vector<Recompute> out(static_cast<std::size_t>(model.layers), plan.recompute);
  if (plan.recompute == Recompute::full && plan.recompute_method == RecomputeMethod::block) {
    const auto sizes = layers_per_chunk(plan, model);
    int first = 0;
    for (int size : sizes) {
      for (int i = 0; i < size; ++i) out[static_cast<std::size_t>(first + i)] = i < plan.recompute_layers ? Recompute::full : Recompute::none;
      first += size;
    }
  }
  for (const auto& o : plan.recompute_overrides) {
    for (int l = o.first_layer; l <= o.last_layer; ++l) out[static_cast<std::size_t>(l)] = o.recompute;
  }
  return out;
}

namespace {

// Expert parallelism as Megatron-LM allows it.
std::optional<PlanProblem> find_moe_problem(const Plan& p, const ModelSpec& m) {
  auto problem = [](std::string key, std::string message) { return PlanProblem{std::move(key), std::move(message)}; };
  if (!m.is_moe()) {
    if (p.ep > 1) return problem("ep", fmt::format("ep {} needs a mixture-of-experts model; {} has no experts", p.ep, m.name));
    if (p.etp > 0) return problem("etp", fmt::format("etp needs a mixture-of-experts model; {} has no experts", m.name));
    return std::nullopt;
  }
  if (p.ep > m.experts) return problem("ep", fmt::format("ep {} exceeds the {} experts", p.ep, m.experts));
  if (m.experts % p.ep != 0) return problem("ep", fmt::format("ep {} does not divide the {} experts", p.ep, m.experts));
  if (p.data_ranks() % p.ep != 0) {
    return problem("ep", fmt::format("ep {} does not divide dp {} x cp {} = {} (expert-parallel groups are carved out of the data-parallel ranks)", p.ep,
                                     p.dp, p.cp, p.data_ranks()));
  }
  if (p.tp % p.expert_tp() != 0) return problem("etp", fmt::format("etp {} does not divide tp {}", p.expert_tp(), p.tp));
  if (m.expert_ffn_hidden % p.expert_tp() != 0) {
    return problem("etp", fmt::format("etp {} does not divide expert_ffn_hidden {}", p.expert_tp(), m.expert_ffn_hidden));
  }
  if (m.shared_experts > 0 && m.shared_experts * m.shared_expert_ffn_hidden % p.tp != 0) {
    return problem("tp", fmt::format("tp {} does not divide the shared experts' width {} x {}", p.tp, m.shared_experts, m.shared_expert_ffn_hidden));
  }
  if (p.tp > 1 && !p.sp) return problem("sp", "a mixture of experts with tp > 1 needs sp (Megatron-LM's token dispatcher works on sequence-parallel tokens)");
  return std::nullopt;
}

// How many chunks each schedule puts on a stage, and which it runs at all.
std::optional<PlanProblem> find_schedule_problem(const Plan& p) {
  auto problem = [](std::string key, std::string message) { return PlanProblem{std::move(key), std::move(message)}; };
  const auto name = schedule_name(p.schedule);
  if (p.vpp > 1 && p.pp == 1) return problem("vpp", "vpp > 1 needs pipeline parallelism (pp > 1)");
  if (is_v_shaped(p.schedule)) {
    if (p.pp == 1) return problem("schedule", fmt::format("{} needs pipeline parallelism (pp > 1)", name));
    if (p.vpp != 2) return problem("vpp", fmt::format("{} places two chunks on each stage (a V): vpp 2, not {}", name, p.vpp));
    return std::nullopt;
  }
  if (p.schedule == Schedule::dualpipe) {
    if (p.pp < 2 || p.pp % 2 != 0) return problem("pp", fmt::format("dualpipe runs the pipeline from both ends: pp must be even, not {}", p.pp));
    if (p.vpp != 1) return problem("vpp", fmt::format("dualpipe holds one chunk a direction on each stage: vpp 1, not {}", p.vpp));
    return std::nullopt;
  }
  if (p.vpp > 1 && p.schedule != Schedule::interleaved_1f1b) {
    return problem("schedule", fmt::format("vpp {} needs schedule interleaved-1f1b (or zb-v, dualpipe-v with vpp 2), not {}", p.vpp, name));
  }
  if (p.schedule == Schedule::interleaved_1f1b && p.vpp == 1) return problem("vpp", "interleaved-1f1b needs vpp > 1");
  return std::nullopt;
}

// The expert all-to-all overlap pairs a forward with a backward, which the schedules that have such
// pairs run: DualPipe's, and 1F1B's steady state interleaved (Megatron-LM asks for a virtual pipeline
// once there is a pipeline) or without a pipeline.
std::optional<PlanProblem> find_ep_overlap_problem(const Plan& p) {
  if (!p.overlap.ep_comm) return std::nullopt;
  if (p.ep == 1) return PlanProblem{"overlap", "ep_comm overlaps the expert all-to-alls: it needs expert parallelism (ep > 1)"};
  const bool pairs = p.pp == 1 ? p.schedule == Schedule::one_f_one_b
                               : p.schedule == Schedule::interleaved_1f1b || p.schedule == Schedule::dualpipe || p.schedule == Schedule::dualpipe_v;
  if (pairs) return std::nullopt;
  return PlanProblem{"overlap", fmt::format("ep_comm pairs forwards with backwards: with pp > 1 it needs interleaved-1f1b, dualpipe or dualpipe-v, not {}",
                                            schedule_name(p.schedule))};
}

// The micro-batch counts the schedules' runtimes accept.
std::optional<PlanProblem> find_schedule_batch_problem(const Plan& p) {
  auto problem = [](std::string key, std::string message) { return PlanProblem{std::move(key), std::move(message)}; };
  const int m = p.micro_batches();
  if (p.microbatch_group > 0 && p.schedule != Schedule::interleaved_1f1b) {
    return problem("microbatch_group", fmt::format("groups micro-batches of interleaved-1f1b's chunks; the schedule is {}", schedule_name(p.schedule)));
  }
  if (p.schedule == Schedule::interleaved_1f1b) {
    const int n = p.microbatch_group_size();
    if (n < p.pp || n > m) {
      return problem(p.microbatch_group > 0 ? "microbatch_group" : "global_batch",
                     fmt::format("interleaved-1f1b runs groups of {} micro-batches, which must lie in [pp {}, the {} micro-batches] (Megatron-LM)", n,
                                 p.pp, m));
    }
    if (m % n != 0 && m % n < p.pp) {
      const int smallest = smallest_microbatch_group(m, p.pp);
      return problem(p.microbatch_group > 0 ? "microbatch_group" : "global_batch",
                     fmt::format("interleaved-1f1b: the {} micro-batches leave a last group of {}, fewer than pp {} (Megatron-LM); "
                                 "microbatch_group {} would run them",
                                 m, m % n, p.pp, smallest));
    }
  }
  // DualPipe sends half the micro-batches from each end; both it and DualPipe-V need at least two
  // per rank and direction to fill their warm-up (DeepSeek's dualpipe asserts as much).
  if (p.schedule == Schedule::dualpipe && (m % 2 != 0 || m < 2 * p.pp)) {
    return problem("global_batch", fmt::format("dualpipe needs an even number of micro-batches, at least 2 x pp = {}; the plan has {}", 2 * p.pp, m));
  }
  // ZB-V's warm-up sends forwards down and back up the V before the first backward returns.
  if (p.schedule == Schedule::zb_v && m < p.pp) {
    return problem("global_batch", fmt::format("zb-v needs at least pp = {} micro-batches; the plan has {}", p.pp, m));
  }
  if (p.schedule == Schedule::dualpipe_v && m < 2 * p.pp) {
    return problem("global_batch", fmt::format("dualpipe-v needs at least 2 x pp = {} micro-batches; the plan has {}", 2 * p.pp, m));
  }
  return std::nullopt;
}

}  // namespace

namespace {

PlanProblem problem(std::string key, std::string message) { return PlanProblem{std::move(key), std::move(message)}; }

// The products of degrees below are formed in int: the degrees' product must be the GPU count
// (checked in double, where it cannot wrap) before any of them is, and the chunks and the
// micro-batch product bounded likewise.
std::optional<PlanProblem> find_size_problem(const Plan& p, const ModelSpec& m, int gpus) {
  const double product = static_cast<double>(p.tp) * p.pp * p.dp * p.cp;
  if (product != gpus) {
    if (p.cp > 1) {
      return problem("dp", fmt::format("dp {} x tp {} x pp {} x cp {} = {:.0f} GPUs, but the cluster has {}", p.dp, p.tp, p.pp, p.cp, product, gpus));
    }
    return problem("dp", fmt::format("dp {} x tp {} x pp {} = {:.0f} GPUs, but the cluster has {}", p.dp, p.tp, p.pp, product, gpus));
  }
  if (static_cast<double>(p.pp) * p.vpp > std::numeric_limits<int>::max()) {
    return problem("vpp", fmt::format("pp {} x vpp {} chunks are more than any model has layers", p.pp, p.vpp));
  }
  if (static_cast<double>(p.micro_batch) * p.dp > p.global_batch) {
    return problem("micro_batch", fmt::format("micro_batch {} x dp {} exceeds the global batch {}", p.micro_batch, p.dp, p.global_batch));
  }
  // The task graph holds every layer's passes of every micro-batch of a replica.
  const double passes = std::ceil(static_cast<double>(p.global_batch) / (static_cast<double>(p.micro_batch) * p.dp)) * (m.layers + m.mtp_layers);
  if (passes > kMaxLayerPasses) {
    return problem("global_batch", fmt::format("{:.0f} micro-batches a replica of {} layers are more than the {:.0f} layer passes parasim simulates",
                                               passes / (m.layers + m.mtp_layers), m.layers + m.mtp_layers, kMaxLayerPasses));
  }
  return std::nullopt;
}

// Tensor parallelism splits whole heads, whole query groups and the MLP; Ulysses CP whole heads of a
// TP rank's share.
std::optional<PlanProblem> find_head_split_problem(const Plan& p, const ModelSpec& m) {
  if (m.heads % p.tp != 0) return problem("tp", fmt::format("tp {} does not divide the {} attention heads", p.tp, m.heads));
  if (m.kv_heads % p.tp != 0) {
    return problem("tp", fmt::format("tp {} does not divide the {} key/value heads (Megatron-LM needs whole query groups per rank)", p.tp, m.kv_heads));
  }
  if (m.ffn_hidden % p.tp != 0) return problem("tp", fmt::format("tp {} does not divide ffn_hidden {}", p.tp, m.ffn_hidden));
  if (p.cp > 1 && p.cp_kind == CpKind::ulysses) {
    if ((m.heads / p.tp) % p.cp != 0) {
      return problem("cp", fmt::format("ulysses cp {} does not divide the {} attention heads of a TP rank ({} / tp {})", p.cp, m.heads / p.tp, m.heads, p.tp));
    }
    if ((m.kv_heads / p.tp) % p.cp != 0) {
      return problem("cp", fmt::format("ulysses cp {} does not divide the {} key/value heads of a TP rank ({} / tp {})", p.cp, m.kv_heads / p.tp,
                                        m.kv_heads, p.tp));
    }
  }
  return std::nullopt;
}

// Causal load balancing gives each ring-CP rank chunks i and 2·cp − 1 − i of the sequence.
std::optional<PlanProblem> find_ring_problem(const Plan& p, int seq_len) {
  if (p.cp > 1 && p.cp_kind == CpKind::ring && seq_len > 0 && seq_len % (2 * p.cp) != 0) {
    return problem("cp", fmt::format("ring cp {} needs the sequence ({}) to split into 2 x cp = {} equal chunks (causal load balancing)", p.cp,
                                     seq_len, 2 * p.cp));
  }
  return std::nullopt;
}

// The layers over the pipeline's chunks: evenly, or as stage_layers lists them.
std::optional<PlanProblem> find_layer_split_problem(const Plan& p, const ModelSpec& m) {
  if (p.chunk_layers.empty()) {
    if (m.layers % p.chunks() != 0) {
      return problem(p.vpp > 1 ? "vpp" : "pp",
                     fmt::format("pp {} x vpp {} = {} chunks do not divide {} layers; give stage_layers for an uneven split", p.pp, p.vpp,
                                 p.chunks(), m.layers));
    }
    return std::nullopt;
  }
  if (static_cast<int>(p.chunk_layers.size()) != p.chunks()) {
    return problem("stage_layers", fmt::format("lists {} chunks, the plan has pp {} x vpp {} = {}", p.chunk_layers.size(), p.pp, p.vpp, p.chunks()));
  }
  // The first chunk may hold the embedding alone and the last the head alone (Megatron-LM's
  // layouts "E|…" and "…|L"); every other chunk needs a layer.
  for (std::size_t c = 0; c < p.chunk_layers.size(); ++c) {
    const bool end = c == 0 || c + 1 == p.chunk_layers.size();
    if (p.chunk_layers[c] < (end && p.chunks() > 1 ? 0 : 1)) {
      return problem("stage_layers", end ? "a pipeline chunk cannot hold fewer than 0 layers" : "every pipeline chunk between the first and the last needs at least one layer");
    }
  }
  // The embedding's weight gradients are its backward's only work: a schedule that defers them
  // would leave an embedding-only chunk's backward empty.
  if (p.chunk_layers.front() == 0 && defers_weights(p.schedule)) {
    return problem("stage_layers", fmt::format("a first chunk with the embedding alone needs a schedule that does not defer weight gradients, not {}", schedule_name(p.schedule)));
  }
  const int sum = std::accumulate(p.chunk_layers.begin(), p.chunk_layers.end(), 0);
  if (sum != m.layers) return problem("stage_layers", fmt::format("adds up to {} layers, the model has {}", sum, m.layers));
  return std::nullopt;
}

// The global batch over data-parallel ranks and micro-batches (FSDP without a pipeline takes a
// rank's samples in one step, so only dp must divide it).
std::optional<PlanProblem> find_batch_problem(const Plan& p) {
  const bool fsdp_style = p.zero == 3 && p.pp == 1;
  if (p.global_batch % p.dp != 0) {
    return problem("global_batch", fmt::format("global batch {} does not divide over dp {}", p.global_batch, p.dp));
  }
  if (!fsdp_style && p.global_batch % (p.micro_batch * p.dp) != 0) {
    return problem("global_batch", fmt::format("global batch {} is not a multiple of micro_batch {} x dp {} = {}", p.global_batch, p.micro_batch,
                                               p.dp, p.micro_batch * p.dp));
  }
  if (p.micro_batch * p.dp > p.global_batch) {
    return problem("micro_batch", fmt::format("micro_batch {} x dp {} exceeds the global batch {}", p.micro_batch, p.dp, p.global_batch));
  }
  return find_schedule_batch_problem(p);
}

std::optional<PlanProblem> find_sharding_problem(const Plan& p) {
  if (p.zero_group > 0 && p.data_ranks() % p.zero_group != 0) {
    if (p.cp > 1) return problem("zero_group", fmt::format("zero_group {} does not divide dp {} x cp {}", p.zero_group, p.dp, p.cp));
    return problem("zero_group", fmt::format("zero_group {} does not divide dp {}", p.zero_group, p.dp));
  }
  if (p.zero_group > 0 && p.zero == 0) return problem("zero_group", "a sharding group needs zero >= 1");
  return std::nullopt;
}

std::optional<PlanProblem> find_recompute_problem(const Plan& p, const ModelSpec& m) {
  if (auto modules = recompute_modules_problem(p.recompute_modules, m)) return problem("recompute_modules", *modules);
  for (const auto& o : p.recompute_overrides) {
    if (o.first_layer > o.last_layer || o.last_layer >= m.layers) {
      return problem("overrides", fmt::format("layers [{}, {}] are not a range within the model's {} layers", o.first_layer, o.last_layer, m.layers));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<PlanProblem> find_plan_problem(const Plan& p, const ModelSpec& m, int gpus, int seq_len) {
  // In this order: each check may form products the ones before bounded.
  if (auto x = find_size_problem(p, m, gpus)) return x;
  if (auto x = find_head_split_problem(p, m)) return x;
  if (auto x = find_moe_problem(p, m)) return x;
  if (auto x = find_ep_overlap_problem(p)) return x;
  if (auto x = find_ring_problem(p, seq_len)) return x;
  if (auto x = find_schedule_problem(p)) return x;
  if (auto x = find_layer_split_problem(p, m)) return x;
  if (auto x = find_batch_problem(p)) return x;
  if (auto x = find_sharding_problem(p)) return x;
  return find_recompute_problem(p, m);
}

namespace {

RecomputeModules parse_recompute_modules(const yaml::Record& r, const Plan& p) {
  if (!p.recomputes_selectively()) r.fail("recompute_modules", "only selective recompute takes modules (recompute: selective)");
  auto modules = RecomputeModules::of({});
  for (const auto& name : r.strings("recompute_modules")) {
    const auto m = recompute_module_from_name(name);
    if (!m) {
      r.fail("recompute_modules", fmt::format("'{}' is not a module; use core_attn, mlp, moe, moe_act, shared_experts, layernorm or mla_up_proj", name));
    }
    if (modules.has(*m)) r.fail("recompute_modules", fmt::format("'{}' appears twice", name));
    modules = modules.with(*m);
  }
  return modules;
}

}  // namespace

namespace {

// dp as stated, or what the other degrees leave of the GPUs.
int parse_data_parallel(const yaml::Record& r, const Plan& p, int gpus) {
  if (r.has("dp")) return static_cast<int>(r.integer("dp"));
  if (static_cast<double>(p.tp) * p.pp * p.cp > gpus) {
    r.fail("tp", fmt::format("tp {} x pp {} x cp {} = {:.0f} is more than the {} GPUs", p.tp, p.pp, p.cp, static_cast<double>(p.tp) * p.pp * p.cp, gpus));
  }
  const int others = p.tp * p.pp * p.cp;
  if (gpus % others != 0) {
    if (p.cp > 1) r.fail("tp", fmt::format("tp {} x pp {} x cp {} = {} does not divide the {} GPUs", p.tp, p.pp, p.cp, others, gpus));
    r.fail("tp", fmt::format("tp {} x pp {} = {} does not divide the {} GPUs", p.tp, p.pp, others, gpus));
  }
  return gpus / others;
}

Recompute recompute_from_name(const std::string& name) {
  return name == "full" ? Recompute::full : name == "selective" ? Recompute::selective : Recompute::none;
}

// recompute, its method and layer count, and per-layer overrides.
void parse_recompute(const yaml::Record& r, Plan& p) {
  p.recompute = recompute_from_name(r.string("recompute"));
  p.recompute_method = r.string("recompute_method") == "block" ? RecomputeMethod::block : RecomputeMethod::uniform;
  p.recompute_layers = static_cast<int>(r.integer("recompute_layers"));
  if (r.has("overrides")) {
    for (const auto& o : r.sections("overrides")) {
      const auto& layers = o.integers("layers");
      if (layers.size() != 2) o.fail("layers", "expected [first, last]");
      p.recompute_overrides.push_back({static_cast<int>(layers[0]), static_cast<int>(layers[1]), recompute_from_name(o.string("recompute"))});
    }
  }
  if (p.recompute_layers > 1 && p.recompute != Recompute::full) {
    r.fail("recompute_layers", "only full recompute takes recompute_layers");
  }
}

// The order of the dimensions over the ranks, innermost first; what it leaves out follows.
std::vector<ParallelDim> parse_order(const yaml::Record& r) {
  std::vector<ParallelDim> order;
  for (const auto& name : r.strings("order")) {
    const auto dim = name == "tp"   ? ParallelDim::tp
                     : name == "dp" ? ParallelDim::dp
                     : name == "pp" ? ParallelDim::pp
                     : name == "cp" ? ParallelDim::cp
                                    : static_cast<ParallelDim>(-1);
    if (static_cast<int>(dim) < 0) {
      r.fail("order", fmt::format("'{}' is not a dimension; use tp, cp, dp and pp{}", name,
                                  name == "ep" ? " (expert-parallel groups are carved out of dp x cp)" : ""));
    }
    if (std::find(order.begin(), order.end(), dim) != order.end()) r.fail("order", fmt::format("'{}' appears twice", name));
    order.push_back(dim);
  }
  order = full_order(order);
  if (order.size() != 4) r.fail("order", "must name tp, dp and pp, each once (and cp, or it goes after tp)");
  return order;
}

}  // namespace

Plan parse_plan(const yaml::Record& r, const ModelSpec& model, int gpus, int seq_len) {
  Plan p;
  p.tp = static_cast<int>(r.integer("tp"));
  p.sp = r.boolean("sp") && p.tp > 1;
  p.pp = static_cast<int>(r.integer("pp"));
  p.vpp = static_cast<int>(r.integer("vpp"));
  p.microbatch_group = r.has("microbatch_group") ? static_cast<int>(r.integer("microbatch_group")) : 0;
  p.cp = static_cast<int>(r.integer("cp"));
  p.ep = static_cast<int>(r.integer("ep"));
  p.etp = r.has("etp") ? static_cast<int>(r.integer("etp")) : 0;
  p.cp_kind = r.string("cp_kind") == "ulysses" ? CpKind::ulysses : CpKind::ring;
  p.dp = parse_data_parallel(r, p, gpus);
  if (r.has("schedule")) {
    p.schedule = schedule_from_name(r.string("schedule")).value_or(Schedule::one_f_one_b);
    if (is_v_shaped(p.schedule) && !r.stated("vpp")) p.vpp = 2;
  } else {
    p.schedule = p.vpp > 1 ? Schedule::interleaved_1f1b : Schedule::one_f_one_b;
  }
  p.zero = static_cast<int>(r.integer("zero"));
  if (r.boolean("distributed_optimizer")) {
    if (p.zero > 1) r.fail("distributed_optimizer", fmt::format("the distributed optimizer is zero: 1, and the plan says zero: {}", p.zero));
    p.zero = 1;
  }
  p.zero_group = r.has("zero_group") ? static_cast<int>(r.integer("zero_group")) : 0;
  p.micro_batch = static_cast<int>(r.integer("micro_batch"));
  p.global_batch = static_cast<int>(r.integer("global_batch"));
  const auto& ov = r.section("overlap");
  p.overlap = {ov.boolean("grad_reduce"), ov.boolean("param_gather"), ov.boolean("tp_comm"), ov.boolean("ep_comm")};
  p.order = parse_order(r);
  if (r.has("stage_layers")) {
    for (auto x : r.integers("stage_layers")) p.chunk_layers.push_back(static_cast<int>(x));
  }
  p.bucket_params = r.has("bucket_params") ? r.number("bucket_params") : 0.0;
  parse_recompute(r, p);
  if (r.stated("recompute_modules")) p.recompute_modules = parse_recompute_modules(r, p);
  if (auto problem = find_plan_problem(p, model, gpus, seq_len)) r.fail(problem->key, problem->message);
  return p;
}

}  // namespace parasim::workload
