#include "sim/measured_run.hpp"

#include "core/schema.hpp"

namespace parasim::sim {
namespace {

using yaml::Field;
using yaml::FieldType;

constexpr std::string_view kArch[] = {"gpt", "llama", "moe"};
constexpr std::string_view kPrecision[] = {"bf16", "fp16", "fp8"};
constexpr std::string_view kAttention[] = {"flash", "eager"};
constexpr std::string_view kRecompute[] = {"none", "selective", "full"};

constexpr Field kModelFields[] = {
    {.name = "arch", .type = FieldType::choice, .description = "architecture family", .required = true, .choices = kArch},
    {.name = "layers", .type = FieldType::integer, .description = "layers", .required = true, .min = 1},
    {.name = "hidden", .type = FieldType::integer, .description = "hidden size", .required = true, .min = 1},
    {.name = "heads", .type = FieldType::integer, .description = "attention heads", .required = true, .min = 1},
    {.name = "kv_heads", .type = FieldType::integer, .description = "key/value heads", .min = 1},
    {.name = "ffn_hidden", .type = FieldType::integer, .description = "MLP width", .min = 1},
    {.name = "vocab", .type = FieldType::integer, .description = "vocabulary", .min = 1},
    {.name = "seq_len", .type = FieldType::integer, .description = "sequence length", .required = true, .min = 1},
    {.name = "params_b", .type = FieldType::number, .description = "parameters in billions", .min = 0},
    {.name = "experts", .type = FieldType::integer, .description = "MoE experts", .min = 1},
    {.name = "top_k", .type = FieldType::integer, .description = "MoE experts per token", .min = 1},
    {.name = "shared_experts", .type = FieldType::integer, .description = "MoE shared experts", .min = 0},
    {.name = "expert_ffn_hidden", .type = FieldType::integer, .description = "MoE expert MLP width", .min = 1},
    {.name = "proxy_of", .type = FieldType::string, .description = "the model this one stands in for"},
};
constexpr yaml::Schema kModelSchema{"model", "The model of a measured run.", kModelFields};

constexpr Field kClusterFields[] = {
    {.name = "gpu", .type = FieldType::string, .description = "bundled hardware name", .required = true},
    {.name = "gpus", .type = FieldType::integer, .description = "GPUs in all", .required = true, .min = 1},
    {.name = "gpus_per_node", .type = FieldType::integer, .description = "GPUs per NVSwitch node", .default_text = "8", .min = 1},
    {.name = "nic_gbps_per_gpu", .type = FieldType::number, .description = "inter-node Gb/s per GPU; null: the standard node of that GPU", .min = 0, .min_exclusive = true},
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
    {.name = "micro_batch", .type = FieldType::integer, .description = "micro-batch", .min = 1},
    {.name = "global_batch", .type = FieldType::integer, .description = "global batch", .required = true, .min = 1},
    {.name = "zero_group", .type = FieldType::integer, .description = "sharding group", .min = 1},
    {.name = "overlap", .type = FieldType::section, .description = "overlap", .schema = &kOverlapSchema},
};
constexpr yaml::Schema kPlanSchema{"plan", "The plan of a measured run.", kPlanFields};

constexpr Field kMeasuredFields[] = {
    {.name = "iteration_s", .type = FieldType::number, .description = "seconds per optimizer step", .required = true, .min = 0, .min_exclusive = true},
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

constexpr Field kFileFields[] = {
    {.name = "runs", .type = FieldType::section_list, .description = "measured runs", .required = true, .schema = &kRunSchema},
};
constexpr yaml::Schema kFileSchema{"validation", "Measured training runs.", kFileFields};

template <class T>
std::optional<T> opt_int(const yaml::Record& r, std::string_view k) {
  return r.has(k) ? std::optional<T>(static_cast<T>(r.integer(k))) : std::nullopt;
}

}  // namespace

std::vector<MeasuredRun> load_measured_runs(const std::filesystem::path& file) {
  const yaml::Record doc(yaml::load_file(file), kFileSchema);
  std::vector<MeasuredRun> runs;
  for (const auto& r : doc.sections("runs")) {
    MeasuredRun m;
    m.id = r.string("id");
    m.family = m.id.substr(0, m.id.find('-'));
    m.source = r.string("source");
    m.where = r.node().location();
    const auto& mo = r.section("model");
    m.arch = mo.string("arch");
    m.layers = static_cast<int>(mo.integer("layers"));
    m.hidden = static_cast<int>(mo.integer("hidden"));
    m.heads = static_cast<int>(mo.integer("heads"));
    m.seq_len = static_cast<int>(mo.integer("seq_len"));
    m.kv_heads = opt_int<int>(mo, "kv_heads");
    m.ffn_hidden = opt_int<int>(mo, "ffn_hidden");
    m.vocab = opt_int<int>(mo, "vocab");
    m.experts = opt_int<int>(mo, "experts");
    m.top_k = opt_int<int>(mo, "top_k");
    m.shared_experts = opt_int<int>(mo, "shared_experts");
    m.expert_ffn_hidden = opt_int<int>(mo, "expert_ffn_hidden");
    if (mo.has("params_b")) m.params_b = mo.number("params_b");
    const auto& c = r.section("cluster");
    m.gpu = c.string("gpu");
    m.gpus = static_cast<int>(c.integer("gpus"));
    m.gpus_per_node = static_cast<int>(c.integer("gpus_per_node"));
    if (c.has("nic_gbps_per_gpu")) m.nic_gbps_per_gpu = c.number("nic_gbps_per_gpu");
    m.precision = r.string("precision");
    m.attention = r.string("attention");
    const auto& p = r.section("plan");
    m.tp = static_cast<int>(p.integer("tp"));
    m.pp = static_cast<int>(p.integer("pp"));
    m.dp = static_cast<int>(p.integer("dp"));
    m.cp = static_cast<int>(p.integer("cp"));
    m.ep = static_cast<int>(p.integer("ep"));
    m.global_batch = static_cast<int>(p.integer("global_batch"));
    if (p.has("sp")) m.sp = p.boolean("sp");
    m.vpp = opt_int<int>(p, "vpp");
    m.zero = opt_int<int>(p, "zero");
    m.micro_batch = opt_int<int>(p, "micro_batch");
    m.zero_group = opt_int<int>(p, "zero_group");
    if (p.has("recompute")) m.recompute = p.string("recompute");
    if (p.has("overlap")) {
      const auto& o = p.section("overlap");
      if (o.has("grad_reduce")) m.overlap_grad_reduce = o.boolean("grad_reduce");
      if (o.has("param_gather")) m.overlap_param_gather = o.boolean("param_gather");
      if (o.has("tp_comm")) m.overlap_tp_comm = o.boolean("tp_comm");
    }
    m.measured_iteration_s = r.section("measured").number("iteration_s");
    // as_published is kept as written; a gpu_mem that reads as a size is compared with the model's
    // peak, one that does not is left alone like the rest of the source's own figures.
    if (r.has("as_published")) {
      const YAML::Node memory = r.raw("as_published").raw()["gpu_mem"];
      if (memory && memory.IsScalar()) {
        try {
          m.published_memory_bytes = parse_bytes(memory.as<std::string>()).value();
        } catch (const UnitError&) {
        }
      }
    }
    runs.push_back(std::move(m));
  }
  return runs;
}

}  // namespace parasim::sim
