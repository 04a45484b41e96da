#include "sim/nemo_log_run.hpp"

#include <charconv>
#include <cmath>
#include <fmt/format.h>

#include "calibrate/steady_steps.hpp"
#include "core/error.hpp"
#include "workload/model.hpp"
#include "workload/plan.hpp"

namespace parasim::sim {
namespace {

constexpr double kMaxCount = 1 << 20;  // parallel sizes and node counts: far past any cluster parasim builds

/// Checked reads of the experiment configuration, each error at the value's own line.
class Config {
 public:
  explicit Config(const calibrate::NemoLog& log) : log_(log) {}

  std::optional<std::string> text(const std::string& path) const { return log_.value(path); }

  std::optional<double> number(const std::string& path) const {
    const auto v = text(path);
    if (!v) return std::nullopt;
    double x = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
    if (ec != std::errc() || end != v->data() + v->size() || !std::isfinite(x)) fail(path, fmt::format("'{}' is not a number", *v));
    return x;
  }
  std::optional<int> integer(const std::string& path, double min, double max) const {
    const auto x = number(path);
    if (!x) return std::nullopt;
    if (*x < min || *x > max || std::floor(*x) != *x) fail(path, fmt::format("{} is not a whole number between {} and {}", *x, min, max));
    return static_cast<int>(*x);
  }
  int required(const std::string& path, double min, double max) const {
    const auto v = integer(path, min, max);
    if (!v) throw InputError({log_.file.string(), log_.config_line, 1}, path, "the experiment configuration does not give it");
    return *v;
  }
  bool flag(const std::string& path) const {
    const auto v = text(path);
    if (!v) return false;
    if (*v == "true" || *v == "True") return true;
    if (*v == "false" || *v == "False") return false;
    fail(path, fmt::format("'{}' is not true or false", *v));
  }
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    const auto it = log_.config.find(path);
    throw InputError({log_.file.string(), it == log_.config.end() ? log_.config_line : it->second.line, 1}, path, what);
  }

