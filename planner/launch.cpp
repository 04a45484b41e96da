#include "planner/launch.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <sstream>

#include "core/error.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Recompute;

std::string plan_yaml(const Plan& p, const std::string& comment) {
  std::string out;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out += "# " + line + "\n";
  out += fmt::format("tp: {}\nsp: {}\npp: {}\nvpp: {}\ndp: {}\n", p.tp, p.sp ? "true" : "false", p.pp, p.vpp, p.dp);
  if (p.cp > 1) out += fmt::format("cp: {}\ncp_kind: {}\n", p.cp, workload::cp_kind_name(p.cp_kind));
  if (p.ep > 1) out += fmt::format("ep: {}\n", p.ep);
  if (p.etp > 0) out += fmt::format("etp: {}\n", p.etp);
  out += fmt::format("schedule: {}\nzero: {}\n", workload::schedule_name(p.schedule), p.zero);
  if (p.zero_group > 0) out += fmt::format("zero_group: {}\n", p.zero_group);
  out += fmt::format("micro_batch: {}\nglobal_batch: {}\nrecompute: {}\n", p.micro_batch, p.global_batch, workload::recompute_name(p.recompute));
  if (p.recompute == Recompute::full) {
    out += fmt::format("recompute_method: {}\nrecompute_layers: {}\n", p.recompute_method == workload::RecomputeMethod::block ? "block" : "uniform",
                       p.recompute_layers);
  }
  if (!p.recompute_overrides.empty()) {
    out += "overrides:\n";
    for (const auto& o : p.recompute_overrides) {
      out += fmt::format("  - {{layers: [{}, {}], recompute: {}}}\n", o.first_layer, o.last_layer, workload::recompute_name(o.recompute));
    }
  }
  out += fmt::format("overlap: {{grad_reduce: {}, param_gather: {}, tp_comm: {}}}\n", p.overlap.grad_reduce, p.overlap.param_gather, p.overlap.tp_comm);
  std::string order;
  for (auto d : workload::full_order(p.order)) order += fmt::format("{}{}", order.empty() ? "" : ", ", workload::dim_name(d));
  out += fmt::format("order: [{}]\n", order);
  if (!p.chunk_layers.empty()) {
    std::string split;
    for (int n : p.chunk_layers) split += fmt::format("{}{}", split.empty() ? "" : ", ", n);
    out += fmt::format("stage_layers: [{}]\n", split);
  }
  if (p.bucket_params > 0) out += fmt::format("bucket_params: {}\n", p.bucket_params);
  return out;
}

namespace {

// Per chunk, how many leading layers are fully recomputed, if that is all the chunk recomputes.
std::optional<std::vector<int>> block_counts(const Plan& p, const workload::ModelSpec& m) {
  const auto per_layer = workload::layer_recompute(p, m);
  const auto sizes = workload::layers_per_chunk(p, m);
  std::vector<int> counts;
  int first = 0;
  for (int size : sizes) {
    int k = 0;
    while (k < size && per_layer[static_cast<std::size_t>(first + k)] == Recompute::full) ++k;
    for (int i = k; i < size; ++i) {
      if (per_layer[static_cast<std::size_t>(first + i)] != Recompute::none) return std::nullopt;
    }
    counts.push_back(k);
    first += size;
  }
  return counts;
}

}  // namespace

