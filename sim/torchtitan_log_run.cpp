#include "sim/torchtitan_log_run.hpp"

#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "workload/model.hpp"

namespace parasim::sim {
namespace {

constexpr double kMaxGpus = 1 << 20;  // far past any cluster parasim builds

class ModelArgs {
 public:
  explicit ModelArgs(const calibrate::TorchtitanLog& log) : log_(log) {}

  std::optional<double> number(const std::string& name) const {
    const auto v = log_.model_arg(name);
    if (!v) return std::nullopt;
    double x = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
    if (ec != std::errc() || end != v->data() + v->size() || !std::isfinite(x)) fail(name, fmt::format("'{}' is not a number", *v));
    return x;
  }
  int integer(const std::string& name, double max) const {
    const auto x = number(name);
    if (!x) throw InputError({log_.file.string(), 1, 1}, name, "the model's arguments do not give it");
    if (*x < 1 || *x > max || std::floor(*x) != *x) fail(name, fmt::format("{} is not a whole number between 1 and {}", *x, max));
    return static_cast<int>(*x);
  }
  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    const auto it = log_.model_args.find(name);
    throw InputError({log_.file.string(), it == log_.model_args.end() ? 1 : it->second.line, 1}, name, what);
  }

 private:
  const calibrate::TorchtitanLog& log_;
};

// torchtitan's Llama FFN width: 2/3 of 4·dim, times ffn_dim_multiplier, rounded up to multiple_of;
// a width past any model parasim builds is an error at the multiplier's line.
int llama_ffn_hidden(const ModelArgs& a, int dim, int multiple_of) {
  double hidden = std::floor(2.0 * 4 * dim / 3);
  if (const auto multiplier = a.number("ffn_dim_multiplier")) hidden = std::floor(*multiplier * hidden);
  const double width = std::ceil(hidden / multiple_of) * multiple_of;
  if (!(width >= 1 && width <= workload::kMaxWidth)) a.fail("ffn_dim_multiplier", fmt::format("gives an FFN width of {}, not between 1 and {}", width, workload::kMaxWidth));
  return static_cast<int>(width);
}

// torchtitan's MoE models (qwen3's, llama4's, deepseek_v3's): moe_enabled with moe_args, or llama4's
// num_experts; the expert MLP width is moe_inter_dim.
void read_experts(const ModelArgs& a, const calibrate::TorchtitanLog& log, MeasuredRun& r) {
  const auto enabled = log.model_arg("moe_enabled");
  if (enabled && *enabled != "True") return;
  if (!a.number("moe_args.num_experts")) return;
  r.arch = "moe";
  r.experts = a.integer("moe_args.num_experts", workload::kMaxHeads);
  if (a.number("moe_args.top_k")) r.top_k = a.integer("moe_args.top_k", workload::kMaxHeads);
  if (const auto shared = a.number("moe_args.num_shared_experts"); shared && *shared >= 1) {
    r.shared_experts = a.integer("moe_args.num_shared_experts", workload::kMaxHeads);
  }
  if (a.number("moe_inter_dim")) r.expert_ffn_hidden = a.integer("moe_inter_dim", workload::kMaxWidth);
}

void read_model(const calibrate::TorchtitanLog& log, LogRun& out) {
  const ModelArgs a(log);
  auto& r = out.run;
  r.arch = "llama";
  r.hidden = a.integer("dim", workload::kMaxWidth);
  r.layers = a.integer("n_layers", workload::kMaxLayers);
  r.heads = a.integer("n_heads", workload::kMaxHeads);
  if (a.number("n_kv_heads")) r.kv_heads = a.integer("n_kv_heads", workload::kMaxHeads);
  if (a.number("head_dim")) r.head_dim = a.integer("head_dim", workload::kMaxHeadDim);
  r.vocab = a.integer("vocab_size", workload::kMaxVocab);
  // qwen3 and the models after llama3 state the MLP width (hidden_dim); llama3 derives it.
  if (a.number("hidden_dim")) {
    r.ffn_hidden = a.integer("hidden_dim", workload::kMaxWidth);
  } else {
    const int multiple_of = a.number("multiple_of") ? a.integer("multiple_of", workload::kMaxWidth) : 256;
    r.ffn_hidden = llama_ffn_hidden(a, r.hidden, multiple_of);
  }
  if (const auto tied = log.model_arg("enable_weight_tying")) r.tied_embeddings = *tied == "True";
  read_experts(a, log, r);
  r.dropout = 0.0;
  if (log.model_name.find("llama") == std::string::npos) {
    out.notes.push_back(fmt::format("{}: priced in the llama form (SwiGLU, RMSNorm, RoPE){}", log.model_name,
                                    log.model_arg("qk_norm") == "True" ? "; its q/k norms are not priced" : ""));
  }
}

void read_plan(const calibrate::TorchtitanLog& log, LogRun& out) {
  auto& r = out.run;
  int dp_shard = 1, dp_replicate = 1;
  double world = 1;
  for (const auto& [name, size] : log.mesh) {
    if (size < 1) throw InputError({log.file.string(), log.mesh_line, 1}, "mesh", fmt::format("the mesh dimension '{}' has size {}", name, size));
    world *= size;
    if (world > kMaxGpus) throw InputError({log.file.string(), log.mesh_line, 1}, "mesh", fmt::format("the mesh spans more than {} GPUs", kMaxGpus));
    if (name == "dp_shard" || name == "dp_shard_cp" || name == "fsdp") {
      dp_shard = size;
    } else if (name == "dp_replicate" || name == "dp") {
      dp_replicate = size;
    } else if (name == "tp") {
      r.tp = size;
    } else if (name == "pp") {
      r.pp = size;
    } else if (name == "cp") {
      r.cp = size;
    } else if (name != "dp_cp" && name != "ep" && name != "etp") {
      throw InputError({log.file.string(), log.mesh_line, 1}, "mesh", fmt::format("the mesh dimension '{}' is not one parasim knows", name));
    }
  }
  r.dp = dp_shard * dp_replicate;
  r.zero = dp_shard > 1 ? 3 : 0;
  if (dp_shard > 1 && dp_replicate > 1) r.zero_group = dp_shard;
  r.sp = r.tp > 1;  // torchtitan's tensor parallel plan shards the norms' sequence
  r.recompute = log.activation_checkpoint;
  if (*log.global_batch < 1 || *log.seq_len < 1) {
    throw InputError({log.file.string(), log.batch_line, 1}, "global batch size", "the global batch and the sequence length must be at least 1");
  }
  r.global_batch = *log.global_batch;
  // Without pipeline parallelism a rank runs its local batch at once, or in the accumulation steps.
  if (r.pp == 1 && r.global_batch % r.dp == 0) {
    const int per_rank = r.global_batch / r.dp, steps = log.gradient_accumulation.value_or(1);
    if (steps > 0 && per_rank % steps == 0) r.micro_batch = per_rank / steps;
  }
}

}  // namespace

LogRun torchtitan_log_run(const calibrate::TorchtitanLog& log, const LogCluster& cluster) {
  LogRun out = log_run_named(log.file, "torchtitan");
  auto& r = out.run;
  read_model(log, out);
  read_plan(log, out);
  r.seq_len = *log.seq_len;
  r.gpus = r.tp * r.pp * r.cp * r.dp;
  place_log_run(r, cluster);
  r.precision = log.float8 ? "fp8" : "bf16";
  r.attention = "flash";
  if (log.compiled) out.notes.push_back("torch.compile: its fused elementwise kernels are priced as the model's own");
  // tps is per GPU: a step moves global batch × sequence tokens over every GPU.
  r.measured_iteration_s = calibrate::torchtitan_step_seconds(log, &out.steps_used);
  if (const auto peak = calibrate::torchtitan_peak_reserved_gib(log); peak && *peak > 0) {
    r.published_memory_bytes = *peak * 1073741824.0;
    r.published_memory_kind = PrintedMemory::reserved;
  }
  return out;
}

}  // namespace parasim::sim
