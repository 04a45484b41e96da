#include <doctest/doctest.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/schema.hpp"
#include "core/yaml_node.hpp"
#include "planner/launch.hpp"
#include "planner/torchtitan_rules.hpp"
#include "tests/topology/fixtures.hpp"
#include "tests/workload/fixtures.hpp"

using namespace parasim;
using namespace parasim::planner;
using workload::Plan;

namespace {
Plan megatron_plan() {
  Plan p;
  p.tp = 8;
  p.sp = true;
  p.pp = 8;
  p.vpp = 3;
  p.dp = 16;
  p.schedule = workload::Schedule::interleaved_1f1b;
  p.zero = 1;
  p.micro_batch = 1;
  p.global_batch = 1536;
  p.recompute = workload::Recompute::selective;
  p.overlap.grad_reduce = true;
  p.overlap.param_gather = true;
  return p;
}

// Every argument as "--flag value" (or "--flag"), and the environment as NAME=value / NAME unset.
std::vector<std::string> words(const MegatronLaunch& l) {
  std::vector<std::string> out;
  for (const auto& g : l.groups) {
    for (const auto& a : g.arguments) out.push_back(a.value.empty() ? a.flag : a.flag + " " + a.value);
  }
  for (const auto& [name, value] : l.environment) out.push_back(value ? name + "=" + *value : name + " unset");
  return out;
}
bool has(const std::vector<std::string>& args, const std::string& a) { return std::find(args.begin(), args.end(), a) != args.end(); }
// Every wanted argument is there, each reported by itself when it is not.
void check_has_all(const std::vector<std::string>& args, std::initializer_list<const char*> wanted) {
  for (const char* a : wanted) CHECK_MESSAGE(has(args, a), a);
}
bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) { return a == flag || a.starts_with(flag + " "); });
}
std::vector<std::string> launch_words(const Plan& p, const workload::ModelSpec& m, const workload::TrainingSpec& tr,
                                      const topology::GpuSpec& gpu = test::h100()) {
  return words(megatron_launch(p, m, tr, gpu));
}
Plan round_trip(const Plan& p, const workload::ModelSpec& m, int seq) {
  const auto text = megatron_argument_line(megatron_launch(p, m, test::training(seq), test::h100()));
  return read_megatron_arguments(text, m, p.gpus(), seq).plan;
}
}  // namespace

TEST_CASE("Megatron-LM's launch names every degree, the batch and the recompute") {
  const auto args = launch_words(megatron_plan(), test::gpt175b(), test::training(2048));
  CHECK(has(args, "--tensor-model-parallel-size 8"));
  CHECK(has(args, "--sequence-parallel"));
  CHECK(has(args, "--pipeline-model-parallel-size 8"));
  // 96 layers in 8 stages x 3 chunks of 4: an even split, given as chunks per rank (Megatron-LM's current flag).
  CHECK(has(args, "--num-virtual-stages-per-pipeline-rank 3"));
  CHECK_FALSE(has_flag(args, "--pipeline-model-parallel-layout"));
  CHECK(has(args, "--micro-batch-size 1"));
  CHECK(has(args, "--global-batch-size 1536"));
  CHECK(has(args, "--recompute-granularity selective"));
  CHECK(has(args, "--use-distributed-optimizer"));
  CHECK(has(args, "--overlap-grad-reduce"));
  CHECK(has(args, "--overlap-param-gather"));
}

