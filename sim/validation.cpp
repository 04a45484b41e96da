#include "sim/validation.hpp"

#include <algorithm>
#include <atomic>
#include <boost/math/statistics/bivariate_statistics.hpp>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mutex>
#include <numeric>
#include <thread>
#include <tuple>

#include "calibrate/cost_model.hpp"
#include "sim/fill_search.hpp"
#include "sim/simulator.hpp"
#include "sim/residuals.hpp"
#include "workload/chunk_placement.hpp"
#include "workload/memory.hpp"
#include "workload/microbatch_group.hpp"

namespace parasim::sim {

const char* const kFillPolicy =
    "Fill-in policy (one for every row):\n"
    "  cluster  nodes of gpus_per_node GPUs of the named bundled GPU on one NVSwitch; one NIC per GPU at\n"
    "           nic_gbps_per_gpu (absent: 200 Gb/s on A100/A800, 400 Gb/s on H100/H800/H200); a rail-optimized,\n"
    "           non-blocking two-tier network of 64-port switches; the bundled profile of the GPU.\n"
    "  model    gpt: GELU MLP, LayerNorm, learned positions, linear biases; llama: SwiGLU, RMSNorm, RoPE, no\n"
    "           biases, untied embeddings (tied_embeddings absent). ffn_hidden absent: 4 x hidden; kv_heads absent:\n"
    "           heads; vocab absent: the common tokenizer (50257, 32000, 128256, 250880, 256000) whose parameter\n"
    "           count is closest to params_b; gpt embeddings tied or untied, whichever is closer to params_b (tied\n"
    "           without it);\n"
    "           dropout (absent) 0.1 with eager attention (Megatron-LM's default before FlashAttention), else 0.\n"
    "           Cross-entropy: Megatron-LM's unfused vocabulary-parallel passes over fp32 logits, except on\n"
    "           sharded data parallel alone (tp = pp = 1, zero 2 or 3) with flash attention, the FSDP/XLA\n"
    "           stacks (llm-foundry's flash-attn loss, MaxText): one fused kernel each way, and full\n"
    "           recompute stops early as PyTorch's non-reentrant checkpoint does (the MLP's down projection\n"
    "           is not rerun). Gradient accumulation fused into the weight-gradient GEMMs with flash\n"
    "           attention (Megatron-LM since 2022, NeMo, Transformer Engine); with eager attention a\n"
    "           separate pass per micro-batch adds each gradient to its fp32 buffer (Megatron-LM's 2021\n"
    "           hooks, DeepSpeed's optimizers), and ZeRO is DeepSpeed's: ZeRO-1 all-reduces the fp32\n"
    "           gradients in full (its bf16 optimizer), ZeRO-3 gathers a module at a time, again after a\n"
    "           recompute, and reduces gradients in buckets of 5e8; else Megatron-LM's distributed\n"
    "           optimizer (gradients reduce-scattered) and FSDP's ZeRO-3 (a layer gathered and reduced whole; under\n"
    "           a pipeline a stage held gathered, its gradients unsharded, for the step, as PyTorch's pipeline\n"
    "           stage runs it).\n"
    "           moe: the llama block with every MLP a mixture of `experts` (top_k, shared_experts from the row)\n"
    "           of expert_ffn_hidden (absent: ffn_hidden), dropless, balanced (NVIDIA's MoE benchmarks force it).\n"
    "  stack    the stack the source names sets what the row does not print, as it ran then: llm-foundry (Composer,\n"
    "           PyTorch FSDP, 2023) ran flash-attn 1.x, FlashAttention-1 kernels (on Hopper at the Ampere\n"
    "           instruction rate) behind an interface that takes unpadded tokens (q, k, v gathered out of the batch,\n"
    "           the output scattered back); MaxText's XLA issues a layer's FSDP gather while the layer before runs\n"
    "           its backward (zero3_backward_prefetch pre); NeMo and Megatron-Bridge recipes (NVIDIA's DGX Cloud\n"
    "           ones included) run Megatron-Core's distributed optimizer (zero 1) and, in the performance settings\n"
    "           NVIDIA publishes with, keep and reduce gradients in bf16 (grad_reduce_in_fp32 off);\n"
    "           Megatron-DeepSpeed's pipeline engine has no interleaved schedule (vpp 1), and its bf16 runs\n"
    "           DeepSpeed's BF16_Optimizer, which casts each gradient to fp32 in a copy before adding it (18 bytes a\n"
    "           weight, not 10); BigScience's fork of October 2021 to March 2022 ran the fused causal softmax\n"
    "           only where the micro-batch's score matrices filled blocks it sized by the heads on a rank, PyTorch's\n"
    "           fp32 ops elsewhere (eager_softmax fused_by_head_count); torchtitan (2024) attends through\n"
    "           PyTorch's SDPA, whose flash backend is FlashAttention-2 (on Hopper at the Ampere instruction rate),\n"
    "           takes its loss with PyTorch's cross_entropy over fp32 logits (under TP its loss_parallel: DTensor's\n"
    "           chain over sharded logits), checkpoints selectively op by op (the attention outputs and every second\n"
    "           matmul kept) and runs a rank's local batch as one micro-batch, or under a pipeline as pp\n"
    "           micro-batches (pipeline_parallel_microbatches) with 1F1B (its default schedule). Other sources: the\n"
    "           rules below alone.\n"
    "  plan     overlap flags absent: off (Megatron-LM's defaults); sp absent with eager attention: off (it came\n"
    "           with Megatron-LM's 2022 release), and eager attention without sp is the 2021 stacks' synchronous TP\n"
    "           all-reduce of the input gradients (after the weight gradients). Absent micro_batch {1,2,4,8}, sp\n"
    "           {on,off} (tp > 1, flash), recompute {none,selective,full} ({none,full} with eager attention:\n"
    "           selective came in 2022; Megatron-LM and NeMo also selective by Megatron-Core's modules, the\n"
    "           model's ladder: experts' activation and stand-alone norms, MLA's up projections, whole MLPs, the\n"
    "           MoE part), vpp (pp > 1, interleaved: every divisor of a stage's layers with flash\n"
    "           attention, whose stacks overlap the interleaved transfers and run chunks down to one layer; {1,2,4}\n"
    "           with eager attention, whose 2021-22 interleaved transfers block, which the model does not price),\n"
    "           zero {0,1} are searched together with the simulator unless the stack sets them: published runs\n"
    "           were tuned and fit in memory. From micro_batch 1, sp on, no recompute, vpp 1, zero 0 if that fits,\n"
    "           else from the least recompute that fits (then micro_batch 1, sp on, ...), each field in turn moves\n"
    "           to its fastest value that fits, over all fields again after any move, until nothing moves; a\n"
    "           value under which nothing fits is never kept (if no combination fits, the one needing the least\n"
    "           memory is simulated and reported out of memory); a plan fits when its tensors and the fixed\n"
    "           allowance do (the allocator's fragmentation estimate left out: tuned runs keep it small). The\n"
    "           schedule the row names (plan.schedule), else 1F1B, interleaved with vpp > 1; an interleaved row\n"
    "           without vpp searches vpp > 1. Interleaved micro-batches that pp does not divide run in groups as\n"
    "           the runtime groups them: Megatron-Core's smallest --microbatch-group-size-per-virtual-pipeline-stage\n"
    "           that takes them, PyTorch's max(1, m / pp) equal rounds for torchtitan. stage_layers splits each\n"
    "           stage's layers evenly over its vpp chunks.\n"
    "           Without it, layers that do not divide into pp x vpp chunks are split as the row's stack splits\n"
    "           them: NeMo and Megatron-LM count the embedding and the loss as a layer each where layers + 2\n"
    "           divide (Megatron-Core's account_for_embedding/loss_in_pipeline_split, NeMo's recipes), so the\n"
    "           first and last chunks hold one layer fewer (none when a chunk is one layer); other stacks as\n"
    "           evenly as possible, the first and last chunks (which also hold the embedding and the head) taking\n"
    "           the smaller share, as Megatron-DeepSpeed's parameter-balanced partition does. zb-v and dualpipe-v\n"
    "           rows hold two chunks a stage in a V (vpp 2, stage s's layers over chunks s and 2pp-1-s); dualpipe rows\n"
    "           split the model in pp chunks, each stage holding two copies (a stated vpp 2 counts them).\n"
    "  skipped  rows whose stated plan no valid plan completes are skipped with the reason; rows with an unknown key\n"
    "           or a bad value are errors, and the rest run. model.mla is multi-head latent attention in every layer,\n"
    "           model.sliding_window a window on every layer, model.mtp_layers DeepSeek-V3's prediction modules.\n"
    "  memory   a peak the source printed (as_published: gpu_mem as a size, or a number under a key naming memory\n"
    "           and its unit: peak_mem_gib, max_reserved_mib) is compared with the model's figure of the kind it\n"
    "           counts: allocated (the key says alloc): the tensors; reserved (the key says reserved, or the stack\n"
    "           prints it: torchtitan's max reserved): with the allocator's fragmentation; else the device's whole\n"
    "           use, with the CUDA context and communication buffers.\n";

namespace {

using workload::ModelSpec;
using workload::Plan;

double default_nic_gbps(const std::string& gpu) {
  return gpu.rfind("a100", 0) == 0 || gpu.rfind("a800", 0) == 0 ? 200.0 : 400.0;
}

topology::NodeSpec node_for(const topology::GpuSpec& gpu, int gpus, double nic_gbps) {
  topology::NodeSpec n;
  n.name = fmt::format("{}-node", gpu.name);
  n.gpu = gpu;
  n.gpus = gpus;
  n.fabric = gpu.nvlink ? topology::IntraNodeFabric::nvswitch : topology::IntraNodeFabric::pcie;
  n.fabric_latency = Seconds(0.7e-6);
  n.pcie = {gpu.pcie_generation, 16, gpus >= 2 ? 2 : 1, std::max(1, std::min(4, gpus)), BytesPerSecond(64e9), Seconds(0.5e-6)};
  n.pcie.sockets = std::min(n.pcie.sockets, n.pcie.switches);
  n.nics.count = gpus;
  n.nics.bandwidth = BytesPerSecond(nic_gbps * 1e9 / 8);
  n.nics.latency = Seconds(2e-6);
  for (int i = 0; i < gpus; ++i) n.nics.affinity.push_back(i);
  return n;
}

ModelSpec base_model(const MeasuredRun& r, int vocab, bool tied) {
  ModelSpec m;
  m.name = r.id;
  m.architecture = r.arch;
  m.layers = r.layers;
  m.hidden = r.hidden;
  m.heads = r.heads;
  m.kv_heads = r.kv_heads.value_or(r.heads);
  m.head_dim = r.head_dim.value_or(r.hidden / r.heads);
  m.ffn_hidden = r.ffn_hidden.value_or(4 * r.hidden);
  m.vocab = vocab;
  m.max_position = r.seq_len;
  if (r.arch == "llama" || r.arch == "moe") {
    m.activation = workload::Activation::swiglu;
    m.norm = workload::Norm::rmsnorm;
    m.position = workload::PositionEmbedding::rope;
    m.bias = false;
    m.tied_embeddings = r.tied_embeddings.value_or(false);
  } else {
    m.tied_embeddings = tied;
  }
  m.dropout = r.dropout.value_or(r.attention == "eager" ? 0.1 : 0.0);
  if (r.arch == "moe") {
    m.experts = r.experts.value_or(0);
    m.top_k = r.top_k.value_or(0);
    m.shared_experts = r.shared_experts.value_or(0);
    m.expert_ffn_hidden = r.expert_ffn_hidden.value_or(m.ffn_hidden);
    m.shared_expert_ffn_hidden = m.expert_ffn_hidden;
    m.first_dense_layers = r.dense_layers.value_or(0);
  }
  if (r.mla) {
    m.mla = {r.mla->q_lora_rank.value_or(0), r.mla->kv_lora_rank, r.mla->qk_nope_head_dim, r.mla->qk_rope_head_dim, r.mla->v_head_dim};
    m.kv_heads = m.heads;
    m.head_dim = m.mla.qk_head_dim();
  }
  m.mtp_layers = r.mtp_layers.value_or(0);
  // A window the row states applies to every layer (Mistral's); one no shorter than the sequence is
  // full attention.
  if (r.sliding_window && *r.sliding_window < r.seq_len) m.sliding_window = *r.sliding_window;
  return m;
}

// What of the iteration the most exposed stage spends waiting on communication.
double exposed_comm_share(const Result& r) {
  double most = 0;
  for (const auto& st : r.stages) {
    double exposed = 0;
    for (const auto& e : st.exposed) exposed += e.value();
    most = std::max(most, exposed);
  }
  return r.iteration.value() > 0 ? most / r.iteration.value() : 0.0;
}

std::string plan_line(const Plan& p) {
  const bool named = p.schedule != workload::Schedule::one_f_one_b && p.schedule != workload::Schedule::interleaved_1f1b;
  return fmt::format("tp{} pp{}{}{} dp{}{}{} mb{} sp {} recompute {} zero {}", p.tp, p.pp, p.vpp > 1 ? fmt::format(" vpp{}", p.vpp) : "",
                     named ? fmt::format(" {}", workload::schedule_name(p.schedule)) : "", p.dp,
                     p.cp > 1 ? fmt::format(" cp{}", p.cp) : "", p.ep > 1 ? fmt::format(" ep{}", p.ep) : "", p.micro_batch, p.sp ? "on" : "off",
                     workload::recompute_text(p), p.zero);
}

// A list with its runs folded: [1,2,2,2,1] -> "1,2*3,1".
std::string folded(const std::vector<int>& v) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j < v.size() && v[j] == v[i]) ++j;
    parts.push_back(j - i > 1 ? fmt::format("{}*{}", v[i], j - i) : fmt::format("{}", v[i]));
    i = j;
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

}  // namespace

