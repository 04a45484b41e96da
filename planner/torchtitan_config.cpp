#include "planner/torchtitan_config.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdexcept>

namespace parasim::planner {

using workload::Plan;
using workload::Recompute;

std::vector<std::string> torchtitan_notes(const Plan& plan, const workload::ModelSpec& model, const workload::TrainingSpec& training) {
  std::vector<std::string> out;
  if (model.mtp_layers > 0) out.push_back(fmt::format("priced with {} multi-token-prediction module(s); torchtitan v0.2.2 builds none", model.mtp_layers));
  if (training.precision == Precision::fp8 && model.is_moe()) {
    out.push_back("float8 expert GEMMs (quantize.grouped_mm.float8) are a prototype in v0.2.2: they need torchao's nightly build");
  }
  if (training.attention == workload::AttentionKernel::flash && training.flash_kernel != workload::FlashKernel::flash2) {
    out.push_back("priced with the GPU's native flash kernel; torchtitan's SDPA runs FlashAttention-2 (training.flash_kernel: flash2 prices that)");
  }
  if (plan.recompute == Recompute::selective && training.selective_recompute != workload::SelectiveRecompute::ops) {
    out.push_back("priced with Megatron-LM's selective recompute (the attention core); torchtitan's op policy also reruns every second matmul");
  }
  if (plan.zero == 2) out.push_back("ZeRO-2 as FSDP2 that keeps the gathered weights from forward to backward (fsdp_reshard_after_forward = never)");
  return out;
}

namespace {

std::string toml_string(std::string_view s) { return fmt::format("\"{}\"", s); }

// The modules of each model part, in model order: the embedding with the first chunk, the final
// norm and the output layer with the last.
std::string model_parts(const Plan& plan, const workload::ModelSpec& model) {
  const auto sizes = workload::layers_per_chunk(plan, model);
  const auto first = workload::first_layer_of_chunk(plan, model);
  std::string out = "[\n";
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    std::vector<std::string> names;
    if (c == 0) names.push_back(toml_string("tok_embeddings"));
    for (int l = first[c]; l < first[c] + sizes[c]; ++l) names.push_back(toml_string(fmt::format("layers.{}", l)));
    if (c + 1 == sizes.size()) {
      names.push_back(toml_string("norm"));
      names.push_back(toml_string("output"));
    }
    out += fmt::format("  [{}],\n", fmt::join(names, ", "));
  }
  return out + "]";
}

std::string activation_checkpoint(const Plan& plan) {
  switch (plan.recompute) {
    case Recompute::none: return "mode = \"none\"\n";
    case Recompute::full: return "mode = \"full\"\n";
    case Recompute::selective: return "mode = \"selective\"\nselective_ac_option = \"op\"\n";
  }
  return "";
}

// FSDP2 shards over the data ranks and, folded in, the context-parallel ones; DDP replicates.
int shard_degree(const Plan& p) { return p.zero >= 2 ? p.sharding_group() / p.cp : 1; }

// Without a pipeline a step accumulates local batches of one micro-batch; with one, the local batch
// is the replica's whole share, split into the schedule's micro-batches.
int local_batch_of(const Plan& p) { return p.pp > 1 ? p.global_batch / p.dp : p.micro_batch; }

std::string parallelism(const Plan& p, const workload::ModelSpec& model) {
  const int shard = shard_degree(p);
  std::string out = "[parallelism]\n";
  out += fmt::format("data_parallel_replicate_degree = {}\n", p.dp / shard);
  out += fmt::format("data_parallel_shard_degree = {}\n", shard);
  if (p.zero == 2) out += "fsdp_reshard_after_forward = \"never\"\n";
  if (p.zero == 3 && p.pp > 1) out += "fsdp_reshard_after_forward = \"always\"  # ZeRO-3 with a pipeline (torchtitan keeps them otherwise)\n";
  out += fmt::format("tensor_parallel_degree = {}\n", p.tp);
  if (p.tp > 1) out += fmt::format("enable_async_tensor_parallel = {}\n", p.overlap.tp_comm ? "true" : "false");
  out += fmt::format("context_parallel_degree = {}\n", p.cp);
  out += fmt::format("pipeline_parallel_degree = {}\n", p.pp);
  if (p.pp > 1) {
    out += fmt::format("pipeline_parallel_schedule = {}\n", toml_string(torchtitan_schedule_name(p)));
    out += fmt::format("pipeline_parallel_microbatch_size = {}\n", p.micro_batch);
    out += "module_fqns_per_model_part = " + model_parts(p, model) + "\n";
  }
  if (model.is_moe()) {
    out += fmt::format("expert_parallel_degree = {}\n", p.ep);
    out += fmt::format("expert_tensor_parallel_degree = {}\n", p.ep > 1 ? p.expert_tp() : 1);
  }
  return out;
}

}  // namespace

