#include "planner/megatron_deepspeed_launch.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

#include "planner/deepspeed_rules.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Recompute;

std::optional<std::string> megatron_deepspeed_plan_problem(const Plan& plan, const workload::ModelSpec& model) {
  if (auto why = deepspeed_plan_problem(plan)) return why;
  if (model.is_moe()) return std::string("parasim does not write DeepSpeed-MoE launches (Megatron-DeepSpeed's --num-experts) yet");
  if (model.is_mla()) return std::string("Megatron-DeepSpeed's GPT model has no multi-head latent attention");
  if (!plan.recompute_overrides.empty()) return std::string("Megatron-DeepSpeed recomputes every layer alike, not ranges of layers");
  if (plan.recomputes_selectively() && !plan.recompute_modules.is_default()) {
    return fmt::format("Megatron-DeepSpeed's selective recompute reruns the attention core only, not {}", plan.recompute_modules.joined());
  }
  if (plan.recompute == Recompute::full && plan.recompute_method == workload::RecomputeMethod::block && plan.pp > 1) {
    return std::string("DeepSpeed's pipeline engine has no block recompute method (uniform only)");
  }
  return std::nullopt;
}

namespace {

struct Group {
  MegatronArgumentGroup group;
  Group& add(std::string flag, std::string value = "") {
    group.arguments.push_back({std::move(flag), std::move(value)});
    return *this;
  }
  Group& add(std::string flag, long long value) { return add(std::move(flag), std::to_string(value)); }
};

MegatronArgumentGroup model_arguments(const workload::ModelSpec& m, int seq_len) {
  Group g{{"MODEL_ARGS", {}}};
  g.add("--num-layers", m.layers).add("--hidden-size", m.hidden).add("--ffn-hidden-size", m.ffn_hidden).add("--num-attention-heads", m.heads);
  if (m.kv_heads != m.heads) g.add("--num-key-value-heads", m.kv_heads);
  g.add("--seq-length", seq_len).add("--max-position-embeddings", std::max(seq_len, m.max_position));
  if (m.position == workload::PositionEmbedding::rope) g.add("--use-rotary-position-embeddings").add("--no-position-embedding");
  if (m.norm == workload::Norm::rmsnorm) g.add("--normalization", "rmsnorm");
  if (m.activation == workload::Activation::swiglu) g.add("--swiglu");
  if (!m.bias) g.add("--disable-bias-linear");
  if (!m.tied_embeddings) g.add("--untie-embeddings-and-output-weights");
  g.add("--attention-dropout", "0").add("--hidden-dropout", "0");
  return g.group;
}

MegatronArgumentGroup parallel_arguments(const Plan& p, const workload::TrainingSpec& tr) {
  Group g{{"PARALLEL_ARGS", {}}};
  g.add("--tensor-model-parallel-size", p.tp).add("--pipeline-model-parallel-size", p.pp);
  // Without a pipeline the model is not DeepSpeed's PipelineModule, whose engine refuses ZeRO-2/3.
  if (p.pp == 1) g.add("--no-pipeline-parallel");
  if (p.tp > 1 && p.sp) g.add("--sequence-parallel");
  if (p.cp > 1) g.add("--ds-sequence-parallel-size", p.cp);
  g.add("--zero-stage", p.zero);
  if (tr.attention == workload::AttentionKernel::flash) g.add("--use-flash-attn-v2");
  switch (p.recompute) {
    case Recompute::none: break;
    case Recompute::selective: g.add("--recompute-granularity", "selective"); break;
    case Recompute::full:
      g.add("--recompute-granularity", "full")
          .add("--recompute-method", p.recompute_method == workload::RecomputeMethod::block ? "block" : "uniform")
          .add("--recompute-num-layers", p.recompute_layers);
      break;
  }
  g.add("--deepspeed").add("--deepspeed_config", "$HERE/ds_config.json");
  return g.group;
}

MegatronArgumentGroup training_arguments(const Plan& p, const workload::TrainingSpec& tr, int train_iters) {
  Group g{{"TRAINING_ARGS", {}}};
  g.add("--micro-batch-size", p.micro_batch).add("--global-batch-size", p.global_batch).add("--train-iters", train_iters);
  g.add("--lr", "3e-4").add("--min-lr", "3e-5").add("--lr-decay-style", "cosine").add("--lr-warmup-iters", std::min(10, train_iters / 2));
  g.add("--weight-decay", "0.1").add("--adam-beta1", "0.9").add("--adam-beta2", "0.95").add("--clip-grad", "1.0").add("--init-method-std", "0.02");
  g.add(tr.precision == Precision::fp16 ? "--fp16" : "--bf16");
  g.add("--log-interval", 1).add("--eval-iters", 0).add("--eval-interval", train_iters);
  return g.group;
}

MegatronArgumentGroup data_arguments(const workload::ModelSpec& m) {
  Group g{{"DATA_ARGS", {}}};
  g.add("--data-path", "$DATA_PATH").add("--split", "100,0,0").add("--tokenizer-type", "NullTokenizer").add("--vocab-size", m.vocab);
  return g.group;
}

}  // namespace

