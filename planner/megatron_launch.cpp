#include "planner/megatron_launch.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/suggest.hpp"
#include "planner/megatron_flags.hpp"
#include "planner/megatron_rules.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Recompute;

namespace {

// Arguments of one group, each flag checked against the table so that the reader knows it too.
class Group {
 public:
  explicit Group(std::string name) : group_{std::move(name), {}} {}
  Group& add(std::string_view flag, std::string value = {}) {
    const auto known = megatron_flag(flag);
    if (!known || known->role == FlagRole::legacy || known->takes_value == value.empty()) {
      throw std::logic_error(fmt::format("launch writer: {} is not a current Megatron-LM flag of that kind in megatron_flags.cpp", flag));
    }
    group_.arguments.push_back({std::string(flag), std::move(value)});
    return *this;
  }
  Group& add(std::string_view flag, long long value) { return add(flag, std::to_string(value)); }
  MegatronArgumentGroup done() { return std::move(group_); }

 private:
  MegatronArgumentGroup group_;
};

std::string number(double x) { return fmt::format("{:g}", x); }

// Megatron-LM's --pipeline-model-parallel-layout: one '|'-separated entry per model chunk in
// pipeline order (chunk c on stage c % pp), E the embedding, t a transformer layer, L the loss;
// runs of equal middle chunks written "(t*8|)*14", which Megatron-LM unrolls.
std::string pipeline_layout(const std::vector<int>& chunk_layers, int mtp_layers) {
  std::vector<std::string> chunks;
  for (std::size_t c = 0; c < chunk_layers.size(); ++c) {
    const int n = chunk_layers[c];
    std::string s = c == 0 ? "E" : "";
    s += n == 0 ? "" : n == 1 ? "t" : fmt::format("t*{}", n);
    // Multi-token-prediction layers (m) go before the loss, on the last chunk, where parasim runs them.
    if (c + 1 == chunk_layers.size()) s += std::string(static_cast<std::size_t>(mtp_layers), 'm') + "L";
    chunks.push_back(std::move(s));
  }
  std::string out;
  for (std::size_t i = 0; i < chunks.size();) {
    std::size_t j = i + 1;
    while (j < chunks.size() && chunks[j] == chunks[i]) ++j;
    const std::size_t run = j - i;
    const bool last = j == chunks.size();
    if (run >= 2 && !last) {
      out += fmt::format("({}|)*{}", chunks[i], run);
    } else {
      for (std::size_t k = i; k < j; ++k) out += chunks[k] + (k + 1 == chunks.size() ? "" : "|");
    }
    i = j;
  }
  return out;
}

// Pipeline stages inner to the data-parallel ranks (tp-cp-pp-dp); Megatron-LM puts them outermost by default.
bool pipeline_inside_data(const Plan& p) {
  if (p.pp == 1 || p.dp == 1) return false;
  const auto order = workload::full_order(p.order);
  return std::find(order.begin(), order.end(), workload::ParallelDim::pp) < std::find(order.begin(), order.end(), workload::ParallelDim::dp);
}

bool even_split(const Plan& p, const workload::ModelSpec& m) {
  const auto sizes = workload::layers_per_chunk(p, m);
  return std::all_of(sizes.begin(), sizes.end(), [&](int n) { return n == sizes.front(); }) && m.layers % p.chunks() == 0;
}

// --moe-layer-freq: an integer N (every Nth layer) or the explicit 0/1 pattern.
std::string moe_layer_pattern(const workload::ModelSpec& m) {
  if (m.first_dense_layers == 0 && m.layers % m.moe_layer_frequency == 0) return std::to_string(m.moe_layer_frequency);
  std::string out = "[";
  for (int l = 0; l < m.layers; ++l) out += fmt::format("{}{}", l ? "," : "", m.moe_layer(l) ? 1 : 0);
  return out + "]";
}

MegatronArgumentGroup model_arguments(const workload::ModelSpec& m, const workload::TrainingSpec& tr) {
  Group g("MODEL_ARGS");
  g.add("--num-layers", m.layers).add("--hidden-size", m.hidden).add("--ffn-hidden-size", m.ffn_hidden).add("--num-attention-heads", m.heads);
  if (m.kv_heads != m.heads) g.add("--group-query-attention").add("--num-query-groups", m.kv_heads);
  if (m.is_mla()) {
    // Megatron-LM's --qk-head-dim is the part of a query/key head without RoPE.
    g.add("--multi-latent-attention");
    if (m.mla.q_lora_rank > 0) g.add("--q-lora-rank", m.mla.q_lora_rank);
    g.add("--kv-lora-rank", m.mla.kv_lora_rank).add("--qk-head-dim", m.mla.qk_nope_head_dim);
    g.add("--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim).add("--v-head-dim", m.mla.v_head_dim);
  } else if (m.head_dim * m.heads != m.hidden) {
    g.add("--kv-channels", m.head_dim);
  }
  if (m.qk_norm) g.add("--qk-layernorm");
  if (m.sliding_window > 0) {
    // (left, right) keys: a causal window looks back only; every n-th layer full (n-1 : 1).
    g.add("--window-size", fmt::format("{},0", m.sliding_window));
    if (m.global_every > 0) g.add("--window-attn-skip-freq", m.global_every);
  }
  if (m.mtp_layers > 0) g.add("--mtp-num-layers", m.mtp_layers);
  g.add("--seq-length", tr.seq_len);
  if (m.position == workload::PositionEmbedding::rope) {
    // RoPE has no table; Megatron-LM's own Llama and Mixtral scripts give the longest length trained.
    g.add("--position-embedding-type", "rope").add("--max-position-embeddings", std::max(tr.seq_len, m.max_position));
  } else {
    g.add("--position-embedding-type", "learned_absolute").add("--max-position-embeddings", std::max(tr.seq_len, m.max_position));
  }
  g.add("--normalization", m.norm == workload::Norm::rmsnorm ? "RMSNorm" : "LayerNorm");
  if (m.activation == workload::Activation::swiglu) g.add("--swiglu");
  if (!m.bias) {
    g.add("--disable-bias-linear");
    if (m.qkv_bias) g.add("--add-qkv-bias");
  }
  if (!m.tied_embeddings) g.add("--untie-embeddings-and-output-weights");
  g.add("--attention-dropout", number(m.dropout)).add("--hidden-dropout", number(m.dropout));
  if (m.is_moe()) {
    g.add("--num-experts", m.experts).add("--moe-router-topk", m.top_k).add("--moe-ffn-hidden-size", m.expert_ffn_hidden);
    if (m.shared_experts > 0) {
      g.add("--moe-shared-expert-intermediate-size", static_cast<long long>(m.shared_experts) * m.shared_expert_ffn_hidden);
      if (m.shared_expert_gate) g.add("--moe-shared-expert-gate");
    }
    if (m.first_dense_layers > 0 || m.moe_layer_frequency != 1) g.add("--moe-layer-freq", moe_layer_pattern(m));
    if (m.capacity_factor > 0) g.add("--moe-expert-capacity-factor", number(m.capacity_factor));
    if (m.routing_groups > 0) g.add("--moe-router-num-groups", m.routing_groups).add("--moe-router-group-topk", m.routing_groups_per_token);
    g.add("--moe-router-load-balancing-type", "aux_loss").add("--moe-aux-loss-coeff", "1e-2");
  }
  return g.done();
}

MegatronArgumentGroup parallel_arguments(const Plan& p, const workload::ModelSpec& m, const workload::TrainingSpec& tr) {
  Group g("PARALLEL_ARGS");
  g.add("--tensor-model-parallel-size", p.tp);
  if (p.sp && p.tp > 1) g.add("--sequence-parallel");
  g.add("--pipeline-model-parallel-size", p.pp);
  if (p.pp > 1 && !even_split(p, m)) {
    g.add("--pipeline-model-parallel-layout", pipeline_layout(workload::layers_per_chunk(p, m), m.mtp_layers));
  } else if (p.vpp > 1) {
    g.add("--num-virtual-stages-per-pipeline-rank", p.vpp);
  }
  if (p.microbatch_group > 0 && p.microbatch_group != p.pp) g.add("--microbatch-group-size-per-virtual-pipeline-stage", p.microbatch_group);
  if (p.cp > 1) g.add("--context-parallel-size", p.cp).add("--cp-comm-type", p.cp_kind == workload::CpKind::ring ? "p2p" : "a2a");
  if (m.is_moe()) {
    g.add("--expert-model-parallel-size", p.ep);
    if (p.etp > 0) g.add("--expert-tensor-parallel-size", p.etp);
    // What the simulator prices: tokens exchanged by all-to-all (or DeepEP's once per node), each
    // rank's experts in one grouped GEMM.
    if (tr.moe_dispatcher == workload::MoeDispatcher::deepep) {
      g.add("--moe-token-dispatcher-type", "flex").add("--moe-flex-dispatcher-backend", "deepep");
    } else {
      g.add("--moe-token-dispatcher-type", "alltoall");
    }
    g.add("--moe-grouped-gemm");
  }
  if (pipeline_inside_data(p)) g.add("--use-tp-pp-dp-mapping");
  if (p.zero >= 1) g.add("--use-distributed-optimizer");
  if (p.zero == 1 && p.zero_group > 0 && p.zero_group < p.data_ranks()) g.add("--num-distributed-optimizer-instances", p.data_ranks() / p.zero_group);
  if (uses_megatron_fsdp(p)) {
    g.add("--use-megatron-fsdp").add("--data-parallel-sharding-strategy", p.zero == 2 ? "optim_grads" : "optim_grads_params");
    g.add("--ckpt-format", "fsdp_dtensor");
  }
  if (p.overlap.grad_reduce) g.add("--overlap-grad-reduce");
  if (p.overlap.param_gather && p.overlap.grad_reduce && p.zero >= 1) g.add("--overlap-param-gather");
  if (p.overlap.tp_comm) g.add("--tp-comm-overlap");
  if (p.overlap.ep_comm) g.add("--overlap-moe-expert-parallel-comm");
  if (p.bucket_params > 0) g.add("--ddp-bucket-size", static_cast<long long>(p.bucket_params));
  return g.done();
}

MegatronArgumentGroup batch_arguments(const Plan& p, const workload::ModelSpec& m) {
  Group g("BATCH_ARGS");
  g.add("--micro-batch-size", p.micro_batch).add("--global-batch-size", p.global_batch);
  const auto r = megatron_recompute(p, m);
  if (r->granularity == Recompute::selective && !p.recompute_modules.empty()) {
    g.add("--recompute-granularity", "selective");
    // Megatron-Core's default is core_attn alone; an empty list recomputes nothing.
    if (!p.recompute_modules.is_default()) g.add("--recompute-modules", fmt::format("{}", fmt::join(p.recompute_modules.names(), " ")));
  }
  if (r->granularity == Recompute::full) {
    g.add("--recompute-granularity", "full");
    g.add("--recompute-method", r->method == workload::RecomputeMethod::block ? "block" : "uniform");
    g.add("--recompute-num-layers", r->layers);
  }
  return g.done();
}

bool needs_current_scaling(const Plan& p) {
  const auto& modules = p.recompute_modules;
  return p.recomputes_selectively() && (modules.has(workload::RecomputeModule::moe_act) || modules.has(workload::RecomputeModule::layernorm));
}

MegatronArgumentGroup precision_arguments(const Plan& p, const workload::TrainingSpec& tr, const topology::GpuSpec& gpu) {
  Group g("PRECISION_ARGS");
  const bool bf16 = tr.precision == Precision::bf16 || tr.precision == Precision::fp8;
  if (bf16) g.add("--bf16");
  if (tr.precision == Precision::fp16) g.add("--fp16");
  // Transformer Engine's default FP8 recipe: E4M3 forward, E5M2 gradients, delayed scaling; per-tensor
  // current scaling where the plan recomputes the experts' activation or the norms, which delayed
  // scaling cannot (TransformerConfig's checks). parasim prices both alike.
  if (tr.precision == Precision::fp8) g.add("--fp8-format", "hybrid").add("--fp8-recipe", needs_current_scaling(p) ? "tensorwise" : "delayed");
  if (bf16 && !tr.fp32_grad_accumulation) g.add("--grad-reduce-in-bf16");
  if (tr.precision == Precision::fp16 && tr.fp32_grad_accumulation) g.add("--accumulate-allreduce-grads-in-fp32");
  g.add("--attention-backend", megatron_attention_backend(tr, gpu));
  if (tr.cross_entropy == workload::CrossEntropy::fused) g.add("--cross-entropy-loss-fusion");
  if (!tr.gradient_accumulation_fusion) g.add("--no-gradient-accumulation-fusion");
  return g.done();
}

MegatronArgumentGroup data_arguments(const workload::ModelSpec& m) {
  Group g("DATA_ARGS");
  g.add("--mock-data").add("--tokenizer-type", "NullTokenizer").add("--vocab-size", m.vocab);
  return g.done();
}

MegatronArgumentGroup training_arguments(int train_iters) {
  Group g("TRAINING_ARGS");
  // The learning-rate schedule needs its warm-up shorter than its decay (train_iters long).
  g.add("--train-iters", train_iters).add("--lr", "3e-4").add("--min-lr", "3e-5").add("--lr-decay-style", "cosine");
  g.add("--lr-warmup-iters", std::min(10, train_iters / 2));
  g.add("--weight-decay", "0.1").add("--adam-beta1", "0.9").add("--adam-beta2", "0.95").add("--clip-grad", "1.0").add("--init-method-std", "0.02");
  // No evaluation; Megatron-LM divides by --eval-interval when it sizes the datasets, so it is set too.
  g.add("--log-interval", 1).add("--log-throughput").add("--eval-iters", 0).add("--eval-interval", train_iters);
  return g.done();
}

// What the plan was priced with that these arguments cannot say.
std::vector<std::string> notes(const workload::TrainingSpec& tr) {
  std::vector<std::string> out;
  if (!tr.async_tp_allreduce) out.push_back("priced with a synchronous TP all-reduce (2021 stacks); Megatron-LM overlaps it, a little faster");
  if (tr.flash_kernel == workload::FlashKernel::flash1) out.push_back("priced with FlashAttention-1; Megatron-LM runs the backend named below");
  if (tr.flash_kernel == workload::FlashKernel::flash2) out.push_back("priced with FlashAttention-2; Megatron-LM runs the backend named below");
  if (tr.zero1_engine == workload::Zero1Engine::deepspeed) out.push_back("priced with DeepSpeed's ZeRO-1 engine; Megatron-LM's distributed optimizer reduce-scatters instead");
  if (tr.recompute_early_stop) out.push_back("priced with recompute that stops early (non-reentrant); Megatron-LM reruns the whole layer");
  if (tr.gradient_accumulation_copy) out.push_back("priced with DeepSpeed's fp32 gradient-accumulation copy; Megatron-LM has none");
  if (tr.attention == workload::AttentionKernel::eager && tr.eager_softmax != workload::EagerSoftmax::fused) {
    out.push_back("priced with an unfused softmax for some or all shapes; Megatron-LM's fused kernel runs for every shape it launches");
  }
  if (tr.optimizer_kernel == workload::OptimizerKernel::foreach) {
    out.push_back("priced with torch.optim's foreach Adam (sqrt(v) out of place); with Transformer Engine or apex, Adam is fused");
  }
  if (tr.optimizer_bytes_per_param != 12) out.push_back(fmt::format("priced with {} optimizer bytes per parameter; Megatron-LM's Adam keeps 12", tr.optimizer_bytes_per_param));
  return out;
}

std::string shell_word(const std::string& s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._/:=,+-@%").find(c) != std::string_view::npos; });
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string argument_text(const MegatronArgument& a) {
  if (a.value.empty()) return a.flag;
  // A list-valued flag's value holds its words, each an argument of its own.
  const auto flag = megatron_flag(a.flag);
  if (!flag || !flag->many) return a.flag + " " + shell_word(a.value);
  std::string out = a.flag;
  for (std::size_t at = 0; at < a.value.size();) {
    const auto end = std::min(a.value.find(' ', at), a.value.size());
    if (end > at) out += fmt::format(" {}", shell_word(a.value.substr(at, end - at)));
    at = end + 1;
  }
  return out;
}

MegatronLaunch megatron_launch(const Plan& p, const workload::ModelSpec& m, const workload::TrainingSpec& tr, const topology::GpuSpec& gpu,
                               int train_iters) {
  if (train_iters < 2) throw std::invalid_argument("a launch needs at least 2 training iterations");
  if (const auto problem = megatron_plan_problem(p, m)) throw std::invalid_argument("Megatron-LM cannot run this plan: " + *problem);
  MegatronLaunch out;
  out.groups = {model_arguments(m, tr), parallel_arguments(p, m, tr), batch_arguments(p, m), precision_arguments(p, tr, gpu), data_arguments(m),
                training_arguments(train_iters)};
  out.environment.emplace_back("CUDA_DEVICE_MAX_CONNECTIONS", cuda_device_max_connections(p, gpu));
  out.notes = notes(tr);
  return out;
}

MegatronArgumentGroup site_arguments(const std::string& words) {
  std::vector<std::string> split;
  for (std::size_t at = 0; at < words.size();) {
    const auto start = words.find_first_not_of(" \t\n", at);
    if (start == std::string::npos) break;
    const auto end = std::min(words.find_first_of(" \t\n", start), words.size());
    split.push_back(words.substr(start, end - start));
    at = end;
  }
  MegatronArgumentGroup g{"SITE_ARGS", {}};
  for (std::size_t i = 0; i < split.size(); ++i) {
    const auto flag = megatron_flag(split[i]);
    if (!split[i].starts_with("--")) throw std::invalid_argument(fmt::format("'{}' is a value without a flag before it", split[i]));
    if (!flag || flag->role == FlagRole::legacy) {
      std::vector<std::string> known;
      for (const auto& f : megatron_flags()) {
        if (f.role != FlagRole::legacy) known.emplace_back(f.name);
      }
      throw std::invalid_argument(fmt::format("{} is not a current Megatron-LM flag parasim knows{}", split[i], did_you_mean(split[i], known)));
    }
    if (flag->role == FlagRole::plan || flag->role == FlagRole::model) {
      throw std::invalid_argument(fmt::format("{} is the {}'s: parasim writes it for each plan (change the scenario instead)", split[i],
                                              flag->role == FlagRole::plan ? "plan" : "model"));
    }
    const bool has_value = i + 1 < split.size() && !split[i + 1].starts_with("--");
    if (flag->takes_value != has_value) {
      throw std::invalid_argument(fmt::format("{} {}", split[i], flag->takes_value ? "needs a value" : "takes no value"));
    }
    if (has_value && !flag->many && i + 2 < split.size() && !split[i + 2].starts_with("--")) {
      throw std::invalid_argument(fmt::format("{} takes one value here (for several data paths use --data-args-path FILE)", split[i]));
    }
    const std::string name = split[i];
    std::string value = has_value ? split[++i] : "";
    while (flag->many && i + 1 < split.size() && !split[i + 1].starts_with("--")) value += " " + split[++i];
    g.arguments.push_back({name, value});
  }
  return g;
}

namespace {

bool is_data_source(const std::string& flag) {
  for (const char* f : {"--data-path", "--data-args-path", "--per-split-data-args-path", "--train-data-path", "--valid-data-path", "--test-data-path"}) {
    if (flag == f) return true;
  }
  return false;
}

MegatronArgument* find_argument(MegatronLaunch& launch, const std::string& flag) {
  for (auto& g : launch.groups) {
    for (auto& a : g.arguments) {
      if (a.flag == flag) return &a;
    }
  }
  return nullptr;
}

}  // namespace

MegatronLaunch with_site_arguments(MegatronLaunch launch, const MegatronArgumentGroup& site) {
  MegatronArgumentGroup rest{site.name, {}};
  bool data_source = false;
  for (const auto& a : site.arguments) {
    data_source = data_source || is_data_source(a.flag);
    if (auto* written = find_argument(launch, a.flag)) {
      written->value = a.value;
    } else {
      rest.arguments.push_back(a);
    }
  }
  if (data_source) {
    for (auto& g : launch.groups) std::erase_if(g.arguments, [](const MegatronArgument& a) { return a.flag == "--mock-data"; });
  }
  if (!rest.arguments.empty()) launch.groups.push_back(std::move(rest));
  return launch;
}

std::string megatron_argument_line(const MegatronLaunch& launch) {
  std::string out;
  for (const auto& g : launch.groups) {
    for (const auto& a : g.arguments) {
      if (!out.empty()) out += ' ';
      out += argument_text(a);
    }
  }
  return out;
}

namespace {

std::string comment_block(const LaunchHeader& h, const MegatronLaunch& launch) {
  std::string out;
  for (const auto& line : h.lines) out += "# " + line + "\n";
  out += fmt::format("# Targets Megatron-LM {} ({}): its pretrain_gpt.py, argument checks and environment rules.\n", kMegatronCommit.substr(0, 7),
                     kMegatronCommitDate);
  for (const auto& n : launch.notes) out += "# Note: " + n + "\n";
  return out;
}

std::string environment_text(const MegatronLaunch& launch) {
  std::string out;
  for (const auto& [name, value] : launch.environment) {
    if (name == "CUDA_DEVICE_MAX_CONNECTIONS") {
      out += value ? "# Tensor/context parallelism before Blackwell: one device queue keeps each collective ahead of the GEMM that waits for it\n"
                   : "# Megatron-FSDP (and a plan without TP/CP) must not run with one device queue: clear what a container may set\n";
    }
    out += value ? fmt::format("export {}={}\n", name, shell_word(*value)) : fmt::format("unset {}\n", name);
  }
  return out;
}

}  // namespace

std::string script_argument_text(const MegatronArgument& a) {
  return !a.value.empty() && a.value[0] == '$' ? a.flag + " \"" + a.value + "\"" : argument_text(a);
}

std::string torchrun_node_variables(const LaunchHeader& h) {
  std::string out = fmt::format("NNODES={}\nGPUS_PER_NODE={}\n", h.nodes, h.gpus_per_node);
  if (h.nodes > 1) {
    out += "MASTER_ADDR=${MASTER_ADDR:?set MASTER_ADDR to the address of node 0}\n";
    out += fmt::format("NODE_RANK=${{NODE_RANK:?set NODE_RANK to the index of this node, 0 to {}}}\n", h.nodes - 1);
  } else {
    out += "MASTER_ADDR=${MASTER_ADDR:-localhost}\nNODE_RANK=${NODE_RANK:-0}\n";
  }
  return out + "MASTER_PORT=${MASTER_PORT:-6000}\n";
}

std::string torchrun_arrays_and_command(const MegatronLaunch& launch, const std::string& program) {
  std::string out, arrays;
  for (const auto& g : launch.groups) {
    out += g.name + "=(\n";
    for (const auto& a : g.arguments) out += "  " + script_argument_text(a) + "\n";
    out += ")\n";
    arrays += fmt::format(" \\\n  \"${{{}[@]}}\"", g.name);
  }
  // exec: a runner's timeout (parasim confirm) then signals torchrun itself, which stops its workers,
  // instead of the shell, whose death would leave them holding the GPUs.
  return out + "\nexec torchrun --nnodes \"$NNODES\" --nproc-per-node \"$GPUS_PER_NODE\" --node-rank \"$NODE_RANK\" \\\n"
               "  --master-addr \"$MASTER_ADDR\" --master-port \"$MASTER_PORT\" \\\n  " +
         program + arrays + "\n";
}

std::string megatron_launch_script(const MegatronLaunch& launch, const LaunchHeader& h) {
  std::string out = "#!/bin/bash\n" + comment_block(h, launch);
  out += "#\n# Run on every node, in a container with Megatron-LM and Transformer Engine (an NGC PyTorch image):\n";
  out += h.nodes > 1 ? "#   MEGATRON_LM=/path/to/Megatron-LM MASTER_ADDR=<node 0> NODE_RANK=<0.." + std::to_string(h.nodes - 1) + "> bash launch_megatron.sh\n"
                     : "#   MEGATRON_LM=/path/to/Megatron-LM bash launch_megatron.sh\n";
  out += "# As printed it trains on mock data with a null tokenizer: a benchmark of the plan. For real data, replace\n"
         "# DATA_ARGS by --data-path PREFIX --tokenizer-type HuggingFaceTokenizer --tokenizer-model NAME (same vocabulary).\n";
  out += "set -euo pipefail\n\n" + torchrun_node_variables(h);
  out += "MEGATRON_LM=${MEGATRON_LM:-/workspace/megatron-lm}\n\n";
  out += environment_text(launch) + "\n";
  out += torchrun_arrays_and_command(launch, "\"$MEGATRON_LM/pretrain_gpt.py\"");
  return out;
}

std::string megatron_argument_file(const MegatronLaunch& launch, const LaunchHeader& h) {
  std::string out = comment_block(h, launch);
  for (const auto& [name, value] : launch.environment) {
    out += value ? fmt::format("# Environment: {}={}\n", name, *value) : fmt::format("# Environment: {} unset (or above 1)\n", name);
  }
  for (const auto& g : launch.groups) {
    for (const auto& a : g.arguments) out += argument_text(a) + "\n";
  }
  return out;
}

}  // namespace parasim::planner
