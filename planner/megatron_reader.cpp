#include "planner/megatron_reader.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <map>
#include <regex>

#include "core/error.hpp"
#include "planner/megatron_flags.hpp"
#include "planner/megatron_rules.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Recompute;

namespace {

// Shell words of a text: quotes, backslash-newline continuations and '#' comments as bash reads
// them. Expansions ("$X", "${A[@]}") stay as words of their own.
std::vector<std::string> shell_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] != '\n') {
        word += text[i + 1];
        in_word = true;
      }
      ++i;
    } else if (c == '\'') {
      const auto end = text.find('\'', i + 1);
      word += text.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
      in_word = true;
      i = end == std::string::npos ? text.size() : end;
    } else if (c == '"') {
      const auto end = text.find('"', i + 1);
      word += text.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
      in_word = true;
      i = end == std::string::npos ? text.size() : end;
    } else if (c == '#' && !in_word) {
      i = std::min(text.size(), text.find('\n', i)) - 1;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      if (c == '\n') words.push_back("\n");
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

// The Megatron-LM arguments in a text: the bash arrays of a launch script (NAME=( ... )), or what
// follows pretrain_gpt.py on its command line, or the whole text when it names no script.
std::vector<std::string> argument_words(const std::string& text) {
  const auto words = shell_words(text);
  std::vector<std::string> out;
  const bool script = std::any_of(words.begin(), words.end(), [](const std::string& w) { return w.ends_with("pretrain_gpt.py"); });
  if (!script) {
    std::copy_if(words.begin(), words.end(), std::back_inserter(out), [](const std::string& w) { return w != "\n"; });
    return out;
  }
  bool in_array = false, after_script = false;
  for (const auto& w : words) {
    if (in_array) {
      if (w == ")") in_array = false;
      else if (w != "\n") out.push_back(w);
    } else if (w.ends_with("=(")) {
      in_array = true;
    } else if (w.ends_with("pretrain_gpt.py")) {
      after_script = true;
    } else if (after_script) {
      if (w == "\n") after_script = false;
      else if (!w.starts_with("$")) out.push_back(w);
    }
  }
  return out;
}

// Megatron-LM's layout string unrolled as it unrolls it: "(x|y)*n" then "c*n".
std::vector<int> layout_chunks(const std::string& layout, int layers, int mtp_layers, const std::function<void(const std::string&)>& fail) {
  std::string s = layout;
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  for (const char* pattern : {R"(\(([^)]+)\)\*(\d+))", R"((.)\*(\d+))"}) {
    const std::regex re(pattern);
    std::string out;
    auto begin = std::sregex_iterator(s.begin(), s.end(), re);
    std::size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += s.substr(last, static_cast<std::size_t>(it->position()) - last);
      const int n = std::stoi((*it)[2]);
      if (n > 100000) fail(fmt::format("a repeat of {} is more than any model has", n));
      for (int k = 0; k < n; ++k) out += (*it)[1];
      last = static_cast<std::size_t>(it->position() + it->length());
    }
    s = out + s.substr(last);
  }
  std::vector<int> chunks{0};
  int embeddings = 0, losses = 0, mtp = 0;
  for (char c : s) {
    if (c == '|') chunks.push_back(0);
    else if (c == 't') ++chunks.back();
    else if (c == 'E') ++embeddings;
    else if (c == 'L') ++losses;
    else if (c == 'm') ++mtp;
    else fail(fmt::format("'{}' is not a layer parasim reads (E, t, m, L)", c));
  }
  if (embeddings != 1 || !s.starts_with("E") || losses != 1 || !s.ends_with("L")) fail("must start with the embedding E and end with the loss L");
  if (mtp != mtp_layers) fail(fmt::format("places {} multi-token-prediction layers (m), the model has {}", mtp, mtp_layers));
  if (mtp > 0 && s.find('m') < s.rfind('|') + 1) fail("parasim runs the multi-token-prediction layers (m) in the last chunk, before the loss");
  int total = 0;
  for (int n : chunks) total += n;
  if (total != layers) fail(fmt::format("places {} transformer layers, the model has {}", total, layers));
  return chunks;
}