 private:
  const calibrate::NemoLog& log_;
};

void read_vocab(const calibrate::NemoLog& log, const Config& c, int tp, MeasuredRun& r) {
  if (log.padded_vocab) {
    const auto& v = *log.padded_vocab;
    int n = 0;
    const auto [end, ec] = std::from_chars(v.value.data(), v.value.data() + v.value.size(), n);
    if (ec != std::errc() || end != v.value.data() + v.value.size() || n < 1 || n > workload::kMaxVocab) {
      throw InputError({log.file.string(), v.line, 1}, "Padded vocab_size", fmt::format("'{}' is not a vocabulary size", v.value));
    }
    r.vocab = n;
    return;
  }
  // Without the padding line: the GPT-2 tokenizer's size, padded; other tokenizers' sizes are in files.
  const auto type = c.text("model.tokenizer.type").value_or("");
  if (type == "GPT2BPETokenizer" || type == "gpt2") {
    r.vocab = workload::padded_vocab(50257, c.integer("model.make_vocab_size_divisible_by", 1, workload::kMaxVocab).value_or(128), tp);
  }
}

void read_model(const Config& c, LogRun& out) {
  auto& r = out.run;
  r.layers = c.required("model.num_layers", 1, workload::kMaxLayers);
  r.hidden = c.required("model.hidden_size", 1, workload::kMaxWidth);
  r.heads = c.required("model.num_attention_heads", 1, workload::kMaxHeads);
  r.ffn_hidden = c.integer("model.ffn_hidden_size", 1, workload::kMaxWidth);
  r.head_dim = c.integer("model.kv_channels", 1, workload::kMaxHeadDim);
  if (const auto groups = c.integer("model.num_query_groups", 1, workload::kMaxHeads); groups && *groups != r.heads) r.kv_heads = groups;
  r.dropout = std::max(c.number("model.hidden_dropout").value_or(0.1), c.number("model.attention_dropout").value_or(0.1));
  const std::string activation = c.text("model.activation").value_or("gelu");
  const std::string norm = c.text("model.normalization").value_or("layernorm");
  const bool swiglu = activation.find("swiglu") != std::string::npos, rmsnorm = norm == "rmsnorm";
  const int experts = c.integer("model.num_moe_experts", 1, 1 << 16).value_or(1);
  r.arch = experts > 1 ? "moe" : swiglu && rmsnorm ? "llama" : "gpt";
  if (experts > 1) {
    r.experts = experts;
    r.top_k = c.integer("model.moe_router_topk", 1, experts).value_or(2);
  }
  // The row form's architectures, where the log's differs in what the row cannot say.
  if (r.arch == "gpt" && (swiglu || rmsnorm)) out.notes.push_back(fmt::format("activation {}, normalization {}: priced as the gpt form (GELU, LayerNorm)", activation, norm));
  if (r.arch == "gpt" && activation != "gelu" && !swiglu) out.notes.push_back(fmt::format("activation {}: priced as GELU", activation));
  const std::string positions = c.text("model.position_embedding_type").value_or("learned_absolute");
  if ((r.arch != "gpt") != (positions == "rope")) out.notes.push_back(fmt::format("position_embedding_type {}: the {} form's positions are priced", positions, r.arch));
}

void read_plan(const Config& c, LogRun& out) {
  auto& r = out.run;
  const int devices = c.required("trainer.devices", 1, kMaxCount);
  const int nodes = c.integer("trainer.num_nodes", 1, kMaxCount).value_or(1);
  if (static_cast<double>(devices) * nodes > kMaxCount) c.fail("trainer.num_nodes", fmt::format("{} nodes of {} GPUs is past {} GPUs", nodes, devices, kMaxCount));
  r.gpus = devices * nodes;
  r.tp = c.integer("model.tensor_model_parallel_size", 1, kMaxCount).value_or(1);
  r.pp = c.integer("model.pipeline_model_parallel_size", 1, kMaxCount).value_or(1);
  r.cp = c.integer("model.context_parallel_size", 1, kMaxCount).value_or(1);
  r.ep = c.integer("model.expert_model_parallel_size", 1, kMaxCount).value_or(1);
  const long long model_parallel = static_cast<long long>(r.tp) * r.pp * r.cp;
  if (r.gpus % model_parallel != 0) {
    c.fail("model.tensor_model_parallel_size", fmt::format("{} GPUs are not a multiple of tp {} x pp {} x cp {}", r.gpus, r.tp, r.pp, r.cp));
  }
  r.dp = static_cast<int>(r.gpus / model_parallel);
  r.sp = c.flag("model.sequence_parallel");
  if (auto vpp = c.integer("model.virtual_pipeline_model_parallel_size", 1, kMaxCount)) r.vpp = vpp;
  r.micro_batch = c.required("model.micro_batch_size", 1, kMaxCount);
  r.global_batch = c.required("model.global_batch_size", 1, 1LL << 31);
  // GPT models name it encoder_seq_length (NeMo's config files), others seq_length.
  const auto encoder = c.integer("model.encoder_seq_length", 1, workload::kMaxTokens);
  r.seq_len = encoder ? *encoder : c.required("model.seq_length", 1, workload::kMaxTokens);
  const std::string optimizer = c.text("model.optim.name").value_or("fused_adam");
  r.zero = optimizer.find("distributed") != std::string::npos ? 1 : 0;
  r.overlap_grad_reduce = c.flag("model.optim.overlap_grad_sync");
  r.overlap_param_gather = c.flag("model.optim.overlap_param_sync");
  r.overlap_tp_comm = c.flag("model.ub_tp_comm_overlap");
  r.recompute = c.text("model.activations_checkpoint_granularity").value_or("none");
  if (r.recompute != "none" && r.recompute != "full" && r.recompute != "selective") {
    c.fail("model.activations_checkpoint_granularity", fmt::format("'{}' is none of null, full, selective", *r.recompute));
  }
  if (r.recompute == "full" && c.integer("model.activations_checkpoint_num_layers", 0, workload::kMaxLayers).value_or(1) != 1) {
    out.notes.push_back("activations_checkpoint_num_layers: priced as every layer recomputed");
  }
}

void read_precision(const Config& c, MeasuredRun& r) {
  const std::string precision = c.text("trainer.precision").value_or("32");
  if (c.flag("model.fp8")) r.precision = "fp8";
  else if (precision.rfind("bf16", 0) == 0) r.precision = "bf16";
  else if (precision.rfind("16", 0) == 0 || precision.rfind("fp16", 0) == 0) r.precision = "fp16";
  else c.fail("trainer.precision", fmt::format("'{}': fp32 training is not something parasim prices", precision));
  // Megatron-Core's Transformer Engine layers run fused (flash) attention; NeMo's own layers do when asked.
  r.attention = c.flag("model.transformer_engine") || c.flag("model.use_flash_attention") || c.flag("model.mcore_gpt") ? "flash" : "eager";
}

}  // namespace

LogRun nemo_log_run(const calibrate::NemoLog& log, const LogCluster& cluster) {
  const Config c(log);
  LogRun out = log_run_named(log.file, "NeMo");
  auto& r = out.run;
  read_plan(c, out);
  read_model(c, out);
  read_vocab(log, c, r.tp, r);
  read_precision(c, r);
  place_log_run(r, cluster);
  std::vector<double> seconds;
  for (const auto& s : log.steps) seconds.push_back(s.seconds);
  r.measured_iteration_s = calibrate::steady_median(seconds, &out.steps_used);
  return out;
}

}  // namespace parasim::sim