std::vector<int> row_chunk_layers(const MeasuredRun& r, SoftwareStack stack, int vpp, workload::Schedule schedule) {
  const int pp = r.pp, chunks = pp * vpp, layers = r.layers;
  std::vector<int> out;
  if (!r.stage_layers.empty()) {
    // A stage's layers are shared out evenly over the chunks it holds (chunk c·pp + s interleaved,
    // s and 2·pp − 1 − s in a V), the first chunks taking the remainder.
    Plan placed;
    placed.schedule = schedule;
    placed.pp = pp;
    placed.vpp = vpp;
    out.assign(static_cast<std::size_t>(chunks), 0);
    for (int st = 0; st < pp; ++st) {
      const int n = r.stage_layers[static_cast<std::size_t>(st)];
      const auto held = workload::stage_chunks(placed, st);
      const int k = schedule == workload::Schedule::dualpipe ? 1 : static_cast<int>(held.size());
      for (int c = 0; c < k; ++c) out[static_cast<std::size_t>(schedule == workload::Schedule::dualpipe ? st : held[static_cast<std::size_t>(c)])] = n / k + (c < n % k ? 1 : 0);
    }
    return out;
  }
  if (chunks <= 1 || layers % chunks == 0) return out;
  if ((stack == SoftwareStack::nemo || stack == SoftwareStack::megatron_lm) && (layers + 2) % chunks == 0) {
    // Megatron-Core's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split
    // (NeMo's recipes for layer counts that do not divide): the embedding and the loss each count as
    // a layer, so the first and last chunks hold one layer fewer.
    const int per = (layers + 2) / chunks;
    out.assign(static_cast<std::size_t>(chunks), per);
    out.front() -= 1;
    out.back() -= 1;
    return out;
  }
  // Balanced chunks, the remainder on the middle ones (never the first or the last while others
  // remain), as Megatron-DeepSpeed's parameter-balanced partition puts the embedding and head there.
  if (layers < chunks) return out;  // find_plan_problem says why
  const int base = layers / chunks, extra = layers % chunks;
  out.assign(static_cast<std::size_t>(chunks), base);
  for (int i = 0; i < extra; ++i) out[static_cast<std::size_t>(chunks > 2 ? 1 + i % (chunks - 2) : i)] += 1;
  return out;
}

