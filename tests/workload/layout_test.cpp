#include <doctest/doctest.h>

#include "tests/workload/fixtures.hpp"
#include "workload/layout.hpp"

using namespace parasim;
using namespace parasim::workload;

TEST_CASE("Megatron-LM's default order tp, cp, dp, pp: ranks and groups by hand") {
  // tp 2, cp 2, dp 2, pp 2 = 16 GPUs: rank = t + 2·c + 4·d + 8·s.
  auto p = test::plan(2, 2, 2, 1, 8);
  p.cp = 2;
  const RankLayout l(p);
  CHECK(l.size() == 16);
  CHECK(l.rank(1, 1, 1, 1) == 1 + 2 + 4 + 8);
  // Data rank j = c + cp·d: j = 3 is (c 1, d 1).
  CHECK(l.rank(0, 3, 0) == 6);
  CHECK(l.tp_group(3, 1) == std::vector<int>{14, 15});
  CHECK(l.cp_group(0, 1, 0) == std::vector<int>{4, 6});
  // Gradients are reduced over dp·cp = 4 ranks.
  CHECK(l.dp_group(1, 0) == std::vector<int>{1, 3, 5, 7});
  // Expert parallelism over ep = 2 consecutive data ranks; experts replicated over the others.
  CHECK(l.ep_group(0, 3, 0, 2) == std::vector<int>{4, 6});
  CHECK(l.expert_dp_group(0, 3, 0, 2, 2) == std::vector<int>{2, 6});
  // Experts split over etp = 1 of the 2 TP ranks: both TP ranks hold them whole.
  CHECK(l.expert_dp_group(0, 3, 0, 2, 1) == std::vector<int>{2, 3, 6, 7});
  CHECK(l.etp_group(1, 3, 1, 2) == std::vector<int>{14, 15});
  CHECK(l.pp_group(0, 1) == std::vector<int>{2, 10});
}

TEST_CASE("a plan that leaves cp out of its order gets it after tp; other orders move it") {
  auto p = test::plan(2, 1, 2, 1, 8);
  p.cp = 2;
  p.order = {ParallelDim::tp, ParallelDim::dp, ParallelDim::pp};
  const RankLayout l(p);
  CHECK(l.cp_group(0, 0, 0) == std::vector<int>{0, 2});
  // [cp, tp, dp, pp]: CP ranks adjacent, TP ranks 2 apart.
  p.order = {ParallelDim::cp, ParallelDim::tp, ParallelDim::dp, ParallelDim::pp};
  const RankLayout c(p);
  CHECK(c.cp_group(0, 0, 0) == std::vector<int>{0, 1});
  CHECK(c.tp_group(0, 0) == std::vector<int>{0, 2});
}
