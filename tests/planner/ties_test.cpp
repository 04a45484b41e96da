#include <doctest/doctest.h>

#include <cmath>

#include "planner/ties.hpp"

using namespace parasim::planner;
using parasim::workload::Plan;

TEST_CASE("tie groups: each group holds the times within e^difference of its fastest") {
  // difference ln(1.05): 1.00 and 1.04 tie; 1.06 starts group 2, which takes 1.10 (within 5% of 1.06); 1.20 is group 3.
  const auto g = tie_groups({1.00, 1.04, 1.06, 1.10, 1.20}, std::log(1.05));
  CHECK(g == std::vector<int>{1, 1, 2, 2, 3});
  CHECK(tie_groups({}, 0.1).empty());
  CHECK(tie_groups({2.0, 2.0}, 0.0) == std::vector<int>{1, 1});
}

TEST_CASE("a plan's complexity counts context parallelism, interleaving, an uneven split and the model-parallel dimensions") {
  Plan p;
  CHECK(complexity(p) == 0);
  CHECK(complexity_text(p).empty());
  p.tp = 8;
  CHECK(complexity(p) == 1);
  p.pp = 4;
  p.vpp = 5;
  p.cp = 2;
  p.chunk_layers = std::vector<int>(20, 4);
  CHECK(complexity(p) == 1 + 1 + 3);  // cp, interleaving, tp·pp·cp
  p.chunk_layers.front() = 3;
  CHECK(complexity(p) == 1 + 1 + 1 + 3);
  CHECK(complexity_text(p) == "context parallelism, interleaving, an uneven layer split, 3 model-parallel dimensions");
}

TEST_CASE("the recommendation: among launchable plans tied with the fastest launchable, the memory margin, then the simpler, then the faster") {
  const double gib = 1024.0 * 1024 * 1024;
  const double tie = std::log(1.05);
  std::vector<TieCandidate> c{
      {3.40, 9 * gib, 2, false},  // fastest found, not launchable
      {3.45, 0.1 * gib, 1, true},  // fastest launchable, nearly no margin
      {3.50, 9 * gib, 5, true},    // tied, margin, complex
      {3.55, 9 * gib, 3, true},    // tied, margin, simpler: recommended
      {3.70, 20 * gib, 0, true},   // beyond the tie: never, however simple
  };
  auto r = recommend(c, tie, 8 * gib);
  CHECK(r.fastest == 1);
  CHECK(r.tied == std::vector<int>{1, 2, 3});
  CHECK(r.index == 3);
  // Without a margin wanted, the simplest tied plan wins.
  CHECK(recommend(c, tie, 0).index == 1);
  // Nothing launchable: no recommendation.
  for (auto& x : c) x.eligible = false;
  CHECK(recommend(c, tie, 0).index == -1);
}