struct Reader {
  Reader(const workload::ModelSpec& m, std::string w) : model(m), where(std::move(w)) {}
  const workload::ModelSpec& model;
  std::string where;
  Plan plan;
  int layers_per_virtual = 0, first_stage = 0, last_stage = 0, instances = 1, seq_len = 0;
  std::string layout, granularity, method, sharding;
  std::optional<workload::RecomputeModules> modules;
  bool fsdp = false, dp_given = false;

  [[noreturn]] void fail(const std::string& flag, const std::string& message) const {
    throw InputError({"", 0, 0}, where + ": " + flag, message);
  }
  int integer(const std::string& flag, const std::string& v) const {
    try {
      std::size_t used = 0;
      const long long x = std::stoll(v, &used);
      if (used == v.size() && x >= 0 && x <= 1'000'000'000) return static_cast<int>(x);
    } catch (const std::exception&) {
    }
    fail(flag, fmt::format("'{}' is not a whole number from 0 to 1e9", v));
  }
  void agree(const std::string& flag, const std::string& v, long long want) const {
    if (integer(flag, v) != want) fail(flag, fmt::format("{}, but {} has {}", v, model.name, want));
  }

  void plan_flag(const std::string& f, const std::string& v);
  bool integer_flag(const std::string& f, const std::string& v);
  bool recompute_flag(const std::string& f, const std::string& v);
  void model_flag(const std::string& f, const std::string& v);
  void finish(int gpus);
  void finish_split();
  void finish_recompute();
};

// The plan's whole-number flags; false when `f` is none of them.
bool Reader::integer_flag(const std::string& f, const std::string& v) {
  const std::map<std::string, int*> integers{{"--tensor-model-parallel-size", &plan.tp},
                                             {"--pipeline-model-parallel-size", &plan.pp},
                                             {"--num-virtual-stages-per-pipeline-rank", &plan.vpp},
                                             {"--context-parallel-size", &plan.cp},
                                             {"--expert-model-parallel-size", &plan.ep},
                                             {"--expert-tensor-parallel-size", &plan.etp},
                                             {"--micro-batch-size", &plan.micro_batch},
                                             {"--global-batch-size", &plan.global_batch},
                                             {"--num-layers-per-virtual-pipeline-stage", &layers_per_virtual},
                                             {"--decoder-first-pipeline-num-layers", &first_stage},
                                             {"--decoder-last-pipeline-num-layers", &last_stage},
                                             {"--recompute-num-layers", &plan.recompute_layers},
                                             {"--num-distributed-optimizer-instances", &instances},
                                             {"--data-parallel-size", &plan.dp}};
  const auto it = integers.find(f);
  if (it == integers.end()) return false;
  *it->second = integer(f, v);
  dp_given |= f == "--data-parallel-size";
  return true;
}

// The recompute flags (granularity, method, modules); false when `f` is none of them.
bool Reader::recompute_flag(const std::string& f, const std::string& v) {
  if (f == "--recompute-granularity") {
    if (v != "full" && v != "selective") fail(f, fmt::format("'{}' is not full or selective", v));
    granularity = v;
  } else if (f == "--recompute-activations") {
    granularity = "selective";
  } else if (f == "--recompute-modules") {
    modules = workload::RecomputeModules::of({});
    for (std::size_t at = 0; at <= v.size();) {
      const auto end = std::min(v.find(' ', at), v.size());
      const auto name = v.substr(at, end - at);
      at = end + 1;
      if (name.empty()) continue;
      const auto m = workload::recompute_module_from_name(name);
      if (!m) fail(f, fmt::format("'{}' is not a module parasim prices (core_attn, mlp, moe, moe_act, shared_experts, layernorm, mla_up_proj)", name));
      modules = modules->with(*m);
    }
  } else if (f == "--recompute-method") {
    if (v != "uniform" && v != "block") fail(f, fmt::format("'{}' is not uniform or block", v));
    method = v;
  } else {
    return false;
  }
  return true;
}

void Reader::plan_flag(const std::string& f, const std::string& v) {
  if (integer_flag(f, v) || recompute_flag(f, v)) return;
  if (f == "--microbatch-group-size-per-virtual-pipeline-stage") {
    plan.microbatch_group = integer(f, v);
    if (plan.microbatch_group < 1) fail(f, "must be at least 1");
  } else if (f == "--sequence-parallel") {
    plan.sp = true;
  } else if (f == "--use-distributed-optimizer") {
    plan.zero = std::max(plan.zero, 1);
  } else if (f == "--use-megatron-fsdp" || f == "--use-custom-fsdp") {
    fsdp = true;
  } else if (f == "--data-parallel-sharding-strategy") {
    if (v != "no_shard" && v != "optim" && v != "optim_grads" && v != "optim_grads_params") fail(f, fmt::format("'{}' is not no_shard, optim, optim_grads or optim_grads_params", v));
    sharding = v;
  } else if (f == "--overlap-grad-reduce") {
    plan.overlap.grad_reduce = true;
  } else if (f == "--overlap-param-gather") {
    plan.overlap.param_gather = true;
  } else if (f == "--tp-comm-overlap") {
    plan.overlap.tp_comm = true;
  } else if (f == "--overlap-moe-expert-parallel-comm") {
    plan.overlap.ep_comm = true;
  } else if (f == "--use-tp-pp-dp-mapping") {
    plan.order = {workload::ParallelDim::tp, workload::ParallelDim::cp, workload::ParallelDim::pp, workload::ParallelDim::dp};
  } else if (f == "--ddp-bucket-size") {
    plan.bucket_params = integer(f, v);
  } else if (f == "--pipeline-model-parallel-layout") {
    layout = v;
  } else if (f == "--cp-comm-type") {
    if (v == "p2p") plan.cp_kind = workload::CpKind::ring;
    else if (v == "a2a") plan.cp_kind = workload::CpKind::ulysses;
    else fail(f, fmt::format("'{}' is not p2p or a2a (parasim prices ring and Ulysses context parallelism)", v));
  }
}

void Reader::model_flag(const std::string& f, const std::string& v) {
  const std::map<std::string, long long> shape{{"--num-layers", model.layers},
                                               {"--hidden-size", model.hidden},
                                               {"--ffn-hidden-size", model.ffn_hidden},
                                               {"--num-attention-heads", model.heads},
                                               {"--num-query-groups", model.kv_heads},
                                               {"--kv-channels", model.head_dim},
                                               {"--vocab-size", model.vocab},
                                               {"--num-experts", model.experts},
                                               {"--moe-router-topk", model.top_k},
                                               {"--moe-ffn-hidden-size", model.expert_ffn_hidden},
                                               {"--q-lora-rank", model.mla.q_lora_rank},
                                               {"--kv-lora-rank", model.mla.kv_lora_rank},
                                               {"--qk-head-dim", model.mla.qk_nope_head_dim},
                                               {"--qk-pos-emb-head-dim", model.mla.qk_rope_head_dim},
                                               {"--v-head-dim", model.mla.v_head_dim},
                                               {"--mtp-num-layers", model.mtp_layers},
                                               {"--window-attn-skip-freq", model.global_every},
                                               {"--moe-router-num-groups", model.routing_groups},
                                               {"--moe-router-group-topk", model.routing_groups_per_token}};
  if (const auto it = shape.find(f); it != shape.end()) agree(f, v, it->second);
  if (f == "--multi-latent-attention" && !model.is_mla()) fail(f, "the scenario's model has no latent attention (model.mla)");
  if (f == "--window-size") {
    // "w,0" or "(w, 0)": the keys a query looks back at, and ahead (none for a decoder).
    std::string left = v.substr(0, v.find(','));
    std::erase_if(left, [](char c) { return c == '(' || c == ' '; });
    agree(f, left, model.sliding_window);
  }
  if (f == "--seq-length" && seq_len > 0 && integer(f, v) != seq_len) fail(f, fmt::format("{}, but the scenario trains on {} tokens", v, seq_len));
}

// The layer split: a layout, layers per virtual stage, or lighter first and last stages.
void Reader::finish_split() {
  if (!layout.empty()) {
    if (layers_per_virtual > 0 || first_stage > 0 || last_stage > 0) fail("--pipeline-model-parallel-layout", "cannot be combined with other split flags");
    plan.chunk_layers = layout_chunks(layout, model.layers, model.mtp_layers, [&](const std::string& m) { fail("--pipeline-model-parallel-layout", m); });
    if (plan.chunk_layers.size() % static_cast<std::size_t>(plan.pp) != 0) {
      fail("--pipeline-model-parallel-layout", fmt::format("{} chunks are not a multiple of pp {}", plan.chunk_layers.size(), plan.pp));
    }
    plan.vpp = static_cast<int>(plan.chunk_layers.size()) / plan.pp;
  } else if (layers_per_virtual > 0 && plan.pp > 1) {
    const int per_stage = model.layers / plan.pp;
    if (layers_per_virtual > per_stage || per_stage % layers_per_virtual != 0) {
      fail("--num-layers-per-virtual-pipeline-stage", fmt::format("{} does not divide the {} layers of a stage", layers_per_virtual, per_stage));
    }
    plan.vpp = per_stage / layers_per_virtual;
  }
  if (layout.empty() && (first_stage > 0 || last_stage > 0)) {
    if (plan.vpp > 1) fail("--decoder-first-pipeline-num-layers", "with virtual stages, give the split as --pipeline-model-parallel-layout");
    const int middle = plan.pp - (first_stage > 0) - (last_stage > 0);
    const int rest = model.layers - first_stage - last_stage;
    if (middle <= 0 || rest < 0 || rest % middle != 0) fail("--decoder-first-pipeline-num-layers", fmt::format("the other {} layers do not split evenly", rest));
    plan.chunk_layers.assign(static_cast<std::size_t>(plan.pp), rest / middle);
    if (first_stage > 0) plan.chunk_layers.front() = first_stage;
    if (last_stage > 0) plan.chunk_layers.back() = last_stage;
  }
}

// Recompute as Megatron-LM reads it: modules under selective only, full needs its method.
void Reader::finish_recompute() {
  if (granularity == "selective") plan.recompute = Recompute::selective;
  // Megatron-LM reads the modules under selective recompute only, as parasim's plan does.
  if (modules && granularity == "selective") plan.recompute_modules = *modules;
  if (granularity == "full") {
    if (method.empty()) fail("--recompute-granularity", "full needs --recompute-method uniform or block");
    plan.recompute = Recompute::full;
    plan.recompute_method = method == "block" ? workload::RecomputeMethod::block : workload::RecomputeMethod::uniform;
    plan.recompute_layers = std::max(1, plan.recompute_layers);
  } else {
    plan.recompute_layers = 1;
  }
}

void Reader::finish(int gpus) {
  if (plan.global_batch == 0) fail("--global-batch-size", "is required");
  if (plan.tp < 1 || plan.pp < 1 || plan.cp < 1 || plan.ep < 1 || plan.vpp < 1 || plan.micro_batch < 1) {
    fail("--tensor-model-parallel-size", "parallel sizes and the micro-batch must be at least 1");
  }
  if (!dp_given) {
    const long long used = 1LL * plan.tp * plan.pp * plan.cp;
    if (gpus % used != 0) fail("--tensor-model-parallel-size", fmt::format("tp {} x pp {} x cp {} = {} does not divide the {} GPUs", plan.tp, plan.pp, plan.cp, used, gpus));
    plan.dp = static_cast<int>(gpus / used);
  }
  finish_split();
  plan.schedule = plan.vpp > 1 ? workload::Schedule::interleaved_1f1b : workload::Schedule::one_f_one_b;
  // Only the interleaved schedule reads the group; pp is its default.
  if (plan.vpp == 1 || plan.microbatch_group == plan.pp) plan.microbatch_group = 0;
  if (fsdp) plan.zero = sharding == "optim_grads_params" || sharding.empty() ? 3 : sharding == "optim_grads" ? 2 : sharding == "optim" ? 1 : 0;
  if (instances > 1) {
    if (plan.zero != 1) fail("--num-distributed-optimizer-instances", "needs the distributed optimizer without Megatron-FSDP");
    if (plan.data_ranks() % instances != 0) fail("--num-distributed-optimizer-instances", fmt::format("{} does not divide the {} data ranks", instances, plan.data_ranks()));
    plan.zero_group = plan.data_ranks() / instances;
  }
  finish_recompute();
  if (plan.overlap.ep_comm) {
    // TransformerConfig's checks of the overlap at the target commit, in its own terms.
    const auto flag = "--overlap-moe-expert-parallel-comm";
    if (plan.ep == 1) fail(flag, "needs expert parallelism (--expert-model-parallel-size > 1)");
    if (plan.pp > 1 && plan.vpp == 1) fail(flag, "needs virtual pipeline stages with pp > 1 (--num-virtual-stages-per-pipeline-rank or a layout)");
    if (plan.recompute == Recompute::full) fail(flag, "runs without full recompute (--recompute-granularity full)");
  }
  if (const auto problem = workload::find_plan_problem(plan, model, gpus, seq_len)) fail(problem->key, problem->message);
}

}  // namespace