TEST_CASE("the launch builds the model: shape, norms, activation, positions, embeddings, vocabulary on mock data") {
  const auto args = launch_words(test::plan(2, 1, 4, 1, 32), test::llama3_8b(), test::training(8192));
  check_has_all(args, {"--num-layers 32", "--hidden-size 4096", "--ffn-hidden-size 14336", "--num-attention-heads 32", "--group-query-attention",
                        "--num-query-groups 8", "--seq-length 8192", "--position-embedding-type rope", "--max-position-embeddings 8192",
                        "--normalization RMSNorm", "--swiglu", "--disable-bias-linear", "--untie-embeddings-and-output-weights", "--attention-dropout 0",
                        "--hidden-dropout 0", "--mock-data", "--tokenizer-type NullTokenizer", "--vocab-size 128256", "--bf16",
                        "--attention-backend fused"});
  // head_dim x heads = hidden: no --kv-channels; nothing reads --use-flash-attn any more.
  CHECK_FALSE(has_flag(args, "--kv-channels"));
  CHECK_FALSE(has_flag(args, "--use-flash-attn"));
  // GPT-3: learned positions need a table as long as the sequence (validate_args: max_position_embeddings >= seq_length).
  const auto gpt = launch_words(test::plan(8, 1, 1, 1, 8), test::gpt175b(), test::training(2048, workload::AttentionKernel::eager));
  CHECK(has(gpt, "--position-embedding-type learned_absolute"));
  CHECK(has(gpt, "--max-position-embeddings 2048"));
  CHECK(has(gpt, "--normalization LayerNorm"));
  CHECK(has(gpt, "--attention-backend unfused"));
  CHECK(has(gpt, "--attention-dropout 0.1"));
  CHECK_FALSE(has_flag(gpt, "--untie-embeddings-and-output-weights"));
  CHECK_FALSE(has_flag(gpt, "--swiglu"));
}

TEST_CASE("an uneven split is printed as Megatron-LM's pipeline layout, equal middle stages folded") {
  auto p = test::plan(8, 16, 128, 1, 2048);
  p.chunk_layers = {7, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 7};
  auto m = test::llama3_8b();
  m.layers = 126;
  const auto args = launch_words(p, m, test::training(8192));
  // validate_args refuses --decoder-first/last-pipeline-num-layers with virtual stages and an even
  // division of 126 by 16 without them: the layout states the split exactly, E and L on the ends.
  CHECK(has(args, "--pipeline-model-parallel-layout Et*7|(t*8|)*14t*7L"));
  CHECK_FALSE(has_flag(args, "--num-virtual-stages-per-pipeline-rank"));
  CHECK_FALSE(has_flag(args, "--decoder-first-pipeline-num-layers"));
  CHECK(round_trip(p, m, 8192) == megatron_form(p, m));

  // Interleaved: pp x vpp entries in pipeline order (chunk c on stage c % pp), the last chunk holds the loss.
  auto q = test::plan(8, 4, 32, 1, 512);
  q.vpp = 5;
  q.schedule = workload::Schedule::interleaved_1f1b;
  q.chunk_layers = {3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5};
  m.layers = 80;
  const auto interleaved = launch_words(q, m, test::training(8192));
  CHECK(has(interleaved, "--pipeline-model-parallel-layout Et*3|(t*4|)*18t*5L"));
  const Plan back = round_trip(q, m, 8192);
  CHECK(back.vpp == 5);
  CHECK(back.chunk_layers == q.chunk_layers);
}

TEST_CASE("an interleaved micro-batch group other than pp is launched, written to plan.yaml, and read back") {
  const auto m = test::gpt175b();
  auto p = megatron_plan();
  p.global_batch = 16 * 12;  // 12 micro-batches a replica over pp 8: groups of 12
  p.microbatch_group = 12;
  CHECK_FALSE(workload::find_plan_problem(p, m, p.gpus(), 2048));
  const auto args = launch_words(p, m, test::training(2048));
  CHECK(has(args, "--microbatch-group-size-per-virtual-pipeline-stage 12"));
  CHECK(round_trip(p, m, 2048) == megatron_form(p, m));
  const auto node = yaml::parse_text(plan_yaml(p, ""), "plan.yaml");
  CHECK(workload::parse_plan(yaml::Record(node, workload::kPlanSchema), m, p.gpus(), 2048) == p);
  // pp itself is Megatron-Core's default: not printed, and read back as the default.
  p.global_batch = 1536;
  p.microbatch_group = 8;
  CHECK_FALSE(has_flag(launch_words(p, m, test::training(2048)), "--microbatch-group-size-per-virtual-pipeline-stage"));
  CHECK(round_trip(p, m, 2048).microbatch_group == 0);
}

TEST_CASE("ZeRO-2 and ZeRO-3 run as Megatron-FSDP, with its checkpoint format and without a single device queue") {
  auto p = test::plan(2, 1, 8, 1, 64);
  p.sp = true;
  p.zero = 3;
  const auto args = launch_words(p, test::llama3_8b(), test::training(4096));
  CHECK(has(args, "--use-megatron-fsdp"));
  CHECK(has(args, "--data-parallel-sharding-strategy optim_grads_params"));
  CHECK(has(args, "--ckpt-format fsdp_dtensor"));
  // validate_args: 'FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset', even with TP.
  CHECK(has(args, "CUDA_DEVICE_MAX_CONNECTIONS unset"));
  p.zero = 2;
  CHECK(has(launch_words(p, test::llama3_8b(), test::training(4096)), "--data-parallel-sharding-strategy optim_grads"));
  CHECK(round_trip(p, test::llama3_8b(), 4096) == megatron_form(p, test::llama3_8b()));
}