bool fits_published(const workload::MemoryReport& m) {
  return std::all_of(m.stages.begin(), m.stages.end(), [&](const workload::StageMemory& st) {
    const double fragmentation = st.allowance.value() - workload::kFixedAllowanceBytes;
    return st.total().value() - fragmentation <= m.capacity.value();
  });
}

namespace {

// What the row's stack did that the row does not print, as it ran then (the policy's "stack" part):
// kernels, the loss, checkpointing, gradient formats, micro-batching.
void apply_stack_defaults(const MeasuredRun& r, RowScenario& s, Plan& p) {
  const bool eager = s.training.attention == workload::AttentionKernel::eager;
  const bool sharded_data_parallel_only = p.tp == 1 && p.pp == 1 && p.cp == 1 && p.zero >= 2;
  if (sharded_data_parallel_only && s.training.attention == workload::AttentionKernel::flash) {
    s.training.recompute_early_stop = true;
    if (s.stack != SoftwareStack::torchtitan) {
      s.training.cross_entropy = workload::CrossEntropy::fused;
      s.filled.push_back("cross_entropy=fused");
    }
  }
  if (s.stack == SoftwareStack::llm_foundry && !eager) {
    s.training.flash_kernel = workload::FlashKernel::flash1;
    s.filled.push_back("flash_kernel=flash1 (llm-foundry 2023: flash-attn 1.x)");
  }
  // torchtitan's kernels (sim::run_as_torchtitan: SDPA's flash backend, which PyTorch ranks ahead of
  // cuDNN's on Hopper; PyTorch's loss; op-level checkpointing), and without pipeline parallelism each
  // rank's local batch as one forward and backward (gradient accumulation came to it in 2025).
  if (s.stack == SoftwareStack::torchtitan) {
    run_as_torchtitan(s.training);
    if (!eager) s.filled.push_back("flash_kernel=flash2 (torchtitan 2024: SDPA's flash backend, FlashAttention-2)");
    s.filled.push_back("cross_entropy=torch (torchtitan: PyTorch's over fp32 logits)");
    // Its selective activation checkpointing is op-level by default (selective_ac_option "op").
    if (r.recompute == "selective" || !r.recompute) s.filled.push_back("selective_recompute=ops (torchtitan: every second matmul kept)");
    // With a pipeline the local batch is split into pipeline_parallel_microbatches, by default the
    // pipeline degree.
    const int local = r.global_batch % r.dp == 0 ? r.global_batch / r.dp : 0;
    if (!r.micro_batch && local > 0 && local % r.pp == 0) {
      p.micro_batch = local / r.pp;
      s.micro_batch_by_stack = true;
      s.filled.push_back(r.pp == 1 ? fmt::format("micro_batch={} (torchtitan: the local batch in one step)", p.micro_batch)
                                   : fmt::format("micro_batch={} (torchtitan 2024: the local batch in pipeline_parallel_microbatches = pp "
                                                 "micro-batches)",
                                                 p.micro_batch));
    }
  }
  if (eager && s.stack == SoftwareStack::megatron_deepspeed && names_bigscience(r.source)) {
    s.training.eager_softmax = workload::EagerSoftmax::fused_by_head_count;
    s.filled.push_back("eager_softmax=fused_by_head_count (BigScience's Megatron-DeepSpeed, Oct 2021 - Mar 2022)");
  }
  if (s.stack == SoftwareStack::megatron_deepspeed && s.training.precision == Precision::bf16 && !s.training.gradient_accumulation_fusion) {
    s.training.gradient_accumulation_copy = true;
    s.filled.push_back("gradient_accumulation_copy (DeepSpeed's BF16_Optimizer)");
  }
  if (s.stack == SoftwareStack::nemo) {
    s.training.fp32_grad_accumulation = false;
    s.filled.push_back("bf16 gradients (NeMo performance recipes: grad_reduce_in_fp32 off)");
  }
  if (s.stack == SoftwareStack::maxtext && p.zero == 3) {
    s.training.zero3_backward_prefetch = workload::Zero3Prefetch::pre;
    s.filled.push_back("zero3_backward_prefetch=pre (XLA: gathers scheduled ahead)");
  }
}

}  // namespace