MegatronReading read_megatron_arguments(const std::string& text, const workload::ModelSpec& model, int gpus, int seq_len, bool ignore_unknown,
                                        const std::string& where) {
  Reader r(model, where);
  r.plan.global_batch = 0;
  r.seq_len = seq_len;
  MegatronReading out;
  std::vector<std::string> words;
  for (auto& w : argument_words(text)) {
    // --flag=value is one argument, as argparse reads it.
    const auto eq = w.find('=');
    if (w.starts_with("--") && eq != std::string::npos) {
      words.push_back(w.substr(0, eq));
      words.push_back(w.substr(eq + 1));
    } else {
      words.push_back(w);
    }
  }
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (!w.starts_with("--")) r.fail(w, "is not a flag (a value without its flag?)");
    const auto flag = megatron_flag(w);
    if (!flag) {
      if (!ignore_unknown) r.fail(w, "is not a Megatron-LM flag parasim knows; --ignore-unknown-flags skips it");
      out.ignored.push_back(w);
      while (i + 1 < words.size() && !words[i + 1].starts_with("--")) ++i;
      continue;
    }
    std::string value;
    if (flag->takes_value) {
      if (i + 1 >= words.size() || words[i + 1].starts_with("--")) r.fail(w, "needs a value");
      value = words[++i];
      // A list (--recompute-modules) is read whole; of the other flags that take several values
      // (--cp-comm-type per layer group) the rest are the same kind.
      while (i + 1 < words.size() && !words[i + 1].starts_with("--")) {
        ++i;
        if (flag->many) value += " " + words[i];
      }
    }
    if (flag->role == FlagRole::plan || flag->role == FlagRole::legacy) r.plan_flag(w, value);
    if (flag->role == FlagRole::model) r.model_flag(w, value);
  }
  r.finish(gpus);
  out.plan = r.plan;
  return out;
}