TEST_CASE("CUDA_DEVICE_MAX_CONNECTIONS=1 with tensor or context parallelism before Blackwell only") {
  const auto m = test::llama3_8b();
  auto p = test::plan(2, 1, 4, 1, 32);
  CHECK(has(launch_words(p, m, test::training(4096)), "CUDA_DEVICE_MAX_CONNECTIONS=1"));
  auto b200 = test::h100();
  b200.compute_capability = {10, 0};
  CHECK(has(launch_words(p, m, test::training(4096), b200), "CUDA_DEVICE_MAX_CONNECTIONS unset"));
  auto cp = test::plan(1, 1, 2, 1, 32);
  cp.cp = 4;
  cp.dp = 2;
  CHECK(has(launch_words(cp, m, test::training(32768)), "CUDA_DEVICE_MAX_CONNECTIONS=1"));
  CHECK(has(launch_words(test::plan(1, 1, 8, 1, 32), m, test::training(4096)), "CUDA_DEVICE_MAX_CONNECTIONS unset"));
}

TEST_CASE("mixtures of experts launch with the all-to-all dispatcher and grouped GEMMs the simulator prices") {
  auto p = test::plan(2, 4, 8, 1, 256);
  p.sp = true;
  p.ep = 8;
  auto m = test::mixtral_8x7b();
  const auto args = launch_words(p, m, test::training(4096));
  check_has_all(args, {"--num-experts 8", "--moe-router-topk 2", "--moe-ffn-hidden-size 14336", "--expert-model-parallel-size 8",
                        "--moe-token-dispatcher-type alltoall", "--moe-grouped-gemm"});
  CHECK_FALSE(has_flag(args, "--moe-layer-freq"));
  // DeepSeekMoE: a dense first layer and two shared experts.
  m.first_dense_layers = 1;
  m.shared_experts = 2;
  m.shared_expert_ffn_hidden = 1408;
  m.layers = 4;
  p = test::plan(1, 1, 8, 1, 64);
  p.ep = 8;
  const auto ds = launch_words(p, m, test::training(4096));
  CHECK(has(ds, "--moe-layer-freq [0,1,1,1]"));
  CHECK(has(ds, "--moe-shared-expert-intermediate-size 2816"));
  CHECK(round_trip(p, m, 4096) == megatron_form(p, m));
}

TEST_CASE("recompute as Megatron-LM's arguments can say it") {
  const auto m = test::gpt175b();
  auto p = megatron_plan();
  p.recompute = workload::Recompute::none;
  // The first two layers of every chunk (4 layers each) in full: method block, 2 layers.
  for (int c = 0; c < p.chunks(); ++c) p.recompute_overrides.push_back({4 * c, 4 * c + 1, workload::Recompute::full});
  const auto r = megatron_recompute(p, m);
  REQUIRE(r);
  CHECK(r->method == workload::RecomputeMethod::block);
  CHECK(r->layers == 2);
  const auto args = launch_words(p, m, test::training(2048));
  CHECK(has(args, "--recompute-granularity full"));
  CHECK(has(args, "--recompute-method block"));
  CHECK(has(args, "--recompute-num-layers 2"));
  CHECK(round_trip(p, m, 2048) == megatron_form(p, m));
  // Different counts per chunk, or selective beside full, cannot be said: the plan is not launched.
  p.recompute_overrides.push_back({10, 10, workload::Recompute::full});
  CHECK_FALSE(megatron_recompute(p, m));
  CHECK(megatron_plan_problem(p, m));
  p.recompute_overrides = {{0, 3, workload::Recompute::selective}, {4, 95, workload::Recompute::full}};
  CHECK_FALSE(megatron_recompute(p, m));
  CHECK_THROWS_AS(megatron_launch(p, m, test::training(2048), test::h100()), std::invalid_argument);
}