std::vector<std::string> megatron_arguments(const Plan& p, const workload::ModelSpec& m, const workload::TrainingSpec& tr) {
  std::vector<std::string> out;
  out.push_back(fmt::format("--tensor-model-parallel-size {}", p.tp));
  if (p.sp) out.push_back("--sequence-parallel");
  out.push_back(fmt::format("--pipeline-model-parallel-size {}", p.pp));
  const auto sizes = workload::layers_per_chunk(p, m);
  if (p.vpp > 1) {
    // Megatron-LM counts layers per virtual stage; an uneven split gives the middle stages' count.
    out.push_back(fmt::format("--num-layers-per-virtual-pipeline-stage {}", sizes[static_cast<std::size_t>(std::min(1, p.pp - 1))]));
  }
  if (!p.chunk_layers.empty() && p.pp > 1) {
    int first = 0, last = 0;
    for (int c = 0; c < p.chunks(); ++c) {
      if (c % p.pp == 0) first += sizes[static_cast<std::size_t>(c)];
      if (c % p.pp == p.pp - 1) last += sizes[static_cast<std::size_t>(c)];
    }
    out.push_back(fmt::format("--decoder-first-pipeline-num-layers {}", first));
    out.push_back(fmt::format("--decoder-last-pipeline-num-layers {}", last));
  }
  if (p.cp > 1) {
    out.push_back(fmt::format("--context-parallel-size {}", p.cp));
    out.push_back(fmt::format("--cp-comm-type {}", p.cp_kind == workload::CpKind::ring ? "p2p" : "a2a"));
  }
  if (p.ep > 1) out.push_back(fmt::format("--expert-model-parallel-size {}", p.ep));
  if (p.etp > 0) out.push_back(fmt::format("--expert-tensor-parallel-size {}", p.etp));
  out.push_back(fmt::format("--micro-batch-size {}", p.micro_batch));
  out.push_back(fmt::format("--global-batch-size {}", p.global_batch));
  out.push_back(fmt::format("--seq-length {}", tr.seq_len));
  if (p.zero >= 1) out.push_back("--use-distributed-optimizer");
  if (p.overlap.grad_reduce) out.push_back("--overlap-grad-reduce");
  if (p.overlap.param_gather && p.zero >= 1) out.push_back("--overlap-param-gather");
  if (p.overlap.tp_comm) out.push_back("--tp-comm-overlap");
  if (tr.precision == Precision::bf16 || tr.precision == Precision::fp8) out.push_back("--bf16");
  if (tr.precision == Precision::fp16) out.push_back("--fp16");
  if (tr.precision == Precision::fp8) out.push_back("--fp8-format hybrid");
  if (tr.attention == workload::AttentionKernel::flash) out.push_back("--use-flash-attn");
  if (tr.cross_entropy == workload::CrossEntropy::fused) out.push_back("--cross-entropy-loss-fusion");
  if (!tr.gradient_accumulation_fusion) out.push_back("--no-gradient-accumulation-fusion");
  if (!tr.async_tp_allreduce && p.tp > 1 && !p.sp) out.push_back("--no-async-tensor-model-parallel-allreduce");
  // Megatron-LM reduces bf16 gradients in fp32 by itself; fp16 needs the flag to match the plan.
  if (tr.precision == Precision::fp16 && tr.fp32_grad_accumulation) out.push_back("--accumulate-allreduce-grads-in-fp32");

  if (p.recompute_overrides.empty()) {
    if (p.recompute == Recompute::selective) out.push_back("--recompute-granularity selective");
    if (p.recompute == Recompute::full) {
      out.push_back("--recompute-granularity full");
      out.push_back(fmt::format("--recompute-method {}", p.recompute_method == workload::RecomputeMethod::block ? "block" : "uniform"));
      out.push_back(fmt::format("--recompute-num-layers {}", p.recompute_layers));
    }
  } else {
    const auto counts = block_counts(p, m);
    const bool uniform = counts && std::all_of(counts->begin(), counts->end(), [&](int k) { return k == counts->front(); });
    int most = 0;
    if (counts) most = *std::max_element(counts->begin(), counts->end());
    if (uniform || counts) {
      out.push_back("--recompute-granularity full");
      out.push_back("--recompute-method block");
      out.push_back(fmt::format("--recompute-num-layers {}", most));
      if (!uniform) {
        out.push_back(fmt::format("# parasim recomputes the first 0-{} layers of each chunk, by stage; --recompute-num-layers applies to every "
                                  "chunk, so these arguments recompute {} everywhere (a little slower, never more memory)",
                                  most, most));
      }
    } else {
      out.push_back("--recompute-granularity full");
      out.push_back("--recompute-method uniform");
      out.push_back("--recompute-num-layers 1");
      out.push_back("# parasim mixes selective and full recompute per layer; Megatron-LM's arguments cannot: these recompute every layer in full");
    }
  }
  if (p.zero >= 2) {
    out.push_back(fmt::format("# zero {} shards {} across the data-parallel ranks: Megatron-LM's distributed optimizer stops at the optimizer state; "
                              "run with Megatron-DeepSpeed (--deepspeed --deepspeed_config ds_config.json) or PyTorch FSDP",
                              p.zero, p.zero == 2 ? "gradients too" : "gradients and weights too"));
  }
  if (p.schedule == workload::Schedule::zb_h1) {
    out.push_back("# zb-h1 is the zero-bubble schedule of Qi et al. (2023): Megatron-LM's --pipeline-model-parallel-size with their "
                  "zero-bubble fork's schedule (sail-sg/zero-bubble-pipeline-parallelism), not in upstream Megatron-LM");
  }
  const auto order = workload::full_order(p.order);
  if (order.front() != workload::ParallelDim::tp && p.tp > 1) {
    out.push_back("# data-parallel ranks innermost: Megatron-LM orders ranks tp-cp-ep-dp-pp; this plan needs its rank order changed");
  }
  return out;
}

