#include <doctest/doctest.h>

#include "planner/launch.hpp"
#include "plan_shapes.hpp"

using namespace parasim;
using namespace parasim::planner;
using workload::Plan;
using workload::Schedule;

namespace {
Plan plan(int tp, int pp, int dp, int zero) { return test::plan_of(tp, pp, dp, zero); }
}  // namespace

TEST_CASE("DeepSpeed runs 1F1B pipelines with ZeRO-1 at most, and data parallelism with any stage") {
  CHECK_FALSE(deepspeed_plan_problem(plan(1, 1, 8, 3)));
  CHECK_FALSE(deepspeed_plan_problem(plan(2, 4, 8, 1)));
  CHECK_FALSE(deepspeed_plan_problem(plan(2, 4, 8, 0)));
}

TEST_CASE("DeepSpeed cannot run: an interleaved pipeline, another schedule, ZeRO-2/3 with a pipeline, ring attention") {
  auto interleaved = plan(1, 4, 8, 1);
  interleaved.vpp = 2;
  interleaved.schedule = Schedule::interleaved_1f1b;
  CHECK(deepspeed_plan_problem(interleaved) == "DeepSpeed's pipeline engine has no interleaved schedule (virtual pipeline stages)");
  auto zero_bubble = plan(1, 4, 8, 1);
  zero_bubble.schedule = Schedule::zb_1p;
  CHECK(deepspeed_plan_problem(zero_bubble) == "DeepSpeed's pipeline engine runs 1F1B only, not zb-1p");
  CHECK(deepspeed_plan_problem(plan(1, 2, 8, 2)) == "DeepSpeed's pipeline engine refuses ZeRO-2 with pipeline parallelism (ZeRO-1 at most)");
  CHECK(deepspeed_plan_problem(plan(1, 2, 8, 3)) == "DeepSpeed's pipeline engine refuses ZeRO-3 with pipeline parallelism (ZeRO-1 at most)");
  auto ring = plan(1, 1, 8, 1);
  ring.cp = 2;
  ring.cp_kind = workload::CpKind::ring;
  CHECK(deepspeed_plan_problem(ring) == "DeepSpeed runs context parallelism as Ulysses (sequence_parallel_size), not ring attention");
  ring.cp_kind = workload::CpKind::ulysses;
  CHECK_FALSE(deepspeed_plan_problem(ring));
}

TEST_CASE("a Ulysses plan's ds_config carries both mesh sizes deepspeed.initialize reads; others carry neither") {
  workload::TrainingSpec tr;
  auto ulysses = plan(1, 1, 8, 2);
  ulysses.cp = 4;
  ulysses.cp_kind = workload::CpKind::ulysses;
  const auto c = deepspeed_config(ulysses, tr);
  CHECK(c.at("data_parallel_size") == 8);
  CHECK(c.at("sequence_parallel_size") == 4);
  CHECK(c.at("train_batch_size") == 64);
  CHECK(c.at("train_micro_batch_size_per_gpu") == 1);
  CHECK(c.at("gradient_accumulation_steps") == 8);  // 64 / (1 x 8)
  const auto plain = deepspeed_config(plan(1, 1, 8, 2), tr);
  CHECK_FALSE(plain.contains("data_parallel_size"));
  CHECK_FALSE(plain.contains("sequence_parallel_size"));
  // With TP the (data, sequence) mesh of 8 x 4 would not cover the 64 ranks: Megatron-DeepSpeed's mpu
  // gives the groups, and the keys stay out.
  auto with_tp = ulysses;
  with_tp.tp = 2;
  CHECK_FALSE(deepspeed_config(with_tp, tr).contains("sequence_parallel_size"));
}
