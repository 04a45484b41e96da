#include <doctest/doctest.h>

#include <fstream>
#include <set>

#include "planner/launch.hpp"
#include "plan_shapes.hpp"
#include "planner/megatron_deepspeed_launch.hpp"
#include "sim/scenario.hpp"

using namespace parasim;
using namespace parasim::planner;
using workload::Plan;
using workload::Recompute;

namespace {
// Megatron-DeepSpeed's flags (tests/data/launch, generated from its megatron/arguments.py).
std::set<std::string> known_flags() {
  std::ifstream in("tests/data/launch/megatron-deepspeed-4efb479-arguments.txt");
  std::set<std::string> flags;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#') flags.insert(line);
  }
  return flags;
}

Plan plan(int tp, int pp, int dp, int zero) { return test::plan_of(tp, pp, dp, zero, 2); }

workload::TrainingSpec training(Precision precision) {
  workload::TrainingSpec t;
  t.precision = precision;
  t.seq_len = 4096;
  return t;
}

std::string value(const MegatronLaunch& launch, const std::string& flag) {
  for (const auto& g : launch.groups) {
    for (const auto& a : g.arguments) {
      if (a.flag == flag) return a.value.empty() ? "(set)" : a.value;
    }
  }
  return "";
}
}  // namespace

TEST_CASE("Megatron-DeepSpeed's launch uses its own flag names only, for every plan shape it runs") {
  const auto flags = known_flags();
  REQUIRE(flags.size() > 300);
  const auto llama = sim::load_model("scenarios/models/llama-2-7b.yaml");
  const auto gpt = sim::load_model("scenarios/models/gpt3-175b.yaml");
  auto ulysses = plan(1, 1, 4, 1);
  ulysses.cp = 2;
  ulysses.cp_kind = workload::CpKind::ulysses;
  auto recompute = plan(8, 4, 2, 1);
  recompute.recompute = Recompute::full;
  auto selective = plan(2, 1, 8, 3);
  selective.recompute = Recompute::selective;
  for (const auto& p : {plan(1, 1, 16, 2), plan(8, 4, 2, 1), ulysses, recompute, selective}) {
    for (const auto* m : {&llama, &gpt}) {
      for (const auto& g : megatron_deepspeed_launch(p, *m, training(Precision::bf16)).groups) {
        for (const auto& a : g.arguments) CHECK_MESSAGE(flags.count(a.flag) == 1, a.flag);
      }
    }
  }
}

TEST_CASE("Megatron-DeepSpeed's launch states the plan: ZeRO stage, Ulysses, no pipeline module without a pipeline") {
  const auto llama = sim::load_model("scenarios/models/llama-2-7b.yaml");
  const auto flat = megatron_deepspeed_launch(plan(1, 1, 16, 2), llama, training(Precision::bf16));
  CHECK(value(flat, "--zero-stage") == "2");
  CHECK(value(flat, "--no-pipeline-parallel") == "(set)");
  CHECK(value(flat, "--deepspeed_config") == "$HERE/ds_config.json");
  CHECK(value(flat, "--num-key-value-heads").empty());  // Llama 2 7B: MHA
  CHECK(value(flat, "--normalization") == "rmsnorm");
  auto ulysses = plan(1, 1, 4, 1);
  ulysses.cp = 2;
  ulysses.cp_kind = workload::CpKind::ulysses;
  CHECK(value(megatron_deepspeed_launch(ulysses, llama, training(Precision::bf16)), "--ds-sequence-parallel-size") == "2");
  const auto piped = megatron_deepspeed_launch(plan(8, 4, 2, 1), llama, training(Precision::bf16));
  CHECK(value(piped, "--no-pipeline-parallel").empty());
  CHECK(value(piped, "--sequence-parallel") == "(set)");
  CHECK(value(piped, "--pipeline-model-parallel-size") == "4");
}

TEST_CASE("Megatron-DeepSpeed cannot run: DeepSpeed's refusals, experts, latent attention, recompute ranges, fp8") {
  const auto llama = sim::load_model("scenarios/models/llama-2-7b.yaml");
  CHECK(megatron_deepspeed_plan_problem(plan(1, 2, 8, 3), llama) == deepspeed_plan_problem(plan(1, 2, 8, 3)));
  CHECK(megatron_deepspeed_plan_problem(plan(1, 1, 8, 1), sim::load_model("scenarios/models/mixtral-8x7b.yaml")) ==
        "parasim does not write DeepSpeed-MoE launches (Megatron-DeepSpeed's --num-experts) yet");
  auto ranges = plan(1, 1, 8, 1);
  ranges.recompute_overrides.push_back({0, 3, Recompute::full});
  CHECK(megatron_deepspeed_plan_problem(ranges, llama) == "Megatron-DeepSpeed recomputes every layer alike, not ranges of layers");
  CHECK_THROWS_AS(megatron_deepspeed_launch(plan(1, 1, 8, 1), llama, training(Precision::fp8)), std::invalid_argument);
}