namespace {

// What makes a row's plan impossible before anything is built.
std::optional<std::string> plan_shape_problem(const MeasuredRun& r) {
  if (r.arch == "moe" && (!r.experts || !r.top_k)) return std::string("a mixture of experts needs experts and top_k");
  if (r.arch != "moe" && r.ep > 1) return fmt::format("ep {} needs a mixture-of-experts model (arch moe)", r.ep);
  const long degrees = static_cast<long>(r.tp) * r.pp * r.dp * r.cp;
  if (degrees != r.gpus) {
    return fmt::format("tp {} x pp {} x dp {} x cp {} = {} does not match the {} GPUs", r.tp, r.pp, r.dp, r.cp, degrees, r.gpus);
  }
  return std::nullopt;
}

// Nodes of the row's GPUs on one NVSwitch, one NIC per GPU, a rail-optimized two-tier network.
topology::ClusterSpec row_cluster(const MeasuredRun& r, const topology::GpuSpec& gpu, std::vector<std::string>& filled) {
  topology::ClusterSpec c;
  const int per_node = std::min(r.gpus, r.gpus_per_node);
  const double nic = r.nic_gbps_per_gpu.value_or(default_nic_gbps(r.gpu));
  if (!r.nic_gbps_per_gpu) filled.push_back(fmt::format("nic_gbps_per_gpu={}", nic));
  c.name = r.id;
  c.node = node_for(gpu, per_node, nic);
  c.nodes = r.gpus / per_node;
  c.network.kind = topology::NetworkKind::rail_optimized;
  c.network.switch_radix = 64;
  c.network.pod_nodes = c.nodes;
  c.network.switch_latency = Seconds(0.3e-6);
  return c;
}

// Model fields: vocabulary and tied embeddings by the parameter count where the source is silent.
ModelSpec row_model(const MeasuredRun& r, std::vector<std::string>& filled) {
  const std::vector<int> vocabs = r.vocab ? std::vector<int>{*r.vocab} : std::vector<int>{50257, 32000, 128256, 250880, 256000};
  const std::vector<bool> ties = r.tied_embeddings ? std::vector<bool>{*r.tied_embeddings}
                                 : r.arch == "gpt" ? std::vector<bool>{true, false}
                                                   : std::vector<bool>{false};
  ModelSpec model;
  double best = std::numeric_limits<double>::infinity();
  for (int v : vocabs) {
    for (bool tied : ties) {
      const auto m = base_model(r, v, tied);
      const double params = workload::count_parameters(m).total() / 1e9;
      const double miss = r.params_b ? std::fabs(params - *r.params_b) : (tied ? 0.0 : 1.0) + (v == vocabs.front() ? 0.0 : 1.0);
      if (miss < best) {
        best = miss;
        model = m;
      }
    }
  }
  if (!r.ffn_hidden) filled.push_back(fmt::format("ffn_hidden={}", model.ffn_hidden));
  if (!r.kv_heads && r.arch != "gpt" && !r.mla) filled.push_back(fmt::format("kv_heads={}", model.kv_heads));
  if (!r.vocab) filled.push_back(fmt::format("vocab={}", model.vocab));
  if (r.arch == "gpt" && !r.tied_embeddings) filled.push_back(model.tied_embeddings ? "embeddings tied" : "embeddings untied");
  return model;
}

workload::TrainingSpec row_training(const MeasuredRun& r) {
  workload::TrainingSpec t;
  t.precision = *precision_from_name(r.precision);
  t.seq_len = r.seq_len;
  t.attention = r.attention == "eager" ? workload::AttentionKernel::eager : workload::AttentionKernel::flash;
  t.gradient_accumulation_fusion = t.attention == workload::AttentionKernel::flash;
  // The eager-attention stacks that shard anything are DeepSpeed's (Megatron-LM had no ZeRO before 2022).
  const bool eager = t.attention == workload::AttentionKernel::eager;
  t.zero3_engine = eager ? workload::Zero3Engine::deepspeed : workload::Zero3Engine::fsdp;
  t.zero1_engine = eager ? workload::Zero1Engine::deepspeed : workload::Zero1Engine::megatron;
  // Without SP the eager-era stacks (2021) reduce a block's input gradient after its whole backward.
  t.async_tp_allreduce = !(eager && !r.sp.value_or(false));
  t.optimizer_kernel = r.optimizer_kernel.value_or(workload::OptimizerKernel::fused);
  return t;
}

// The plan's degrees, batch, SP and recompute as the row states them (SP off in the eager era).
Plan row_plan(const MeasuredRun& r, const workload::TrainingSpec& training) {
  Plan p;
  p.tp = r.tp;
  p.pp = r.pp;
  p.dp = r.dp;
  // Context parallelism as NeMo and Megatron-Bridge run it by default: ring attention (p2p).
  p.cp = r.cp;
  p.cp_kind = workload::CpKind::ring;
  p.ep = r.ep;
  p.global_batch = r.global_batch;
  p.micro_batch = r.micro_batch.value_or(1);
  // Sequence parallelism came with Megatron-LM's 2022 release (Korthikanti et al.): eager-attention
  // stacks ran without it unless the row says so (BLOOM's published memory matches no SP).
  p.sp = r.sp.value_or(training.attention == workload::AttentionKernel::flash) && r.tp > 1;
  p.recompute = r.recompute ? (*r.recompute == "full" ? workload::Recompute::full
                                                      : *r.recompute == "selective" ? workload::Recompute::selective : workload::Recompute::none)
                            : workload::Recompute::none;
  if (r.recompute_modules) {
    p.recompute_modules = workload::RecomputeModules::of({});
    for (const auto& name : *r.recompute_modules) p.recompute_modules = p.recompute_modules.with(*workload::recompute_module_from_name(name));
  }
  p.zero = r.zero.value_or(0);
  p.zero_group = r.zero_group && *r.zero_group < r.dp ? *r.zero_group : 0;
  p.overlap = {r.overlap_grad_reduce.value_or(false), r.overlap_param_gather.value_or(false), r.overlap_tp_comm.value_or(false)};
  return p;
}

// The schedule the row names, else 1F1B or, with vpp > 1, interleaved 1F1B. The V-shaped schedules
// hold two chunks a stage; DualPipe's two are copies of one split into pp chunks, and it runs one
// micro-batch's expert all-to-alls under another's compute (its F&B).
void set_schedule(const MeasuredRun& r, std::optional<workload::Schedule> named, RowScenario& s, Plan& p) {
  p.vpp = r.vpp.value_or(1);
  if (named && workload::is_v_shaped(*named)) {
    if (!r.vpp) s.filled.push_back(fmt::format("vpp=2 ({}: two chunks a stage)", *r.schedule));
    p.vpp = r.vpp.value_or(2);
  }
  if (named == workload::Schedule::dualpipe) p.vpp = 1;
  p.schedule = named.value_or(p.vpp > 1 ? workload::Schedule::interleaved_1f1b : workload::Schedule::one_f_one_b);
  const bool dualpipe = named == workload::Schedule::dualpipe || named == workload::Schedule::dualpipe_v;
  if (dualpipe && r.ep > 1) {
    p.overlap.ep_comm = true;
    s.filled.push_back(fmt::format("overlap ep_comm=on ({}: forward and backward overlapped)", *r.schedule));
  }
}

// Unknown vpp the row's stack settles (printed among the filled fields), else the fill search tries
// it. An interleaved row without its vpp tries the chunk counts above 1.
std::optional<std::string> fill_vpp(const MeasuredRun& r, std::optional<workload::Schedule> named, bool eager, RowScenario& s, Plan& p) {
  const bool interleaved = named == workload::Schedule::interleaved_1f1b;
  if (r.vpp || r.pp <= 1 || (named && !interleaved)) return std::nullopt;
  if (s.stack == SoftwareStack::megatron_deepspeed && !interleaved) {
    s.filled.push_back("vpp=1 (Megatron-DeepSpeed: no interleaved schedule)");
  } else if (s.stack == SoftwareStack::megatron_lm && !interleaved) {
    s.filled.push_back("vpp=1 (Megatron-LM: 1F1B unless --num-layers-per-virtual-pipeline-stage is given)");
  } else if (s.stack == SoftwareStack::torchtitan && !interleaved) {
    s.filled.push_back("vpp=1 (torchtitan 2024: pipeline_parallel_schedule 1F1B unless another is given)");
  } else if (eager) {
    s.vpp_choices = interleaved ? std::vector<int>{2, 4} : std::vector<int>{1, 2, 4};
  } else {
    const int per_stage = std::max(1, r.layers / r.pp);
    for (int v = interleaved ? 2 : 1; v <= per_stage; ++v) {
      if (per_stage % v == 0) s.vpp_choices.push_back(v);
    }
  }
  if (interleaved && !s.vpp_choices.empty()) {
    p.vpp = s.vpp_choices.front();
  } else if (interleaved) {
    return fmt::format("interleaved-1f1b without vpp: {} layers over pp {} leave no stage more than one chunk", r.layers, r.pp);
  }
  return std::nullopt;
}

// Unknown ZeRO stage: NeMo's recipes run the distributed optimizer; other sources are searched.
void fill_zero(const MeasuredRun& r, RowScenario& s, Plan& p) {
  if (r.zero) return;
  if (s.stack == SoftwareStack::nemo) {
    p.zero = 1;
    s.filled.push_back("zero=1 (NeMo: distributed optimizer)");
  } else {
    s.zero_choices = {0, 1};
  }
}

}  // namespace

