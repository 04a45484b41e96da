#include <doctest/doctest.h>

#include "planner/recompute_choice.hpp"

using namespace parasim::planner;

namespace {
// Per layer: keep (0 s, 10 B), selective (1 s, 6 B), full (3 s, 1 B).
std::vector<LayerOption> options() { return {{0, 10}, {1, 6}, {3, 1}}; }
}  // namespace

TEST_CASE("everything kept when it fits") {
  const auto c = choose_within_budget({options(), options()}, 20);
  REQUIRE(c);
  CHECK(*c == std::vector<int>{0, 0});
}

TEST_CASE("the cheapest mix under the budget") {
  // Four layers, budget 24 B. Options per layer (s, B): keep (0, 10), selective (1, 6), full (3, 1).
  // Keeping two needs the other two at 4 B: full + full (2 B, 6 s) → 22 B, 6 s. One kept, three
  // selective: 28 B, too much. One kept, two selective, one full: 23 B, 5 s. No keep: four selective
  // 24 B, 4 s — the best.
  const auto c = choose_within_budget({options(), options(), options(), options()}, 24);
  REQUIRE(c);
  double seconds = 0, bytes = 0;
  for (int o : *c) {
    seconds += options()[static_cast<std::size_t>(o)].seconds;
    bytes += options()[static_cast<std::size_t>(o)].bytes;
  }
  CHECK(bytes <= 24);
  CHECK(seconds == doctest::Approx(4).scale(0));
}

TEST_CASE("nothing fits: no choice") {
  CHECK_FALSE(choose_within_budget({options(), options()}, 1.5));
  CHECK_FALSE(choose_within_budget({options()}, -1));
}

TEST_CASE("rounding never lets a choice exceed the budget") {
  std::vector<std::vector<LayerOption>> layers(50, {{0, 1.7}, {1, 0.3}});
  // 50 layers at 0.3 B at least: 15 B. Steps of budget / max(64, 16 · 50) still find a choice.
  for (double budget : {15.5, 33.3, 50.0, 84.9}) {
    const auto c = choose_within_budget(layers, budget, 64);
    REQUIRE(c);
    double bytes = 0;
    for (int o : *c) bytes += layers[0][static_cast<std::size_t>(o)].bytes;
    CHECK(bytes <= budget + 1e-9);
  }
}