nlohmann::json deepspeed_config(const Plan& p, const workload::TrainingSpec& tr) {
  nlohmann::json c;
  c["train_batch_size"] = p.global_batch;
  c["train_micro_batch_size_per_gpu"] = p.micro_batch;
  c["gradient_accumulation_steps"] = p.micro_batches();
  c["bf16"] = {{"enabled", tr.precision == Precision::bf16 || tr.precision == Precision::fp8}};
  c["fp16"] = {{"enabled", tr.precision == Precision::fp16}};
  const double bucket = p.gradient_bucket_params();
  nlohmann::json zero = {{"stage", p.zero},
                         {"overlap_comm", p.overlap.grad_reduce},
                         {"contiguous_gradients", true},
                         {"reduce_scatter", true},
                         {"reduce_bucket_size", static_cast<long long>(bucket)},
                         {"allgather_bucket_size", static_cast<long long>(bucket)}};
  if (p.zero == 3) {
    zero["stage3_prefetch_bucket_size"] = static_cast<long long>(bucket);
    zero["stage3_param_persistence_threshold"] = 100000;
  }
  if (p.zero_group > 0 && p.zero >= 1) zero["zero_hpz_partition_size"] = p.zero_group;
  c["zero_optimization"] = zero;
  if (p.recompute != Recompute::none || !p.recompute_overrides.empty()) {
    c["activation_checkpointing"] = {{"partition_activations", p.tp > 1}, {"contiguous_memory_optimization", false}, {"cpu_checkpointing", false}};
  }
  c["gradient_clipping"] = 1.0;
  c["steps_per_print"] = 10;
  return c;
}