std::variant<RowScenario, std::string> row_scenario(const MeasuredRun& r, const std::filesystem::path& hardware_dir) {
  if (auto problem = plan_shape_problem(r)) return *problem;
  const auto hw = hardware_dir / (r.gpu + ".yaml");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(hw, ec)) return fmt::format("no bundled hardware '{}' ({})", r.gpu, hw.string());
  const auto gpu = topology::parse_gpu(yaml::Record(yaml::load_file(hw), topology::kGpuSchema));
  if (r.gpus % r.gpus_per_node != 0 && r.gpus > r.gpus_per_node) {
    return fmt::format("{} GPUs do not fill nodes of {}", r.gpus, r.gpus_per_node);
  }
  RowScenario s;
  s.cluster = row_cluster(r, gpu, s.filled);
  s.model = row_model(r, s.filled);
  if (!r.head_dim && r.hidden % r.heads != 0) return fmt::format("{} heads do not divide hidden {} (give head_dim)", r.heads, r.hidden);
  s.training = row_training(r);
  s.stack = software_stack_of(r.source);
  if (!gpu.peak_for(s.training.precision)) return fmt::format("{} has no {} peak", gpu.name, r.precision);

  Plan p = row_plan(r, s.training);
  const auto named = r.pp > 1 && r.schedule ? workload::schedule_from_name(*r.schedule) : std::nullopt;
  set_schedule(r, named, s, p);
  if (auto problem = fill_vpp(r, named, s.training.attention == workload::AttentionKernel::eager, s, p)) return *problem;
  fill_zero(r, s, p);
  apply_stack_defaults(r, s, p);
  s.candidates.push_back(p);
  return s;
}