MegatronLaunch megatron_deepspeed_launch(const Plan& plan, const workload::ModelSpec& model, const workload::TrainingSpec& training, int train_iters) {
  if (auto why = megatron_deepspeed_plan_problem(plan, model)) throw std::invalid_argument("Megatron-DeepSpeed cannot run this plan: " + *why);
  if (training.precision == Precision::fp8) throw std::invalid_argument("Megatron-DeepSpeed cannot run this plan: it has no fp8 training");
  MegatronLaunch launch;
  launch.groups = {model_arguments(model, training.seq_len), parallel_arguments(plan, training), training_arguments(plan, training, train_iters),
                   data_arguments(model)};
  if (plan.pp > 1 && !plan.chunk_layers.empty()) {
    launch.notes.push_back("priced with the layer split of the plan; Megatron-DeepSpeed's pipeline engine partitions type:transformer (evenly)");
  }
  if (plan.zero == 3 && training.zero3_engine != workload::Zero3Engine::deepspeed) {
    launch.notes.push_back("priced as FSDP runs ZeRO-3; training.zero3_engine: deepspeed prices it as DeepSpeed runs it");
  }
  return launch;
}

std::string megatron_deepspeed_script(const MegatronLaunch& launch, const LaunchHeader& h) {
  std::string out = "#!/bin/bash\n";
  for (const auto& line : h.lines) out += "# " + line + "\n";
  out += fmt::format("# Targets Megatron-DeepSpeed {} (deepspeedai/Megatron-DeepSpeed) on DeepSpeed v0.19.5: its pretrain_gpt.py,\n", kMegatronDeepSpeedCommit);
  out += "# its argument names, and ds_config.json from this folder.\n";
  for (const auto& n : launch.notes) out += "# note: " + n + "\n";
  out += "#\n# Run on every node where Megatron-DeepSpeed and DeepSpeed are installed, with ds_config.json beside this script:\n";
  out += fmt::format("#   MEGATRON_DEEPSPEED=/path/to/Megatron-DeepSpeed DATA_PATH=<dataset prefix>{} bash launch_megatron_deepspeed.sh\n",
                     h.nodes > 1 ? fmt::format(" MASTER_ADDR=<node 0> NODE_RANK=<0..{}>", h.nodes - 1) : "");
  out += "# It reads DATA_PATH's token ids with a null tokenizer of the model's vocabulary (a benchmark of the plan); for\n"
         "# training, replace the tokenizer arguments with the dataset's own (--tokenizer-type HFTokenizer --tokenizer-model NAME).\n";
  out += "set -euo pipefail\n\n" + torchrun_node_variables(h);
  out += "MEGATRON_DEEPSPEED=${MEGATRON_DEEPSPEED:-/workspace/Megatron-DeepSpeed}\n";
  out += "HERE=$(cd \"$(dirname \"$0\")\" && pwd)\n";
  out += "DATA_PATH=${DATA_PATH:?set DATA_PATH to a Megatron-format dataset prefix (path/name without .bin/.idx)}\n\n";
  out += torchrun_arrays_and_command(launch, "\"$MEGATRON_DEEPSPEED/pretrain_gpt.py\"");
  return out;
}

}  // namespace parasim::planner