std::string torchtitan_toml(const Plan& plan, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                            const std::vector<std::string>& header, int gpus_per_node, int steps) {
  const auto flavor = torchtitan_flavor(model);
  if (!flavor || torchtitan_job_problem(model, training) || torchtitan_plan_problem(plan)) {
    throw std::logic_error("torchtitan_toml: a job or plan torchtitan does not run");
  }
  const bool fp8 = training.precision == Precision::fp8;
  const int local_batch = local_batch_of(plan);
  std::string out;
  for (const auto& line : header) out += "# " + line + "\n";
  out += fmt::format("# torchtitan {} (commit {}, the last release configured by TOML):\n", kTorchtitanRelease, kTorchtitanCommit.substr(0, 7));
  out += fmt::format("#   torchrun --nproc_per_node={} -m torchtitan.train --job.config_file torchtitan.toml   (on each of the nodes)\n",
                     gpus_per_node);
  for (const auto& note : torchtitan_notes(plan, model, training)) out += "# note: " + note + "\n";
  out += "\n[job]\n";
  out += fmt::format("description = {}\n", toml_string(fmt::format("parasim plan: {}", model.name)));
  out += "\n[metrics]\nlog_freq = 1\n";
  out += "\n[model]\n";
  out += fmt::format("name = {}\nflavor = {}\n", toml_string(flavor->name), toml_string(flavor->flavor));
  out += fmt::format("hf_assets_path = {}  # the tokenizer: python scripts/download_hf_assets.py\n", toml_string(flavor->hf_assets));
  if (fp8) out += model.is_moe() ? "converters = [\"quantize.linear.float8\", \"quantize.grouped_mm.float8\"]\n" : "converters = [\"quantize.linear.float8\"]\n";
  out += "\n[optimizer]\nname = \"AdamW\"\nlr = 3e-4\n";
  out += fmt::format("\n[lr_scheduler]\nwarmup_steps = {}\n", std::min(10, std::max(1, steps / 2)));
  out += "\n[training]\n";
  out += fmt::format("local_batch_size = {}\nglobal_batch_size = {}\nseq_len = {}\nsteps = {}\n", local_batch, plan.global_batch, training.seq_len, steps);
  out += "dataset = \"c4_test\"  # bundled with torchtitan: runs offline\n";
  out += "mixed_precision_param = \"bfloat16\"\n";
  out += fmt::format("\n{}", parallelism(plan, model));
  out += fmt::format("\n[activation_checkpoint]\n{}", activation_checkpoint(plan));
  // Async TP and float8 need the compiled model to pay off (torchtitan's own guidance).
  const bool compile = fp8 || plan.overlap.tp_comm;
  out += fmt::format("\n[compile]\nenable = {}\ncomponents = [\"model\", \"loss\"]\n", compile ? "true" : "false");
  if (fp8) {
    out += "\n[quantize.linear.float8]\nrecipe_name = \"tensorwise\"\nfilter_fqns = [\"output\"]\n";
    if (plan.zero >= 2) out += "enable_fsdp_float8_all_gather = true\nprecompute_float8_dynamic_scale_for_fsdp = true\n";
    if (model.is_moe()) out += "\n[quantize.grouped_mm.float8]\nfqns = [\"experts\"]\n";
  }
  out += "\n[checkpoint]\nenable = false\n";
  return out;
}

std::vector<std::pair<std::string, int>> torchtitan_settings(const Plan& plan, const workload::TrainingSpec& training) {
  const int shard = shard_degree(plan);
  return {{"data_parallel_replicate_degree", plan.dp / shard}, {"data_parallel_shard_degree", shard}, {"tensor_parallel_degree", plan.tp},
          {"context_parallel_degree", plan.cp}, {"pipeline_parallel_degree", plan.pp}, {"local_batch_size", local_batch_of(plan)},
          {"seq_len", training.seq_len}};
}

std::string torchtitan_launch_script(const LaunchHeader& h) {
  std::string out = "#!/bin/bash\n";
  for (const auto& line : h.lines) out += "# " + line + "\n";
  out += fmt::format("#\n# Run on every node, in an environment with torchtitan {} and its tokenizer assets:\n", kTorchtitanRelease);
  out += h.nodes > 1 ? fmt::format("#   TORCHTITAN=/path/to/torchtitan MASTER_ADDR=<node 0> NODE_RANK=<0..{}> bash launch_torchtitan.sh\n", h.nodes - 1)
                     : "#   TORCHTITAN=/path/to/torchtitan bash launch_torchtitan.sh\n";
  out += "# It trains on torchtitan's bundled c4_test: a benchmark of the plan (torchtitan.toml beside this says how).\n";
  out += "set -euo pipefail\n\n" + torchrun_node_variables(h);
  out += "TORCHTITAN=${TORCHTITAN:-/workspace/torchtitan}\n";
  out += "config=\"$(cd \"$(dirname \"$0\")\" && pwd)/torchtitan.toml\"\n";
  out += "# torchtitan's paths (hf_assets_path, the dataset) are relative to its checkout.\ncd \"$TORCHTITAN\"\n\n";
  // exec: a runner's timeout signals torchrun itself, which stops its workers.
  out += "exec torchrun --nnodes \"$NNODES\" --nproc-per-node \"$GPUS_PER_NODE\" --node-rank \"$NODE_RANK\" \\\n"
         "  --master-addr \"$MASTER_ADDR\" --master-port \"$MASTER_PORT\" \\\n"
         "  --local-ranks-filter 0 --role rank --tee 3 \\\n"
         "  -m torchtitan.train --job.config_file \"$config\"\n";
  return out;
}

}  // namespace parasim::planner