Plan megatron_form(Plan p, const workload::ModelSpec& m) {
  const auto sizes = workload::layers_per_chunk(p, m);
  if (std::all_of(sizes.begin(), sizes.end(), [&](int n) { return n == sizes.front(); }) && m.layers % p.chunks() == 0) p.chunk_layers.clear();
  if (const auto r = megatron_recompute(p, m)) {
    p.recompute_overrides.clear();
    p.recompute = r->granularity;
    p.recompute_method = r->granularity == Recompute::full ? r->method : workload::RecomputeMethod::uniform;
    p.recompute_layers = r->granularity == Recompute::full ? r->layers : 1;
  }
  if (p.tp == 1) p.sp = false;
  if (p.zero == 0 || !p.overlap.grad_reduce) p.overlap.param_gather = false;
  if (p.zero_group == p.data_ranks()) p.zero_group = 0;
  if (p.microbatch_group == p.pp) p.microbatch_group = 0;
  p.order = workload::full_order(p.order);
  if (p.pp == 1 || p.dp == 1 || p.order[2] != workload::ParallelDim::pp) {
    p.order = {workload::ParallelDim::tp, workload::ParallelDim::cp, workload::ParallelDim::dp, workload::ParallelDim::pp};
  }
  return p;
}

}  // namespace parasim::planner