TEST_CASE("what Megatron-LM cannot run is named") {
  const auto m = test::gpt175b();
  auto p = megatron_plan();
  CHECK_FALSE(megatron_plan_problem(p, m));
  p.schedule = workload::Schedule::zb_h1;
  p.vpp = 1;
  CHECK(megatron_plan_problem(p, m)->find("zero-bubble") != std::string::npos);
  p = megatron_plan();
  p.order = {workload::ParallelDim::dp, workload::ParallelDim::tp, workload::ParallelDim::cp, workload::ParallelDim::pp};
  CHECK(megatron_plan_problem(p, m)->find("rank order") != std::string::npos);
  // Pipeline stages inside the data-parallel ranks: Megatron-LM's other mapping.
  p.order = {workload::ParallelDim::tp, workload::ParallelDim::cp, workload::ParallelDim::pp, workload::ParallelDim::dp};
  CHECK_FALSE(megatron_plan_problem(p, m));
  CHECK(has(launch_words(p, m, test::training(2048)), "--use-tp-pp-dp-mapping"));
  CHECK(round_trip(p, m, 2048) == megatron_form(p, m));
  auto bloom = m;
  bloom.position = workload::PositionEmbedding::alibi;
  CHECK(megatron_plan_problem(megatron_plan(), bloom)->find("ALiBi") != std::string::npos);
}

TEST_CASE("Megatron-LM's combination rules the writer keeps") {
  const auto m = test::llama3_8b();
  // --overlap-param-gather needs the distributed optimizer and --overlap-grad-reduce.
  auto p = test::plan(2, 1, 4, 1, 32);
  p.overlap.param_gather = true;
  CHECK_FALSE(has_flag(launch_words(p, m, test::training(4096)), "--overlap-param-gather"));
  // --tp-comm-overlap needs --sequence-parallel.
  p.overlap.tp_comm = true;
  CHECK(megatron_plan_problem(p, m));
  // A sharding group of some data ranks: that many distributed-optimizer instances.
  p = test::plan(1, 1, 8, 1, 32);
  p.zero = 1;
  p.zero_group = 4;
  CHECK(has(launch_words(p, m, test::training(4096)), "--num-distributed-optimizer-instances 2"));
  CHECK(round_trip(p, m, 4096) == p);
  // fp8: Transformer Engine's hybrid format; fp16 accumulates gradients in fp32 only when asked.
  auto tr = test::training(4096);
  tr.precision = Precision::fp8;
  const auto fp8 = launch_words(p, m, tr);
  CHECK(has(fp8, "--bf16"));
  CHECK(has(fp8, "--fp8-format hybrid"));
  CHECK(has(fp8, "--fp8-recipe delayed"));
  tr.precision = Precision::fp16;
  CHECK(has(launch_words(p, m, tr), "--accumulate-allreduce-grads-in-fp32"));
}

TEST_CASE("the launch script exports what the checks need, quotes what a shell would split, and reads back") {
  auto p = test::plan(8, 16, 8, 1, 512);
  p.sp = true;
  p.zero = 1;
  p.chunk_layers = {1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3};
  const auto m = test::llama3_8b();
  const auto launch = megatron_launch(p, m, test::training(8192), test::h100());
  const auto script = megatron_launch_script(launch, {{"a plan", "predicted 1 s"}, 128, 8});
  CHECK(script.starts_with("#!/bin/bash\n# a plan\n# predicted 1 s\n"));
  CHECK(script.find("export CUDA_DEVICE_MAX_CONNECTIONS=1\n") != std::string::npos);
  CHECK(script.find("--pipeline-model-parallel-layout 'Et|(t*2|)*14t*3L'") != std::string::npos);
  CHECK(script.find("NNODES=128\nGPUS_PER_NODE=8\n") != std::string::npos);
  CHECK(script.find("\"$MEGATRON_LM/pretrain_gpt.py\"") != std::string::npos);
  // The shell hands over to torchrun: a runner's timeout then stops torchrun and its workers.
  CHECK(script.find("\nexec torchrun --nnodes \"$NNODES\"") != std::string::npos);
  CHECK(script.find(std::string(kMegatronCommit.substr(0, 7))) != std::string::npos);
  CHECK(read_megatron_arguments(script, m, 1024, 8192).plan == megatron_form(p, m));
  const auto file = megatron_argument_file(launch, {{"a plan"}, 128, 8});
  CHECK(read_megatron_arguments(file, m, 1024, 8192).plan == megatron_form(p, m));
}

