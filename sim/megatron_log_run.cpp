#include "sim/megatron_log_run.hpp"

#include <charconv>
#include <utility>
#include <fmt/format.h>

#include "core/error.hpp"
#include "workload/model.hpp"
#include "workload/plan.hpp"

namespace parasim::sim {
namespace {

constexpr double kMaxCount = 1 << 20;  // parallel sizes and batches: far past any cluster parasim builds

/// Checked reads of the argument dump, each error at the argument's own line.
class Arguments {
 public:
  explicit Arguments(const calibrate::MegatronLog& log) : log_(log) {}

  std::optional<std::string> text(const std::string& name) const { return log_.argument(name); }

  std::optional<int> integer(const std::string& name, double min, double max) const {
    const auto v = text(name);
    if (!v) return std::nullopt;
    long long n = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || end != v->data() + v->size()) fail(name, fmt::format("'{}' is not an integer", *v));
    if (static_cast<double>(n) < min || static_cast<double>(n) > max) {
      fail(name, fmt::format("{} is out of range: must be between {} and {}", n, min, max));
    }
    return static_cast<int>(n);
  }
  int required(const std::string& name, double min, double max) const {
    const auto v = integer(name, min, max);
    if (!v) throw InputError({log_.file.string(), 1, 1}, name, "the argument dump does not give it");
    return *v;
  }
  std::optional<double> number(const std::string& name) const {
    const auto v = text(name);
    if (!v) return std::nullopt;
    double x = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), x);
    if (ec != std::errc() || end != v->data() + v->size()) fail(name, fmt::format("'{}' is not a number", *v));
    return x;
  }
  bool flag(const std::string& name) const { return text(name) == "True"; }
  /// A list of recompute modules as Python prints it ("['mla_up_proj', 'mlp']"); nullopt for None.
  std::optional<std::vector<std::string>> modules(const std::string& name) const {
    const auto v = text(name);
    if (!v) return std::nullopt;
    if (v->size() < 2 || v->front() != '[' || v->back() != ']') fail(name, fmt::format("'{}' is not a list of modules", *v));
    std::vector<std::string> out;
    std::string word;
    for (char c : v->substr(1, v->size() - 2)) {
      if (c == ',') {
        out.push_back(std::exchange(word, {}));
      } else if (c != '\'' && c != '"' && c != ' ') {
        word += c;
      }
    }
    if (!word.empty()) out.push_back(word);
    for (const auto& m : out) {
      if (!workload::recompute_module_from_name(m)) fail(name, fmt::format("'{}' is not a module parasim prices", m));
    }
    return out;
  }

  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    const auto it = log_.arguments.find(name);
    throw InputError({log_.file.string(), it == log_.arguments.end() ? 1 : it->second.line, 1}, name, what);
  }

 private:
  const calibrate::MegatronLog& log_;
};

void read_model(const Arguments& a, int tp, LogRun& out) {
  auto& r = out.run;
  r.layers = a.required("num_layers", 1, workload::kMaxLayers);
  r.hidden = a.required("hidden_size", 1, workload::kMaxWidth);
  r.heads = a.required("num_attention_heads", 1, workload::kMaxHeads);
  r.seq_len = a.required("seq_length", 1, workload::kMaxTokens);
  r.ffn_hidden = a.integer("ffn_hidden_size", 1, workload::kMaxWidth);
  r.head_dim = a.integer("kv_channels", 1, workload::kMaxHeadDim);
  if (a.flag("group_query_attention")) r.kv_heads = a.integer("num_query_groups", 1, workload::kMaxHeads);
  const int divisible = a.integer("make_vocab_size_divisible_by", 1, workload::kMaxVocab).value_or(128);
  if (auto padded = a.integer("padded_vocab_size", 1, workload::kMaxVocab)) {
    r.vocab = padded;
  } else if (auto vocab = a.integer("vocab_size", 1, workload::kMaxVocab)) {
    r.vocab = workload::padded_vocab(*vocab, divisible, tp);
  } else if (a.text("tokenizer_type") == "GPT2BPETokenizer") {
    r.vocab = workload::padded_vocab(50257, divisible, tp);
  }
  r.dropout = std::max(a.number("attention_dropout").value_or(0.1), a.number("hidden_dropout").value_or(0.1));
  const bool swiglu = a.flag("swiglu"), rmsnorm = a.text("normalization") == "RMSNorm";
  const int experts = a.integer("num_experts", 1, 1 << 16).value_or(0);
  r.arch = experts > 0 ? "moe" : swiglu && rmsnorm ? "llama" : "gpt";
  if (experts > 0) {
    r.experts = experts;
    r.top_k = a.integer("moe_router_topk", 1, experts);
    r.expert_ffn_hidden = a.integer("moe_ffn_hidden_size", 1, workload::kMaxWidth);
    if (auto shared = a.integer("moe_shared_expert_intermediate_size", 1, workload::kMaxWidth); shared && r.expert_ffn_hidden) {
      r.shared_experts = *shared / *r.expert_ffn_hidden;
    }
  }
  if (a.flag("multi_latent_attention")) {
    MlaShape m;
    m.q_lora_rank = a.integer("q_lora_rank", 1, workload::kMaxWidth);
    m.kv_lora_rank = a.integer("kv_lora_rank", 1, workload::kMaxWidth).value_or(512);
    m.qk_nope_head_dim = a.integer("qk_head_dim", 1, workload::kMaxHeadDim).value_or(128);
    m.qk_rope_head_dim = a.integer("qk_pos_emb_head_dim", 1, workload::kMaxHeadDim).value_or(64);
    m.v_head_dim = a.integer("v_head_dim", 1, workload::kMaxHeadDim).value_or(128);
    r.mla = m;
  }
  // The row form's architectures, where the log's differs in what the row cannot say.
  const std::string positions = a.text("position_embedding_type").value_or("learned_absolute");
  const bool llama_like = r.arch != "gpt";
  if (llama_like != (positions == "rope")) out.notes.push_back(fmt::format("position_embedding_type {}: the {} form's positions are priced", positions, r.arch));
  if (llama_like != !a.flag("add_bias_linear")) out.notes.push_back(fmt::format("add_bias_linear {}: the {} form's biases are priced", a.flag("add_bias_linear") ? "True" : "False", r.arch));
  if (!llama_like && (swiglu || rmsnorm)) out.notes.push_back("swiglu / RMSNorm without the other: priced as the gpt form (GELU, LayerNorm)");
}