Plan plan_from_megatron_arguments(const std::string& arguments, const workload::ModelSpec& m, int gpus, int seq_len) {
  const std::string where = "--from-megatron-args";
  auto fail = [&](const std::string& key, const std::string& message) -> void { throw InputError({"", 0, 0}, where + ": " + key, message); };
  std::vector<std::string> words;
  {
    std::istringstream in(arguments);
    for (std::string w; in >> w;) {
      const auto eq = w.find('=');
      if (w.rfind("--", 0) == 0 && eq != std::string::npos) {
        words.push_back(w.substr(0, eq));
        words.push_back(w.substr(eq + 1));
      } else {
        words.push_back(w);
      }
    }
  }
  Plan p;
  p.global_batch = 0;
  int layers_per_virtual = 0, first_stage = 0, last_stage = 0;
  bool dp_given = false;
  std::string recompute_granularity, recompute_method;
  int recompute_layers = 0;
  std::map<std::string, int*> integers{{"--tensor-model-parallel-size", &p.tp},
                                       {"--pipeline-model-parallel-size", &p.pp},
                                       {"--context-parallel-size", &p.cp},
                                       {"--expert-model-parallel-size", &p.ep},
                                       {"--expert-tensor-parallel-size", &p.etp},
                                       {"--micro-batch-size", &p.micro_batch},
                                       {"--global-batch-size", &p.global_batch},
                                       {"--num-layers-per-virtual-pipeline-stage", &layers_per_virtual},
                                       {"--decoder-first-pipeline-num-layers", &first_stage},
                                       {"--decoder-last-pipeline-num-layers", &last_stage},
                                       {"--recompute-num-layers", &recompute_layers},
                                       {"--data-parallel-size", &p.dp}};
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= words.size() || words[i + 1].rfind("--", 0) == 0) fail(w, "needs a value");
      return words[++i];
    };
    if (auto it = integers.find(w); it != integers.end()) {
      const std::string& v = value();
      try {
        std::size_t used = 0;
        const int x = std::stoi(v, &used);
        if (used != v.size() || x < 0) throw std::invalid_argument(v);
        *it->second = x;
      } catch (const std::exception&) {
        fail(w, fmt::format("'{}' is not a whole number", v));
      }
      if (w == "--data-parallel-size") dp_given = true;
    } else if (w == "--sequence-parallel") {
      p.sp = true;
    } else if (w == "--use-distributed-optimizer") {
      p.zero = std::max(p.zero, 1);
    } else if (w == "--overlap-grad-reduce") {
      p.overlap.grad_reduce = true;
    } else if (w == "--overlap-param-gather") {
      p.overlap.param_gather = true;
    } else if (w == "--tp-comm-overlap") {
      p.overlap.tp_comm = true;
    } else if (w == "--recompute-granularity") {
      recompute_granularity = value();
      if (recompute_granularity != "full" && recompute_granularity != "selective") fail(w, fmt::format("'{}' is not full or selective", recompute_granularity));
    } else if (w == "--recompute-activations") {
      recompute_granularity = "selective";
    } else if (w == "--recompute-method") {
      recompute_method = value();
      if (recompute_method != "uniform" && recompute_method != "block") fail(w, fmt::format("'{}' is not uniform or block", recompute_method));
    } else if (w == "--cp-comm-type") {
      const std::string& v = value();
      if (v == "p2p") p.cp_kind = workload::CpKind::ring;
      else if (v == "a2a") p.cp_kind = workload::CpKind::ulysses;
      else fail(w, fmt::format("'{}' is not p2p or a2a", v));
    } else if (w == "--num-layers") {
      const std::string& v = value();
      if (v != std::to_string(m.layers)) fail(w, fmt::format("{} layers, but {} has {}", v, m.name, m.layers));
    } else if (w == "--seq-length") {
      const std::string& v = value();
      if (seq_len > 0 && v != std::to_string(seq_len)) fail(w, fmt::format("{}, but the scenario trains on {} tokens", v, seq_len));
    } else if (w.rfind("--", 0) == 0 && i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) {
      ++i;  // another argument's value
    }
  }
  if (p.global_batch == 0) fail("--global-batch-size", "is required");
  if (p.tp < 1 || p.pp < 1 || p.cp < 1 || p.ep < 1) fail("--tensor-model-parallel-size", "parallel sizes must be at least 1");
  if (!dp_given) {
    const int used = p.tp * p.pp * p.cp;
    if (gpus % used != 0) fail("--tensor-model-parallel-size", fmt::format("tp {} x pp {} x cp {} = {} does not divide the {} GPUs", p.tp, p.pp, p.cp, used, gpus));
    p.dp = gpus / used;
  }
  if (layers_per_virtual > 0 && p.pp > 1) {
    const int per_stage = m.layers / p.pp;
    if (layers_per_virtual > per_stage || per_stage % layers_per_virtual != 0) {
      fail("--num-layers-per-virtual-pipeline-stage", fmt::format("{} does not divide the {} layers of a stage", layers_per_virtual, per_stage));
    }
    p.vpp = per_stage / layers_per_virtual;
  }
  p.schedule = p.vpp > 1 ? workload::Schedule::interleaved_1f1b : workload::Schedule::one_f_one_b;
  if (first_stage > 0 || last_stage > 0) {
    if (p.vpp > 1) fail("--decoder-first-pipeline-num-layers", "uneven first/last stages with virtual stages are not read; give the plan as YAML");
    const int middle = p.pp - (first_stage > 0) - (last_stage > 0);
    const int rest = m.layers - first_stage - last_stage;
    if (middle <= 0 || rest % middle != 0) fail("--decoder-first-pipeline-num-layers", fmt::format("the other {} layers do not split evenly", rest));
    p.chunk_layers.assign(static_cast<std::size_t>(p.pp), rest / middle);
    if (first_stage > 0) p.chunk_layers.front() = first_stage;
    if (last_stage > 0) p.chunk_layers.back() = last_stage;
  }
  if (recompute_granularity == "selective") p.recompute = Recompute::selective;
  if (recompute_granularity == "full") {
    p.recompute = Recompute::full;
    p.recompute_method = recompute_method == "block" ? workload::RecomputeMethod::block : workload::RecomputeMethod::uniform;
    p.recompute_layers = std::max(1, recompute_layers);
  }
  if (const auto problem = workload::find_plan_problem(p, m, gpus, seq_len)) fail(problem->key, problem->message);
  return p;
}

}  // namespace parasim::planner