TEST_CASE("every flag the writer prints is a current Megatron-LM flag the reader knows") {
  for (const auto& f : megatron_flags()) CHECK(f.name.starts_with("--"));
  CHECK(std::is_sorted(megatron_flags().begin(), megatron_flags().end(), [](const auto& a, const auto& b) { return a.name < b.name; }));
  auto p = megatron_plan();
  p.cp = 2;
  p.dp = 8;
  p.cp_kind = workload::CpKind::ulysses;
  const auto args = launch_words(p, test::gpt175b(), test::training(4096));
  for (const auto& a : args) {
    if (!a.starts_with("--")) continue;
    const auto flag = megatron_flag(a.substr(0, a.find(' ')));
    REQUIRE_MESSAGE(flag, a);
    CHECK(flag->role != FlagRole::legacy);
  }
  CHECK(has(args, "--cp-comm-type a2a"));
}

TEST_CASE("older spellings still read; unknown flags are errors unless ignored") {
  const auto m = test::gpt175b();
  const auto p = megatron_plan();
  const Plan old = read_megatron_arguments("--tensor-model-parallel-size 8 --sequence-parallel --pipeline-model-parallel-size 8 "
                                           "--num-layers-per-virtual-pipeline-stage 4 --micro-batch-size 1 --global-batch-size 1536 "
                                           "--recompute-activations --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather "
                                           "--use-flash-attn --num-layers 96 --hidden-size 12288",
                                           m, 1024, 2048)
                       .plan;
  CHECK(old == p);
  CHECK_THROWS_WITH_AS(read_megatron_arguments("--tensor-model-parallel-size 8 --no-such-flag 3 --global-batch-size 8", m, 8, 2048),
                       "parasim: error: --from-megatron-args: --no-such-flag: is not a Megatron-LM flag parasim knows; --ignore-unknown-flags skips it",
                       InputError);
  const auto lenient = read_megatron_arguments("--tensor-model-parallel-size 8 --no-such-flag 3 --global-batch-size 8", m, 8, 2048, true);
  CHECK(lenient.ignored == std::vector<std::string>{"--no-such-flag"});
  CHECK(lenient.plan.tp == 8);
}

TEST_CASE("bad Megatron-LM arguments are errors that name the argument") {
  const auto m = test::gpt175b();
  CHECK_THROWS_WITH_AS(read_megatron_arguments("--tensor-model-parallel-size x --global-batch-size 8", m, 8, 2048),
                       "parasim: error: --from-megatron-args: --tensor-model-parallel-size: 'x' is not a whole number from 0 to 1e9", InputError);
  CHECK_THROWS_WITH_AS(read_megatron_arguments("--tensor-model-parallel-size 3 --global-batch-size 8", m, 8, 2048),
                       "parasim: error: --from-megatron-args: --tensor-model-parallel-size: tp 3 x pp 1 x cp 1 = 3 does not divide the 8 GPUs", InputError);
  CHECK_THROWS_WITH_AS(read_megatron_arguments("--num-layers 40 --global-batch-size 8", m, 8, 2048),
                       "parasim: error: --from-megatron-args: --num-layers: 40, but gpt-175b has 96", InputError);
  CHECK_THROWS_WITH_AS(read_megatron_arguments("--tensor-model-parallel-size 99999999999 --global-batch-size 8", m, 8, 2048),
                       "parasim: error: --from-megatron-args: --tensor-model-parallel-size: '99999999999' is not a whole number from 0 to 1e9", InputError);
  CHECK_THROWS_AS(read_megatron_arguments("--tensor-model-parallel-size 8", m, 8, 2048), InputError);
  CHECK_THROWS_AS(read_megatron_arguments("--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et*40|t*40L' --global-batch-size 8", m, 8, 2048),
                  InputError);
}

TEST_CASE("a ZeRO-3 plan gets a DeepSpeed config") {
  auto p = megatron_plan();
  p.zero = 3;
  const auto ds = deepspeed_config(p, test::training(2048));
  CHECK(ds["zero_optimization"]["stage"] == 3);
  // 1536 samples over dp 16 in micro-batches of 1: 96 accumulation steps.
  CHECK(ds["gradient_accumulation_steps"] == 96);
  CHECK(ds["train_batch_size"] == 1536);
}