void read_plan(const Arguments& a, int world, LogRun& out) {
  auto& r = out.run;
  r.tp = a.integer("tensor_model_parallel_size", 1, kMaxCount).value_or(1);
  r.pp = a.integer("pipeline_model_parallel_size", 1, kMaxCount).value_or(1);
  r.cp = a.integer("context_parallel_size", 1, kMaxCount).value_or(1);
  r.ep = a.integer("expert_model_parallel_size", 1, kMaxCount).value_or(1);
  const long long model_parallel = static_cast<long long>(r.tp) * r.pp * r.cp;
  if (world % model_parallel != 0) {
    a.fail("world_size", fmt::format("{} GPUs are not a multiple of tp {} x pp {} x cp {}", world, r.tp, r.pp, r.cp));
  }
  r.dp = a.integer("data_parallel_size", 1, kMaxCount).value_or(static_cast<int>(world / model_parallel));
  r.sp = a.flag("sequence_parallel");
  if (auto vpp = a.integer("virtual_pipeline_model_parallel_size", 1, kMaxCount)) r.vpp = vpp;
  r.micro_batch = a.required("micro_batch_size", 1, kMaxCount);
  r.global_batch = a.required("global_batch_size", 1, 1LL << 31);
  r.zero = a.flag("use_megatron_fsdp") ? 3 : a.flag("use_distributed_optimizer") ? 1 : 0;
  r.recompute = a.text("recompute_granularity").value_or("none");
  if (r.recompute != "none" && r.recompute != "full" && r.recompute != "selective") {
    a.fail("recompute_granularity", fmt::format("'{}' is none of full, selective", *r.recompute));
  }
  if (r.recompute == "selective") r.recompute_modules = a.modules("recompute_modules");
  r.overlap_grad_reduce = a.flag("overlap_grad_reduce");
  r.overlap_param_gather = a.flag("overlap_param_gather");
  r.overlap_tp_comm = a.flag("tp_comm_overlap");
}

}  // namespace

LogRun megatron_log_run(const calibrate::MegatronLog& log, const LogCluster& cluster) {
  const Arguments a(log);
  LogRun out = log_run_named(log.file, "Megatron-LM");
  auto& r = out.run;
  const int world = a.required("world_size", 1, 1 << 20);
  read_plan(a, world, out);
  read_model(a, r.tp, out);
  r.gpus = world;
  place_log_run(r, cluster);
  if (a.text("fp8")) {
    r.precision = "fp8";
  } else if (a.flag("bf16")) {
    r.precision = "bf16";
  } else if (a.flag("fp16")) {
    r.precision = "fp16";
  } else {
    a.fail("bf16", "neither bf16, fp16 nor fp8: fp32 training is not something parasim prices");
  }
  if (log.torch_optimizer) r.optimizer_kernel = workload::OptimizerKernel::foreach;
  const bool flash = a.text("transformer_impl") == "transformer_engine" || a.flag("use_flash_attn");
  r.attention = flash ? "flash" : "eager";
  r.measured_iteration_s = calibrate::steady_step_seconds(log, &out.steps_used);
  if (auto peak = calibrate::peak_allocated_mib(log)) {
    r.published_memory_bytes = *peak * 1048576.0;
    r.published_memory_kind = PrintedMemory::allocated;
  }
  return out;
}

}  // namespace parasim::sim
