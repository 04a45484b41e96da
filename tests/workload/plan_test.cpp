#include <doctest/doctest.h>

#include "tests/workload/fixtures.hpp"
#include "workload/microbatch_group.hpp"

using namespace parasim;
using namespace parasim::workload;

TEST_CASE("plans a pipeline cannot run are problems, as values") {
  const auto m = test::small_gpt(8);
  auto p = test::plan(1, 4, 1, 1, 8);
  CHECK_FALSE(find_plan_problem(p, m, 4).has_value());
  p.vpp = 4;
  p.schedule = Schedule::interleaved_1f1b;
  // 16 chunks for 8 layers.
  CHECK(find_plan_problem(p, m, 4)->key == "vpp");
  p.chunk_layers = std::vector<int>(16, 0);
  p.chunk_layers[0] = 8;
  CHECK(find_plan_problem(p, m, 4)->message == "every pipeline chunk between the first and the last needs at least one layer");
  // The first chunk may hold the embedding alone and the last the head alone (Megatron-Core's "E|…|L").
  p.vpp = 2;
  p.chunk_layers = {0, 1, 2, 1, 1, 1, 2, 0};
  CHECK_FALSE(find_plan_problem(p, m, 4).has_value());
  // ZB-H1 defers the weight gradients, the embedding's backward's only work.
  p.vpp = 1;
  p.schedule = Schedule::zb_h1;
  p.chunk_layers = {0, 3, 3, 2};
  CHECK(find_plan_problem(p, m, 4)->message == "a first chunk with the embedding alone needs a schedule that does not defer weight gradients, not zb-h1");
  p.schedule = Schedule::one_f_one_b;
  CHECK_FALSE(find_plan_problem(p, m, 4).has_value());
  p = test::plan(2, 1, 2, 1, 8);
  CHECK(find_plan_problem(p, m, 8)->message == "dp 2 x tp 2 x pp 1 = 4 GPUs, but the cluster has 8");
}

TEST_CASE("interleaved 1F1B's micro-batch groups: at least pp, and a last group of none or at least pp") {
  // Megatron-Core's checks: pp <= N <= m, and m mod N is 0 or at least pp.
  CHECK(smallest_microbatch_group(8, 4) == 4);
  CHECK(smallest_microbatch_group(6, 4) == 6);   // 6 mod 4 = 2, 6 mod 5 = 1 leave too few
  CHECK(smallest_microbatch_group(10, 4) == 5);
  CHECK(smallest_microbatch_group(7, 2) == 4);   // groups of 4 and 3
  CHECK(smallest_microbatch_group(3, 4) == 0);   // fewer micro-batches than stages
  // PyTorch's ScheduleInterleaved1F1B: max(1, m / pp) equal rounds.
  CHECK(pytorch_interleaved_group(8, 4) == 4);   // 2 rounds of 4
  CHECK(pytorch_interleaved_group(10, 4) == 5);  // 2 rounds of 5
  CHECK(pytorch_interleaved_group(9, 4) == 0);   // 2 rounds cannot be equal
  CHECK(pytorch_interleaved_group(3, 4) == 3);   // 1 round of fewer than pp
  const auto m = test::small_gpt(8);
  auto p = test::plan(1, 4, 1, 1, 6);
  p.vpp = 2;
  p.schedule = Schedule::interleaved_1f1b;
  CHECK(find_plan_problem(p, m, 4)->message ==
        "interleaved-1f1b: the 6 micro-batches leave a last group of 2, fewer than pp 4 (Megatron-LM); microbatch_group 6 would run them");
  p.microbatch_group = 5;
  CHECK(find_plan_problem(p, m, 4)->key == "microbatch_group");
  p.microbatch_group = 6;
  CHECK_FALSE(find_plan_problem(p, m, 4).has_value());
  p.microbatch_group = 7;
  CHECK(find_plan_problem(p, m, 4)->message == "interleaved-1f1b runs groups of 7 micro-batches, which must lie in [pp 4, the 6 micro-batches] (Megatron-LM)");
  p.vpp = 1;
  p.schedule = Schedule::one_f_one_b;
  p.microbatch_group = 6;
  CHECK(find_plan_problem(p, m, 4)->message == "groups micro-batches of interleaved-1f1b's chunks; the schedule is 1f1b");
}

