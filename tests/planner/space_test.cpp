#include <doctest/doctest.h>

#include <set>

#include "planner/space.hpp"

using namespace parasim::planner;

TEST_CASE("Galvatron's decision-tree space has its published sizes") {
  // 8 GPUs, by pipeline degree: pp8 one GPU (1); pp4 dp2/sdp2/tp2 (3); pp2 three one-level trees
  // of degree 4 and 3·2 ordered two-level trees of 2×2 (9); pp1 three of degree 8, 3·2 ordered pairs
  // × 2 splits of 8 (12) and 3! orders of 2×2×2 (6): 1 + 3 + 9 + 21 = 34. Without DP and SDP
  // together: 1 + 3 + (3 + 4) + (3 + 8) = 22.
  CHECK(galvatron_space(8, true).size() == 34);
  CHECK(galvatron_space(8, false).size() == 22);
  CHECK(galvatron_space(16, true).size() == 73);
  CHECK(galvatron_space(16, false).size() == 37);
  CHECK(galvatron_space(32, true).size() == 136);
  CHECK(galvatron_space(32, false).size() == 56);
  CHECK(galvatron_space(64, true).size() == 229);
  CHECK(galvatron_space(64, false).size() == 79);
}

TEST_CASE("every strategy uses its group exactly, each method at most once, and has its own name") {
  for (int gpus : {8, 16, 64}) {
    std::set<std::string> names;
    for (const auto& s : galvatron_space(gpus, true)) {
      int product = 1;
      std::set<Method> used;
      for (const auto& l : s.levels) {
        product *= l.degree;
        CHECK(l.degree >= 2);
        CHECK(used.insert(l.method).second);
      }
      CHECK(product * s.pp == gpus);
      CHECK(names.insert(strategy_name(s)).second);
    }
  }
}

TEST_CASE("strategy names say the innermost level") {
  const LayerStrategy s{1, {{Method::tp, 2}, {Method::dp, 4}}};
  CHECK(strategy_name(s) == "pp1 · tp2×dp4 (tp inner)");
  CHECK(strategy_name(LayerStrategy{8, {}}) == "pp8 · (one GPU)");
  CHECK(s.degree(Method::dp) == 4);
  CHECK(s.degree(Method::sdp) == 1);
}

TEST_CASE("a GPU count that is not a power of two has no Galvatron space") { CHECK(galvatron_space(12, true).empty()); }