namespace {

// The fields the source did not print, each with the given plan's value first: recompute first,
// so that the search's start, where the given plan does not fit, is the least recompute that fits.
std::vector<FillField> fill_fields(const MeasuredRun& r, const RowScenario& s) {
  std::vector<FillField> fields;
  // Selective recompute came with Megatron-LM's 2022 release (Korthikanti et al.), with sequence
  // parallelism: the eager-attention stacks before it recompute all or nothing.
  const bool flash = s.training.attention == workload::AttentionKernel::flash;
  if (!r.recompute) {
    FillField f{"recompute", {[](Plan& p) { p.recompute = workload::Recompute::none; }}};
    if (flash) f.values.push_back([](Plan& p) { p.recompute = workload::Recompute::selective; });
    // Megatron-Core's stacks also recompute by module, least first (workload/recompute_modules.hpp).
    if (flash && takes_recompute_modules(s.stack)) {
      for (const auto& modules : workload::recompute_module_ladder(s.model)) {
        f.values.push_back([modules](Plan& p) {
          p.recompute = workload::Recompute::selective;
          p.recompute_modules = modules;
        });
      }
    }
    f.values.push_back([](Plan& p) { p.recompute = workload::Recompute::full; });
    fields.push_back(std::move(f));
  }
  const int per_replica = r.global_batch / r.dp;
  if (!r.micro_batch && !s.micro_batch_by_stack) {
    FillField f{"micro_batch", {}};
    for (int v : {1, 2, 4, 8}) {
      if (per_replica % v == 0) f.values.push_back([v](Plan& p) { p.micro_batch = v; });
    }
    fields.push_back(std::move(f));
  }
  if (!r.sp && r.tp > 1 && flash) {
    fields.push_back({"sp", {[](Plan& p) { p.sp = true; }, [](Plan& p) { p.sp = false; }}});
  }
  if (!s.vpp_choices.empty()) {
    FillField f{"vpp", {}};
    for (int v : s.vpp_choices) {
      f.values.push_back([v](Plan& p) {
        p.vpp = v;
        if (p.schedule == workload::Schedule::one_f_one_b || p.schedule == workload::Schedule::interleaved_1f1b) {
          p.schedule = v > 1 ? workload::Schedule::interleaved_1f1b : workload::Schedule::one_f_one_b;
        }
      });
    }
    fields.push_back(std::move(f));
  }
  if (!s.zero_choices.empty()) {
    FillField f{"zero", {}};
    for (int v : s.zero_choices) f.values.push_back([v](Plan& p) { p.zero = v; });
    fields.push_back(std::move(f));
  }
  return fields;
}

// What the fill decided, for the row's "filled" line: each field the row did not state and the
// search set, and the chunk split where the row gives none.
void note_search_fills(const MeasuredRun& r, const RowScenario& s, const Plan& p, std::vector<std::string>& filled) {
  const bool flash = s.training.attention == workload::AttentionKernel::flash;
  if (!r.micro_batch && !s.micro_batch_by_stack) filled.push_back(fmt::format("micro_batch={} (searched)", p.micro_batch));
  if (!r.sp && r.tp > 1) filled.push_back(fmt::format("sp={} ({})", p.sp ? "on" : "off", flash ? "searched" : "eager era"));
  if (!r.recompute) filled.push_back(fmt::format("recompute={} (searched)", workload::recompute_name(p.recompute)));
  if (!s.vpp_choices.empty()) filled.push_back(fmt::format("vpp={} (searched)", p.vpp));
  if (!s.zero_choices.empty()) filled.push_back(fmt::format("zero={} (searched)", p.zero));
  if (p.microbatch_group > 0) {
    filled.push_back(fmt::format("microbatch_group={} ({}: {} micro-batches that pp {} does not divide)", p.microbatch_group,
                                 s.stack == SoftwareStack::torchtitan ? "PyTorch's interleaved rounds" : "Megatron-Core's smallest group", p.micro_batches(), p.pp));
  }
  if (r.stage_layers.empty() && !p.chunk_layers.empty()) {
    const bool megatron = p.chunk_layers.front() < p.chunk_layers[1 % p.chunk_layers.size()] && (r.layers + 2) % p.chunks() == 0 &&
                          (s.stack == SoftwareStack::nemo || s.stack == SoftwareStack::megatron_lm);
    filled.push_back(fmt::format("chunk layers {} ({})", folded(p.chunk_layers),
                                 megatron ? "Megatron-Core: embedding and loss count as layers" : "balanced, the ends lighter"));
  }
}

// Interleaved micro-batches that pp does not divide, grouped as the row's runtime groups them:
// PyTorch's ScheduleInterleaved1F1B in max(1, m / pp) equal rounds (torchtitan), Megatron-Core's
// --microbatch-group-size-per-virtual-pipeline-stage at the smallest group that takes them (else).
int row_microbatch_group(SoftwareStack stack, const Plan& p) {
  const int m = p.micro_batches();
  if (p.schedule != workload::Schedule::interleaved_1f1b || m % p.pp == 0 || m < p.pp) return 0;
  return stack == SoftwareStack::torchtitan ? workload::pytorch_interleaved_group(m, p.pp) : workload::smallest_microbatch_group(m, p.pp);
}

// The fill search's view of a row: complete a plan, probe its memory, simulate it.
FillEvaluator row_evaluator(const MeasuredRun& r, const RowScenario& s, const topology::Cluster& cluster, const calibrate::CostModel& cost) {
  FillEvaluator evaluator;
  evaluator.complete = [&r, &s](Plan& p) {
    p.chunk_layers = row_chunk_layers(r, s.stack, p.vpp, p.schedule);
    p.microbatch_group = row_microbatch_group(s.stack, p);
  };
  evaluator.probe = [&s, &cluster](const Plan& p) {
    FillProbe probe;
    if (workload::find_plan_problem(p, s.model, cluster.gpu_count(), s.training.seq_len)) return probe;
    const auto memory = workload::memory_per_stage(s.model, s.training, p, s.cluster.node.gpu.hbm_capacity);
    probe.valid = true;
    probe.fits = fits_published(memory);
    probe.peak = memory.peak().value();
    return probe;
  };
  evaluator.run = [&s, &cluster, &cost](const Plan& p) {
    const SimInput in{&cluster, &s.model, &s.training, &p, nullptr, &cost};
    const auto result = simulate_plan(in);
    return FillRun{result.iteration.value(), result.mfu, exposed_comm_share(result), error_features(result, s.training.precision)};
  };
  return evaluator;
}

// Simulates one row: the given plan's unknown fields filled by the joint search (sim/fill_search.hpp).
RowResult run_row(const MeasuredRun& r, const std::filesystem::path& hardware_dir, const calibrate::Profile* profile) {
  RowResult out;
  out.run = &r;
  const auto built = row_scenario(r, hardware_dir);
  if (std::holds_alternative<std::string>(built)) {
    out.skipped = std::get<std::string>(built);
    return out;
  }
  const auto& s = std::get<RowScenario>(built);
  out.filled = s.filled;
  out.stack = s.stack;
  const topology::Cluster cluster(s.cluster);
  const auto& gpu = s.cluster.node.gpu;
  const calibrate::CostModel cost(gpu, profile ? *profile : calibrate::default_profile(gpu.name));
  const auto evaluator = row_evaluator(r, s, cluster, cost);
  const auto found = joint_fill_search(s.candidates.front(), fill_fields(r, s), evaluator);
  for (const auto& step : found.steps) {
    out.search.push_back({step.field, plan_line(step.plan), step.probe.fits, step.probe.peak,
                          step.run ? std::optional<double>(step.run->time) : std::nullopt, step.kept});
  }
  out.features = found.run.features;
  const auto& p = found.plan;
  if (!std::isfinite(found.run.time)) {
    // Why the plan as the search completes it (its chunk split, its micro-batch groups) cannot run.
    Plan completed = p;
    evaluator.complete(completed);
    const auto problem = workload::find_plan_problem(completed, s.model, cluster.gpu_count(), s.training.seq_len);
    out.skipped = fmt::format("no valid plan: {}", problem ? problem->message : "no value of the unprinted fields completes it");
    return out;
  }
  note_search_fills(r, s, p, out.filled);
  out.predicted_s = found.run.time;
  out.mfu = found.run.mfu;
  out.exposed_comm_share = found.run.comm_share;
  out.fits = found.probe.fits;
  out.predicted_memory_bytes = found.probe.peak;
  if (r.published_memory_bytes) {
    out.memory_kind = r.published_memory_kind.value_or(memory_printed_by(s.stack).value_or(PrintedMemory::device));
    out.predicted_memory_bytes = printed_peak(workload::memory_per_stage(s.model, s.training, p, gpu.hbm_capacity), out.memory_kind);
    out.memory_error = out.predicted_memory_bytes / *r.published_memory_bytes - 1;
  }
  out.error = (found.run.time - r.measured_iteration_s) / r.measured_iteration_s;
  out.plan = plan_line(p);
  out.chosen = p;
  return out;
}

// The files' names (not the paths they were given by), each once, in order.
std::vector<std::string> file_names(const std::vector<std::string>& paths) {
  std::vector<std::string> v;
  for (const auto& p : paths) v.push_back(std::filesystem::path(p).filename().string());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

/// The median of a non-empty list (the mean of the middle two when its length is even).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Ranks from 1, tied values at the average of the ranks they span.
std::vector<double> average_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> rank(v.size());
  for (std::size_t first = 0; first < order.size();) {
    std::size_t last = first;
    while (last + 1 < order.size() && v[order[last + 1]] == v[order[first]]) ++last;
    const double average = (static_cast<double>(first) + static_cast<double>(last)) / 2 + 1;
    for (std::size_t i = first; i <= last; ++i) rank[order[i]] = average;
    first = last + 1;
  }
  return rank;
}

// Rows that differ only in the plan: same model (but for params_b), GPU, GPU count, batch, format.
std::string plan_group(const MeasuredRun& r) {
  auto o = [](const auto& x) { return x ? fmt::format("{}", *x) : std::string("-"); };
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.arch, r.layers, r.hidden, r.heads, o(r.kv_heads), o(r.head_dim), o(r.ffn_hidden), o(r.vocab),
                     r.seq_len, o(r.experts), o(r.top_k), r.gpu, r.gpus, r.global_batch, r.precision);
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  return boost::math::statistics::correlation_coefficient(average_ranks(a), average_ranks(b));
}