TEST_CASE("context parallelism: degrees, Ulysses heads and ring's sequence chunks") {
  const auto m = test::llama3_8b();  // 32 heads, 8 key/value heads
  auto p = test::plan(2, 1, 2, 1, 8);
  p.cp = 4;
  // 2 x 1 x 2 x 4 = 16 GPUs.
  CHECK_FALSE(find_plan_problem(p, m, 16, 8192).has_value());
  CHECK(find_plan_problem(p, m, 8)->message == "dp 2 x tp 2 x pp 1 x cp 4 = 16 GPUs, but the cluster has 8");
  // Ring balances the causal work over 2·cp = 8 chunks: 8190 tokens do not split.
  CHECK(find_plan_problem(p, m, 16, 8190)->message ==
        "ring cp 4 needs the sequence (8190) to split into 2 x cp = 8 equal chunks (causal load balancing)");
  // Ulysses: a TP rank holds 16 heads and 4 key/value heads; cp 4 divides both, cp 8 not the latter.
  p.cp_kind = CpKind::ulysses;
  CHECK_FALSE(find_plan_problem(p, m, 16, 8190).has_value());
  p.cp = 8;
  CHECK(find_plan_problem(p, m, 32)->message == "ulysses cp 8 does not divide the 4 key/value heads of a TP rank (8 / tp 2)");
  // The gradient group is dp·cp: ZeRO sharding groups divide it.
  p = test::plan(1, 1, 2, 1, 8);
  p.cp = 2;
  p.zero = 1;
  p.zero_group = 4;
  CHECK_FALSE(find_plan_problem(p, m, 4).has_value());
  p.zero_group = 3;
  CHECK(find_plan_problem(p, m, 4)->message == "zero_group 3 does not divide dp 2 x cp 2");
}

TEST_CASE("an order without cp places it right after tp") {
  using D = ParallelDim;
  CHECK(full_order({D::tp, D::dp, D::pp}) == std::vector<D>{D::tp, D::cp, D::dp, D::pp});
  CHECK(full_order({D::dp, D::tp, D::pp}) == std::vector<D>{D::dp, D::tp, D::cp, D::pp});
  CHECK(full_order({D::pp, D::cp, D::tp, D::dp}) == std::vector<D>{D::pp, D::cp, D::tp, D::dp});
}

TEST_CASE("expert parallelism: within dp·cp, no more ranks than experts") {
  auto m = test::mixtral_8x7b();
  auto p = test::plan(2, 4, 8, 1, 64);  // 64 GPUs: TP2 PP4, dp 8
  p.sp = true;
  p.ep = 8;
  CHECK_FALSE(find_plan_problem(p, m, 64).has_value());
  CHECK(p.expert_tp() == 2);
  CHECK(p.expert_data_ranks() == 1);
  p.ep = 16;
  CHECK(find_plan_problem(p, m, 64)->message == "ep 16 exceeds the 8 experts");
  p.ep = 4;
  p.dp = 2;
  p.cp = 4;
  CHECK_FALSE(find_plan_problem(p, m, 64).has_value());  // dp·cp = 8 holds two EP groups of 4
  p.dp = 6;
  p.cp = 1;
  CHECK(find_plan_problem(p, m, 48)->message ==
        "ep 4 does not divide dp 6 x cp 1 = 6 (expert-parallel groups are carved out of the data-parallel ranks)");
  p = test::plan(2, 1, 4, 1, 8);
  p.ep = 2;
  CHECK(find_plan_problem(p, m, 8)->key == "sp");
  CHECK(find_plan_problem(p, test::llama3_8b(), 8)->message == "ep 2 needs a mixture-of-experts model; llama-3-8b has no experts");
}
