#include <doctest/doctest.h>

#include "tests/workload/fixtures.hpp"

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
  CHECK(find_plan_problem(p, m, 4)->message == "every pipeline chunk needs at least one layer");
  p = test::plan(2, 1, 2, 1, 8);
  CHECK(find_plan_problem(p, m, 8)->message == "dp 2 x tp 2 x pp 1 = 4 GPUs, but the cluster has 8");
}
