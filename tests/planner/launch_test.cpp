#include <doctest/doctest.h>

#include <algorithm>

#include "core/error.hpp"
#include "core/schema.hpp"
#include "core/yaml_node.hpp"
#include "planner/launch.hpp"
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
bool has(const std::vector<std::string>& args, const std::string& a) { return std::find(args.begin(), args.end(), a) != args.end(); }
}  // namespace

TEST_CASE("Megatron-LM arguments name every degree, the batch and the recompute") {
  const auto m = test::gpt175b();
  const auto args = megatron_arguments(megatron_plan(), m, test::training(2048));
  CHECK(has(args, "--tensor-model-parallel-size 8"));
  CHECK(has(args, "--sequence-parallel"));
  CHECK(has(args, "--pipeline-model-parallel-size 8"));
  // 96 layers over 8 stages × 3 chunks: 4 layers per virtual stage.
  CHECK(has(args, "--num-layers-per-virtual-pipeline-stage 4"));
  CHECK(has(args, "--micro-batch-size 1"));
  CHECK(has(args, "--global-batch-size 1536"));
  CHECK(has(args, "--recompute-granularity selective"));
  CHECK(has(args, "--use-distributed-optimizer"));
  CHECK(has(args, "--overlap-grad-reduce"));
}

TEST_CASE("Megatron-LM arguments carry the loss and gradient-accumulation kernels the plan was priced with") {
  const auto m = test::gpt175b();
  auto tr = test::training(2048);
  auto args = megatron_arguments(megatron_plan(), m, tr);
  // Megatron-LM's defaults: unfused loss, gradient accumulation fused into the wgrad GEMMs.
  CHECK_FALSE(has(args, "--cross-entropy-loss-fusion"));
  CHECK_FALSE(has(args, "--no-gradient-accumulation-fusion"));
  tr.cross_entropy = workload::CrossEntropy::fused;
  tr.gradient_accumulation_fusion = false;
  tr.precision = Precision::fp16;
  args = megatron_arguments(megatron_plan(), m, tr);
  CHECK(has(args, "--cross-entropy-loss-fusion"));
  CHECK(has(args, "--no-gradient-accumulation-fusion"));
  // fp16 keeps gradients in fp16 unless asked: the plan's fp32 accumulation needs the flag.
  CHECK(has(args, "--accumulate-allreduce-grads-in-fp32"));
}

TEST_CASE("Megatron-LM arguments read back into the same plan") {
  const auto m = test::gpt175b();
  const auto p = megatron_plan();
  std::string line;
  for (const auto& a : megatron_arguments(p, m, test::training(2048))) {
    if (a.rfind("#", 0) != 0) line += a + " ";
  }
  const Plan back = plan_from_megatron_arguments(line + " --num-layers 96 --hidden-size 12288", m, 1024, 2048);
  CHECK(back == p);
}

TEST_CASE("a ZeRO-3 plan says Megatron-LM cannot run it and gets a DeepSpeed config") {
  auto p = megatron_plan();
  p.zero = 3;
  const auto args = megatron_arguments(p, test::gpt175b(), test::training(2048));
  CHECK(std::any_of(args.begin(), args.end(), [](const std::string& a) { return a.find("# zero 3") == 0; }));
  const auto ds = deepspeed_config(p, test::training(2048));
  CHECK(ds["zero_optimization"]["stage"] == 3);
  // 1536 samples over dp 16 in micro-batches of 1: 96 accumulation steps.
  CHECK(ds["gradient_accumulation_steps"] == 96);
  CHECK(ds["train_batch_size"] == 1536);
}

TEST_CASE("bad Megatron-LM arguments are errors that name the argument") {
  const auto m = test::gpt175b();
  CHECK_THROWS_WITH_AS(plan_from_megatron_arguments("--tensor-model-parallel-size x --global-batch-size 8", m, 8, 2048),
                       "parasim: error: --from-megatron-args: --tensor-model-parallel-size: 'x' is not a whole number", InputError);
  CHECK_THROWS_WITH_AS(plan_from_megatron_arguments("--tensor-model-parallel-size 3 --global-batch-size 8", m, 8, 2048),
                       "parasim: error: --from-megatron-args: --tensor-model-parallel-size: tp 3 x pp 1 x cp 1 = 3 does not divide the 8 GPUs", InputError);
  CHECK_THROWS_WITH_AS(plan_from_megatron_arguments("--num-layers 40 --global-batch-size 8", m, 8, 2048),
                       "parasim: error: --from-megatron-args: --num-layers: 40 layers, but gpt-175b has 96", InputError);
  CHECK_THROWS_AS(plan_from_megatron_arguments("--tensor-model-parallel-size 8", m, 8, 2048), InputError);
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
