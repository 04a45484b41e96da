#include "sim/measured_run.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <numeric>
#include <set>
#include <tuple>

#include "core/schema.hpp"
#include "sim/software_stack.hpp"
#include "workload/model.hpp"
#include "workload/recompute_modules.hpp"

namespace parasim::sim {
namespace {

using yaml::Field;
using yaml::FieldType;

constexpr std::string_view kArch[] = {"gpt", "llama", "moe"};
constexpr std::string_view kPrecision[] = {"bf16", "fp16", "fp8"};
constexpr std::string_view kAttention[] = {"flash", "eager"};
constexpr std::string_view kRecompute[] = {"none", "selective", "full"};
constexpr std::string_view kSchedules[] = {"1f1b", "interleaved-1f1b", "gpipe", "zb-h1", "zb-1p", "zb-2p", "zb-v", "dualpipe", "dualpipe-v"};

constexpr Field kMlaFields[] = {
    {.name = "q_lora_rank", .type = FieldType::integer, .description = "query compression rank; absent: queries projected directly", .min = 1, .max = workload::kMaxWidth},
    {.name = "kv_lora_rank", .type = FieldType::integer, .description = "key/value compression rank", .required = true, .min = 1, .max = workload::kMaxWidth},
    {.name = "qk_nope_head_dim", .type = FieldType::integer, .description = "query/key head width without RoPE", .required = true, .min = 1, .max = workload::kMaxHeadDim},
    {.name = "qk_rope_head_dim", .type = FieldType::integer, .description = "query/key head width with RoPE", .required = true, .min = 1, .max = workload::kMaxHeadDim},
    {.name = "v_head_dim", .type = FieldType::integer, .description = "value head width", .required = true, .min = 1, .max = workload::kMaxHeadDim},
};
constexpr yaml::Schema kMlaSchema{"mla", "Multi-head latent attention (DeepSeek-V2/V3).", kMlaFields};

constexpr Field kModelFields[] = {
    {.name = "arch", .type = FieldType::choice, .description = "architecture family", .required = true, .choices = kArch},
    {.name = "layers", .type = FieldType::integer, .description = "layers", .required = true, .min = 1, .max = workload::kMaxLayers},
    {.name = "hidden", .type = FieldType::integer, .description = "hidden size", .required = true, .min = 1, .max = workload::kMaxWidth},
    {.name = "heads", .type = FieldType::integer, .description = "attention heads", .required = true, .min = 1, .max = workload::kMaxHeads},
    {.name = "kv_heads", .type = FieldType::integer, .description = "key/value heads", .min = 1, .max = workload::kMaxHeads},
    {.name = "head_dim", .type = FieldType::integer, .description = "attention head width; absent: hidden / heads", .min = 1, .max = workload::kMaxHeadDim},
    {.name = "ffn_hidden", .type = FieldType::integer, .description = "MLP width", .min = 1, .max = workload::kMaxWidth},
    {.name = "vocab", .type = FieldType::integer, .description = "vocabulary", .min = 1, .max = workload::kMaxVocab},
    {.name = "tied_embeddings", .type = FieldType::boolean, .description = "the output layer shares the embedding's weights; absent: the fill policy's"},
    {.name = "seq_len", .type = FieldType::integer, .description = "sequence length", .required = true, .min = 1, .max = workload::kMaxTokens},
    {.name = "params_b", .type = FieldType::number, .description = "parameters in billions", .min = 0},
    {.name = "experts", .type = FieldType::integer, .description = "MoE experts", .min = 1, .max = workload::kMaxHeads},
    {.name = "top_k", .type = FieldType::integer, .description = "MoE experts per token", .min = 1, .max = workload::kMaxHeads},
    {.name = "shared_experts", .type = FieldType::integer, .description = "MoE shared experts", .min = 0, .max = workload::kMaxHeads},
    {.name = "expert_ffn_hidden", .type = FieldType::integer, .description = "MoE expert MLP width", .min = 1, .max = workload::kMaxWidth},
    {.name = "dense_layers", .type = FieldType::integer, .description = "MoE: the first N layers are dense (ffn_hidden)", .min = 0, .max = workload::kMaxLayers},
    {.name = "mla", .type = FieldType::section, .description = "multi-head latent attention", .schema = &kMlaSchema},
    {.name = "mtp_layers", .type = FieldType::integer, .description = "multi-token-prediction blocks", .min = 0, .max = workload::kMaxLayers},
    {.name = "sliding_window", .type = FieldType::integer, .description = "attention window in tokens", .min = 1, .max = workload::kMaxTokens},
    {.name = "dropout", .type = FieldType::number, .description = "attention and hidden dropout probability, where the source states it (absent: the fill policy's)", .min = 0, .max = 1},
    {.name = "proxy_of", .type = FieldType::string, .description = "the model this one stands in for"},
};
constexpr yaml::Schema kModelSchema{"model", "The model of a measured run.", kModelFields};

constexpr Field kClusterFields[] = {
    {.name = "gpu", .type = FieldType::string, .description = "bundled hardware name", .required = true},
    {.name = "gpus", .type = FieldType::integer, .description = "GPUs in all", .required = true, .min = 1},
    {.name = "gpus_per_node", .type = FieldType::integer, .description = "GPUs per NVSwitch node", .default_text = "8", .min = 1},
    {.name = "nic_gbps_per_gpu", .type = FieldType::number, .description = "inter-node Gb/s per GPU; null: the standard node of that GPU", .min = 0.001, .max = 1e6},
};
constexpr yaml::Schema kClusterSchema{"cluster", "Where a measured run ran.", kClusterFields};

constexpr Field kOverlapFields[] = {
    {.name = "grad_reduce", .type = FieldType::boolean, .description = "DP gradient reduction overlapped"},
    {.name = "param_gather", .type = FieldType::boolean, .description = "parameter all-gather overlapped"},
    {.name = "tp_comm", .type = FieldType::boolean, .description = "TP communication overlapped"},
};
constexpr yaml::Schema kOverlapSchema{"overlap", "Overlap the source states.", kOverlapFields};

constexpr Field kPlanFields[] = {
    {.name = "tp", .type = FieldType::integer, .description = "tensor parallel", .required = true, .min = 1},
    {.name = "pp", .type = FieldType::integer, .description = "pipeline parallel", .required = true, .min = 1},
    {.name = "dp", .type = FieldType::integer, .description = "data parallel", .required = true, .min = 1},
    {.name = "cp", .type = FieldType::integer, .description = "context parallel", .default_text = "1", .min = 1},
    {.name = "ep", .type = FieldType::integer, .description = "expert parallel", .default_text = "1", .min = 1},
    {.name = "sp", .type = FieldType::boolean, .description = "sequence parallel"},
    {.name = "vpp", .type = FieldType::integer, .description = "virtual pipeline stages", .min = 1},
    {.name = "zero", .type = FieldType::integer, .description = "ZeRO stage", .min = 0, .max = 3},
    {.name = "recompute", .type = FieldType::choice, .description = "activation recompute", .choices = kRecompute},
    {.name = "recompute_modules", .type = FieldType::string_list, .description = "what selective recompute reruns, where the source names Megatron-Core's --recompute-modules"},
    {.name = "micro_batch", .type = FieldType::integer, .description = "micro-batch", .min = 1},
    {.name = "global_batch", .type = FieldType::integer, .description = "global batch", .required = true, .min = 1},
    {.name = "zero_group", .type = FieldType::integer, .description = "sharding group", .min = 1},
    {.name = "schedule", .type = FieldType::choice, .description = "pipeline schedule where the source names it", .choices = kSchedules},
    {.name = "stage_layers", .type = FieldType::integer_list, .description = "transformer layers per pipeline stage (an uneven split)", .min = 0},
    {.name = "overlap", .type = FieldType::section, .description = "overlap", .schema = &kOverlapSchema},
};
constexpr yaml::Schema kPlanSchema{"plan", "The plan of a measured run.", kPlanFields};

constexpr Field kMeasuredFields[] = {
    {.name = "iteration_s", .type = FieldType::number, .description = "seconds per optimizer step (a microsecond to 100 days: the simulator's clock)", .required = true, .min = 1e-6, .max = 8.64e6},
    {.name = "derived", .type = FieldType::string, .description = "how iteration_s was obtained"},
};
constexpr yaml::Schema kMeasuredSchema{"measured", "What the run achieved.", kMeasuredFields};

constexpr Field kRunFields[] = {
    {.name = "id", .type = FieldType::string, .description = "unique id", .required = true},
    {.name = "source", .type = FieldType::string, .description = "where the figures come from", .required = true},
    {.name = "model", .type = FieldType::section, .description = "model", .required = true, .schema = &kModelSchema},
    {.name = "cluster", .type = FieldType::section, .description = "cluster", .required = true, .schema = &kClusterSchema},
    {.name = "precision", .type = FieldType::choice, .description = "training format", .required = true, .choices = kPrecision},
    {.name = "attention", .type = FieldType::choice, .description = "attention kernel", .required = true, .choices = kAttention},
    {.name = "plan", .type = FieldType::section, .description = "plan", .required = true, .schema = &kPlanSchema},
    {.name = "measured", .type = FieldType::section, .description = "measurement", .required = true, .schema = &kMeasuredSchema},
    {.name = "as_published", .type = FieldType::node, .description = "the source's own figures (kept as written)"},
    {.name = "notes", .type = FieldType::string, .description = "free text"},
};
constexpr yaml::Schema kRunSchema{"run", "One measured training run.", kRunFields};

// Rows are read one at a time (read_row), so that one bad row does not take the file with it.
constexpr Field kFileFields[] = {
    {.name = "runs", .type = FieldType::node, .description = "measured runs", .required = true},
};
constexpr yaml::Schema kFileSchema{"validation", "Measured training runs.", kFileFields};

template <class T>
std::optional<T> opt_int(const yaml::Record& r, std::string_view k) {
  return r.has(k) ? std::optional<T>(static_cast<T>(r.integer(k))) : std::nullopt;
}

int get_int(const yaml::Record& r, std::string_view k) { return static_cast<int>(r.integer(k)); }

void read_model(const yaml::Record& mo, MeasuredRun& m) {
  m.arch = mo.string("arch");
  m.layers = get_int(mo, "layers");
  m.hidden = get_int(mo, "hidden");
  m.heads = get_int(mo, "heads");
  m.seq_len = get_int(mo, "seq_len");
  m.kv_heads = opt_int<int>(mo, "kv_heads");
  m.head_dim = opt_int<int>(mo, "head_dim");
  m.ffn_hidden = opt_int<int>(mo, "ffn_hidden");
  m.vocab = opt_int<int>(mo, "vocab");
  if (mo.has("tied_embeddings")) m.tied_embeddings = mo.boolean("tied_embeddings");
  m.experts = opt_int<int>(mo, "experts");
  m.top_k = opt_int<int>(mo, "top_k");
  m.shared_experts = opt_int<int>(mo, "shared_experts");
  m.expert_ffn_hidden = opt_int<int>(mo, "expert_ffn_hidden");
  m.dense_layers = opt_int<int>(mo, "dense_layers");
  m.mtp_layers = opt_int<int>(mo, "mtp_layers");
  m.sliding_window = opt_int<int>(mo, "sliding_window");
  if (mo.has("params_b")) m.params_b = mo.number("params_b");
  if (mo.has("dropout")) m.dropout = mo.number("dropout");
  if (mo.has("mla")) {
    const auto& a = mo.section("mla");
    m.mla = MlaShape{opt_int<int>(a, "q_lora_rank"), get_int(a, "kv_lora_rank"), get_int(a, "qk_nope_head_dim"), get_int(a, "qk_rope_head_dim"),
                     get_int(a, "v_head_dim")};
  }
  if (m.dense_layers && *m.dense_layers >= m.layers) {
    mo.fail("dense_layers", fmt::format("{} dense layers leave none of the {} layers for the experts", *m.dense_layers, m.layers));
  }
  if (m.dense_layers && m.arch != "moe") mo.fail("dense_layers", fmt::format("dense layers are the first layers of a mixture of experts (arch moe), not {}", m.arch));
}

void read_plan(const yaml::Record& p, MeasuredRun& m) {
  m.tp = get_int(p, "tp");
  m.pp = get_int(p, "pp");
  m.dp = get_int(p, "dp");
  m.cp = get_int(p, "cp");
  m.ep = get_int(p, "ep");
  m.global_batch = get_int(p, "global_batch");
  if (p.has("sp")) m.sp = p.boolean("sp");
  m.vpp = opt_int<int>(p, "vpp");
  m.zero = opt_int<int>(p, "zero");
  m.micro_batch = opt_int<int>(p, "micro_batch");
  m.zero_group = opt_int<int>(p, "zero_group");
  if (p.has("recompute")) m.recompute = p.string("recompute");
  if (p.has("recompute_modules")) {
    if (m.recompute != "selective") p.fail("recompute_modules", "only selective recompute takes modules (recompute: selective)");
    m.recompute_modules.emplace();
    for (const auto& name : p.strings("recompute_modules")) {
      if (!workload::recompute_module_from_name(name)) {
        p.fail("recompute_modules", fmt::format("'{}' is not a module; use core_attn, mlp, moe, moe_act, shared_experts, layernorm or mla_up_proj", name));
      }
      m.recompute_modules->push_back(name);
    }
  }
  if (p.has("schedule")) m.schedule = p.string("schedule");
  if (p.has("overlap")) {
    const auto& o = p.section("overlap");
    if (o.has("grad_reduce")) m.overlap_grad_reduce = o.boolean("grad_reduce");
    if (o.has("param_gather")) m.overlap_param_gather = o.boolean("param_gather");
    if (o.has("tp_comm")) m.overlap_tp_comm = o.boolean("tp_comm");
  }
  // Chunks per stage against the named schedule: interleaving needs several; the V-shaped schedules
  // (ZB-V, DualPipe-V) and DualPipe hold two a stage, so their rows may state it.
  if (m.schedule && m.vpp) {
    const bool interleaved = *m.schedule == "interleaved-1f1b";
    if (interleaved && *m.vpp == 1) p.fail("vpp", "interleaved-1f1b runs more than one chunk per stage; vpp 1 is the 1f1b schedule");
    if (!interleaved && *m.vpp > 1 && m.schedule->rfind("zb-v", 0) != 0 && m.schedule->rfind("dualpipe", 0) != 0) {
      p.fail("vpp", fmt::format("vpp {} needs schedule interleaved-1f1b, not {}", *m.vpp, *m.schedule));
    }
  }
  if (p.has("stage_layers")) {
    for (auto n : p.integers("stage_layers")) m.stage_layers.push_back(static_cast<int>(n));
    if (static_cast<int>(m.stage_layers.size()) != m.pp) {
      p.fail("stage_layers", fmt::format("lists {} stages, the plan has pp {}", m.stage_layers.size(), m.pp));
    }
    const long sum = std::accumulate(m.stage_layers.begin(), m.stage_layers.end(), 0L);
    if (sum != m.layers) p.fail("stage_layers", fmt::format("adds up to {} layers, the model has {}", sum, m.layers));
  }
}

// as_published is kept as written; a memory figure that reads as a size is compared with the
// model's peak, one that does not is left alone like the rest of the source's own figures.
struct PublishedMemory {
  double bytes = 0;
  std::optional<PrintedMemory> kind;
};

// A key's unit suffix: peak_mem_gib, mem_gb, max_reserved_mib (SI for gb and mb, as sizes read).
std::optional<double> unit_of_key(const std::string& key) {
  static const std::pair<std::string_view, double> units[] = {{"_gib", 1073741824.0}, {"_gb", 1e9}, {"_mib", 1048576.0}, {"_mb", 1e6}};
  for (const auto& [suffix, bytes] : units) {
    if (key.size() > suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) return bytes;
  }
  return std::nullopt;
}

std::optional<PublishedMemory> published_memory(const yaml::Record& r) {
  if (!r.has("as_published")) return std::nullopt;
  const YAML::Node published = r.raw("as_published").raw();
  if (!published.IsMap()) return std::nullopt;
  for (const auto& entry : published) {
    const std::string key = entry.first.as<std::string>();
    const bool memory = key.find("mem") != std::string::npos || key.find("reserved") != std::string::npos || key.find("alloc") != std::string::npos;
    if (!memory || !entry.second.IsScalar()) continue;
    PublishedMemory out;
    if (key.find("reserved") != std::string::npos) out.kind = PrintedMemory::reserved;
    if (key.find("alloc") != std::string::npos) out.kind = PrintedMemory::allocated;
    try {
      if (const auto unit = unit_of_key(key)) {
        out.bytes = entry.second.as<double>() * *unit;
      } else {
        // A bare number says nothing of its unit (a share, a count): only a size with its unit reads.
        const std::string text = entry.second.as<std::string>();
        if (std::none_of(text.begin(), text.end(), [](unsigned char c) { return std::isalpha(c); })) continue;
        out.bytes = parse_bytes(text).value();
      }
    } catch (const std::exception&) {
      continue;
    }
    if (out.bytes > 0 && std::isfinite(out.bytes)) return out;
  }
  return std::nullopt;
}

MeasuredRun read_row(const yaml::Node& node) {
  const yaml::Record r(node, kRunSchema);
  MeasuredRun m;
  m.id = r.string("id");
  m.family = m.id.substr(0, m.id.find('-'));
  m.source = r.string("source");
  if (r.has("notes")) m.notes = r.string("notes");
  m.where = node.location();
  const auto& model = r.section("model");
  read_model(model, m);
  const auto& c = r.section("cluster");
  m.gpu = c.string("gpu");
  m.gpus = get_int(c, "gpus");
  m.gpus_per_node = get_int(c, "gpus_per_node");
  if (c.has("nic_gbps_per_gpu")) m.nic_gbps_per_gpu = c.number("nic_gbps_per_gpu");
  m.precision = r.string("precision");
  m.attention = r.string("attention");
  read_plan(r.section("plan"), m);
  m.measured_iteration_s = r.section("measured").number("iteration_s");
  if (const auto memory = published_memory(r)) {
    m.published_memory_bytes = memory->bytes;
    m.published_memory_kind = memory->kind;
  }
  return m;
}

// The id a row names, for errors about the rest of it.
std::string row_id(const YAML::Node& row) {
  if (!row.IsMap()) return {};
  const auto id = row["id"];
  return id && id.IsScalar() ? id.Scalar() : std::string();
}

}  // namespace

MeasuredRunFile read_measured_runs(const std::filesystem::path& file) {
  const yaml::Record doc(yaml::load_file(file), kFileSchema);
  const auto& runs = doc.raw("runs");
  if (!runs.raw().IsSequence()) runs.fail("expected a list of runs");
  MeasuredRunFile out;
  std::set<std::string, std::less<>> ids;
  for (std::size_t i = 0; i < runs.raw().size(); ++i) {
    const auto row = runs.child(runs.raw()[i], fmt::format("{}", i));
    try {
      auto m = read_row(row);
      if (!ids.insert(m.id).second) row.child(row.raw()["id"], "id").fail(fmt::format("'{}' is the id of an earlier row", m.id));
      out.runs.push_back(std::move(m));
    } catch (const InputError& e) {
      out.errors.push_back({row_id(row.raw()), e});
    }
  }
  return out;
}

std::vector<MeasuredRun> load_measured_runs(const std::filesystem::path& file) {
  auto read = read_measured_runs(file);
  if (!read.errors.empty()) throw read.errors.front().error;
  return std::move(read.runs);
}

namespace {

// The fields a row states that the simulator takes, in one tuple to compare.
auto inputs_of(const MeasuredRun& r) {
  return std::tie(r.arch, r.layers, r.hidden, r.heads, r.seq_len, r.kv_heads, r.head_dim, r.ffn_hidden, r.vocab, r.experts, r.top_k,
                  r.shared_experts, r.expert_ffn_hidden, r.dense_layers, r.mla, r.mtp_layers, r.sliding_window, r.dropout, r.params_b,
                  r.tied_embeddings, r.gpu, r.gpus, r.gpus_per_node, r.nic_gbps_per_gpu, r.precision, r.attention, r.tp, r.pp, r.dp, r.cp,
                  r.ep, r.global_batch, r.sp, r.vpp, r.zero, r.micro_batch, r.zero_group, r.recompute, r.recompute_modules, r.schedule,
                  r.stage_layers, r.overlap_grad_reduce, r.overlap_param_gather, r.overlap_tp_comm);
}

}  // namespace

bool same_inputs(const MeasuredRun& a, const MeasuredRun& b) {
  return inputs_of(a) == inputs_of(b) && software_stack_of(a.source) == software_stack_of(b.source);
}

}  // namespace parasim::sim