std::variant<RowExplanation, std::string> explain_row(const MeasuredRun& r, const std::filesystem::path& hardware_dir) {
  RowExplanation e;
  e.row = run_row(r, hardware_dir, nullptr);
  if (e.row.skipped) return *e.row.skipped;
  const auto s = std::get<RowScenario>(row_scenario(r, hardware_dir));
  const topology::Cluster cluster(s.cluster);
  const calibrate::CostModel cost(s.cluster.node.gpu, calibrate::default_profile(s.cluster.node.gpu.name));
  const auto& p = e.row.chosen;
  const auto g = workload::build_tasks(s.model, s.training, p);
  const SimInput in{&cluster, &s.model, &s.training, &p, &g, &cost};
  e.result = simulate(in);
  const double launch = cost.profile().kernel_launch.value();
  std::map<std::string, double> by_name;
  for (const auto& t : g.tasks) {
    if (t.kind != workload::TaskKind::compute || t.stage != 0) continue;
    for (const auto& op : g.ops(t)) {
      const double time = cost.op_time(op).value();
      ++e.kernels;
      e.launch_s += launch;
      by_name[std::string(op.name)] += time;
      switch (op.kind) {
        case workload::OpKind::gemm: e.gemm_s += time - launch; e.gemm_flops += op.flops; break;
        case workload::OpKind::attention:
        case workload::OpKind::attention_grad: e.attention_s += time - launch; break;
        case workload::OpKind::memory_bound: e.memory_s += time - launch; break;
      }
    }
  }
  e.ops.assign(by_name.begin(), by_name.end());
  std::stable_sort(e.ops.begin(), e.ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return e;
}

Summary summarize(const std::vector<const RowResult*>& rows) {
  Summary s;
  s.rows = static_cast<int>(rows.size());
  std::vector<double> errors, measured_tp, predicted_tp;
  for (const auto* r : rows) {
    if (r->skipped) continue;
    ++s.simulated;
    errors.push_back(std::fabs(r->error));
    s.rule_of_thumb_mape += std::fabs(r->rule_of_thumb_error);
    if (r->interval) {
      ++s.intervals;
      if (r->covered()) ++s.covered;
    }
    const double tokens = static_cast<double>(r->run->global_batch) * r->run->seq_len / r->run->gpus;
    measured_tp.push_back(tokens / r->run->measured_iteration_s);
    predicted_tp.push_back(tokens / r->predicted_s);
  }
  if (!errors.empty()) {
    s.rule_of_thumb_mape /= static_cast<double>(errors.size());
    s.mape = std::accumulate(errors.begin(), errors.end(), 0.0) / static_cast<double>(errors.size());
    s.worst = *std::max_element(errors.begin(), errors.end());
    s.median = median(errors);
  }
  if (errors.size() > 2) s.spearman = spearman(measured_tp, predicted_tp);
  std::map<std::string, std::vector<const RowResult*>> groups;
  for (const auto* r : rows) groups[plan_group(*r->run)].push_back(r);
  for (const auto& [key, members] : groups) {
    for (std::size_t a = 0; a < members.size(); ++a) {
      for (std::size_t b = a + 1; b < members.size(); ++b) {
        // The same job measured twice has no order for a planner to get right.
        if (same_inputs(*members[a]->run, *members[b]->run)) continue;
        const double ma = members[a]->run->measured_iteration_s, mb = members[b]->run->measured_iteration_s;
        if (std::fabs(ma - mb) / std::min(ma, mb) < 0.05) continue;
        ++s.pairs;
        if (members[a]->skipped || members[b]->skipped) continue;
        const double pa = members[a]->predicted_s, pb = members[b]->predicted_s;
        if ((pa < pb) == (ma < mb) && pa != pb) ++s.ordered;
      }
    }
  }
  return s;
}

namespace {

std::string what_of(const std::exception& e) {
  if (const auto* input = dynamic_cast<const InputError*>(&e)) return input->message();
  return e.what();
}

}  // namespace

bool RowResult::covered() const {
  return interval && run && interval->lo.value() <= run->measured_iteration_s && run->measured_iteration_s <= interval->hi.value();
}

namespace {

std::vector<ErrorObservation> observations(const std::vector<RowResult>& rows, const std::string& leave_out_family) {
  std::vector<ErrorObservation> out;
  for (const auto& r : rows) {
    if (r.skipped || r.run->family == leave_out_family) continue;
    out.push_back({r.features, r.predicted_s, r.run->measured_iteration_s, r.run->family});
  }
  return out;
}

// Every two simulated rows of one job that differ only in the plan.
std::vector<PlanPair> plan_pairs(const std::vector<RowResult>& rows) {
  std::map<std::string, std::vector<const RowResult*>> groups;
  for (const auto& r : rows) {
    if (!r.skipped) groups[plan_group(*r.run)].push_back(&r);
  }
  auto residual = [](const RowResult* r) { return std::log(r->run->measured_iteration_s / r->predicted_s); };
  std::vector<PlanPair> out;
  for (const auto& [key, members] : groups) {
    for (std::size_t a = 0; a < members.size(); ++a) {
      for (std::size_t b = a + 1; b < members.size(); ++b) out.push_back({residual(members[a]), residual(members[b]), members[a]->run->family});
    }
  }
  return out;
}

// Each row's interval from the model fitted without its family: coverage measured out of sample.
void leave_one_family_out(std::vector<RowResult>& rows) {
  std::map<std::string, ErrorModel> without;
  for (const auto& r : rows) {
    if (!r.skipped && !without.count(r.run->family)) without[r.run->family] = fit_error_model(observations(rows, r.run->family), "");
  }
  for (auto& r : rows) {
    if (r.skipped) continue;
    const auto& m = without.at(r.run->family);
    if (!m.empty()) r.interval = prediction_interval(m, r.features, Seconds(r.predicted_s));
  }
}

}  // namespace

double printed_peak(const workload::MemoryReport& memory, PrintedMemory kind) {
  double peak = 0;
  for (const auto& st : memory.stages) {
    const double tensors = (st.total() - st.allowance).value();
    const double figure = kind == PrintedMemory::allocated ? tensors
                          : kind == PrintedMemory::reserved ? tensors * (1 + workload::kFragmentation)
                                                            : st.total().value();
    peak = std::max(peak, figure);
  }
  return peak;
}

MemoryCheck check_memory(const std::vector<const RowResult*>& rows) {
  MemoryCheck m;
  std::vector<double> errors;
  for (const auto* r : rows) {
    if (r->skipped || !r->memory_error) continue;
    errors.push_back(std::fabs(*r->memory_error));
    m.bias += *r->memory_error;
  }
  if (errors.empty()) return m;
  m.rows = static_cast<int>(errors.size());
  m.median = median(errors);
  m.worst = *std::max_element(errors.begin(), errors.end());
  m.bias /= m.rows;
  return m;
}

ValidationReport validate(const std::vector<MeasuredRun>& runs, const std::vector<std::string>& file_of, const ValidateOptions& options) {
  ValidationReport report;
  report.rows.resize(runs.size());
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;  // under progress_mutex
  std::mutex progress_mutex;
  auto worker = [&]() {
    for (std::size_t i = next++; i < runs.size(); i = next++) {
      try {
        report.rows[i] = run_row(runs[i], options.hardware_dir, options.profile ? &*options.profile : nullptr);
      } catch (const std::exception& e) {
        // One row's failure is that row's result, never the end of the run; an input error says its
        // message alone (the row names the file).
        report.rows[i] = RowResult{};
        report.rows[i].run = &runs[i];
        report.rows[i].skipped = fmt::format("could not simulate: {}", what_of(e));
      }
      if (options.progress) {
        // Counted under the lock that reports it, so the reports rise whichever thread ends last.
        std::lock_guard<std::mutex> lock(progress_mutex);
        options.progress(++done, runs.size());
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, options.threads); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  report.file_of = file_of;
  report.rule_of_thumb_mfu = fit_rule_of_thumb(report.rows);
  apply_rule_of_thumb(report.rows, report.rule_of_thumb_mfu);
  leave_one_family_out(report.rows);
  const auto all_rows = observations(report.rows, "");
  report.error_model = fit_error_model(all_rows, fmt::format("{} published rows ({})", all_rows.size(), fmt::join(file_names(file_of), ", ")));
  report.error_model.difference = difference_error(plan_pairs(report.rows));
  std::vector<const RowResult*> all;
  std::map<std::string, std::vector<const RowResult*>> by_family, by_file;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    all.push_back(&report.rows[i]);
    by_family[report.rows[i].run->family].push_back(&report.rows[i]);
    by_file[file_of[i]].push_back(&report.rows[i]);
  }
  report.overall = summarize(all);
  report.memory = check_memory(all);
  report.error_model.memory_margin = report.memory.median;
  for (const auto& [k, v] : by_family) report.families[k] = summarize(v);
  for (const auto& [k, v] : by_file) report.files[k] = summarize(v);
  for (const auto& [k, v] : by_family) {
    if (const auto m = check_memory(v); m.rows > 0) report.memory_families[k] = m;
  }
  for (const auto& [k, v] : by_file) {
    if (const auto m = check_memory(v); m.rows > 0) report.memory_files[k] = m;
  }
  return report;
}

RowResult simulate_row(const MeasuredRun& run, const std::filesystem::path& hardware_dir, const calibrate::Profile* profile) {
  return run_row(run, hardware_dir, profile);
}

}  // namespace parasim::sim