TEST_CASE("the plan YAML reads back as the same plan") {
  const auto m = test::gpt175b();
  auto p = megatron_plan();
  p.recompute = workload::Recompute::none;
  p.recompute_overrides = {{0, 5, workload::Recompute::full}, {90, 95, workload::Recompute::selective}};
  p.chunk_layers = {3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5};
  const auto text = plan_yaml(p, "a comment\nover two lines");
  CHECK(text.rfind("# a comment\n# over two lines\n", 0) == 0);
  const auto node = yaml::parse_text(text, "plan.yaml");
  const Plan back = workload::parse_plan(yaml::Record(node, workload::kPlanSchema), m, 1024, 2048);
  CHECK(back == p);
}

TEST_CASE("selective recompute by module is launched as --recompute-modules and reads back") {
  const auto m = test::deepseek_v3();
  // DeepSeek-V3 over 64 GPUs, one expert-parallel group, the distributed optimizer.
  Plan p = test::plan(1, 1, 64, 1, 64);
  p.ep = 64;
  p.zero = 1;
  p.recompute = workload::Recompute::selective;
  p.recompute_modules = workload::RecomputeModules::of({workload::RecomputeModule::mla_up_proj, workload::RecomputeModule::mlp});
  auto tr = test::training(4096);
  const auto args = launch_words(p, m, tr);
  CHECK(has(args, "--recompute-granularity selective"));
  // A list flag: each module its own word on the command line, in Megatron-Core's order.
  CHECK(has(args, "--recompute-modules mlp mla_up_proj"));
  CHECK(megatron_argument_line(megatron_launch(p, m, tr, test::h100())).find("--recompute-modules mlp mla_up_proj") != std::string::npos);
  CHECK(round_trip(p, m, 4096) == megatron_form(p, m));
  // The default (core_attn alone) is Megatron-Core's own: not printed.
  p.recompute_modules = workload::RecomputeModules();
  CHECK_FALSE(has_flag(launch_words(p, m, tr), "--recompute-modules"));
  // Delayed fp8 scaling cannot recompute the experts' activation or the norms: current scaling then.
  tr.precision = Precision::fp8;
  CHECK(has(launch_words(p, m, tr), "--fp8-recipe delayed"));
  p.recompute_modules = workload::RecomputeModules::of({workload::RecomputeModule::moe_act});
  CHECK(has(launch_words(p, m, tr), "--fp8-recipe tensorwise"));
  // The plan file says the modules and reads back.
  const auto node = yaml::parse_text(plan_yaml(p, ""), "plan.yaml");
  CHECK(workload::parse_plan(yaml::Record(node, workload::kPlanSchema), m, p.gpus(), 4096) == p);
  // A command line with modules under full recompute: Megatron-LM ignores them, so does the reader.
  const auto read = read_megatron_arguments(
      "--tensor-model-parallel-size 1 --micro-batch-size 1 --global-batch-size 64 --recompute-granularity full --recompute-method uniform "
      "--recompute-num-layers 1 --recompute-modules mlp moe_act",
      m, 64, 4096);
  CHECK(read.plan.recompute == workload::Recompute::full);
  CHECK(read.plan.recompute_modules.is_default());
  CHECK_THROWS_AS(read_megatron_arguments("--global-batch-size 64 --recompute-granularity selective --recompute-modules mlp qkv", m, 64, 4096),
                  InputError);
}

TEST_CASE("torchtitan and Megatron-DeepSpeed name the modules they cannot recompute; DeepSpeed's config is silent on them") {
  Plan p;
  p.dp = 8;
  p.global_batch = 8;
  p.recompute = workload::Recompute::selective;
  CHECK_FALSE(torchtitan_plan_problem(p));
  CHECK_FALSE(megatron_deepspeed_plan_problem(p, test::llama3_8b()));
  p.recompute_modules = workload::RecomputeModules::of({workload::RecomputeModule::mlp});
  CHECK(torchtitan_plan_problem(p).value_or("").find("no modules") != std::string::npos);
  CHECK(megatron_deepspeed_plan_problem(p, test::llama3_8b()).value_or("").find("attention core only") != std::string::npos);
  // DeepSpeed's own config says nothing of recompute: it is written for such a plan.
  CHECK_FALSE(deepspeed_plan_problem(p));
}
