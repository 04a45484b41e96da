// The steady state of a long pipeline: which replays stand for the iteration, and the line through them.
#include <doctest/doctest.h>

#include "sim/simulator.hpp"
#include "sim/steady_state.hpp"

using namespace parasim;
using namespace parasim::sim;

namespace {

workload::Plan pipeline(int pp, int dp, int micro_batch, int global_batch) {
  workload::Plan p;
  p.pp = pp;
  p.dp = dp;
  p.micro_batch = micro_batch;
  p.global_batch = global_batch;
  return p;
}

// A result whose every figure is a + b·m at m micro-batches.
Result at(int m) {
  Result r;
  r.iteration = Seconds(2.0 + 0.5 * m);
  r.hardware_flops = 1e15 * m;
  r.tasks = 100 + 10 * static_cast<std::size_t>(m);
  r.events = 300 + 30 * static_cast<std::size_t>(m);
  StageBreakdown s;
  s.forward = Seconds(0.1 * m);
  s.backward = Seconds(0.2 * m);
  s.bubble = Seconds(1.5 + 0.05 * m);
  s.exposed[1] = Seconds(0.3);
  r.stages = {s};
  r.critical_path = {{"mlp backward_input", Seconds(0.15 * m)}, {"dp reduce_scatter", Seconds(0.3)}};
  return r;
}

}  // namespace

TEST_CASE("three replays of whole rounds on m's residue, the first after two warm rounds") {
  // pp 4, 100 micro-batches: rounds of 4; replays of 8, 12 and 16 micro-batches; (100 − 16) / 4 = 21
  // rounds added; 36 micro-batches replayed, under half of 100.
  const auto runs = steady_runs(pipeline(4, 2, 1, 200));
  REQUIRE(runs);
  CHECK(runs->round == 4);
  CHECK(runs->micro_batches == std::array<int, 3>{8, 12, 16});
  CHECK(runs->rounds_added == 21);
  // 102 micro-batches: the replays move to the residue (102 − 18 = 84 = 21 rounds).
  const auto shifted = steady_runs(pipeline(4, 1, 1, 102));
  REQUIRE(shifted);
  CHECK(shifted->micro_batches == std::array<int, 3>{10, 14, 18});
  CHECK(shifted->rounds_added == 21);
  // Six warm rounds: 24, 28, 32 of 400 (84 replayed would be over half of 100).
  CHECK_FALSE(steady_runs(pipeline(4, 2, 1, 200), 6));
  const auto later = steady_runs(pipeline(4, 2, 1, 800), 6);
  REQUIRE(later);
  CHECK(later->micro_batches == std::array<int, 3>{24, 28, 32});
  CHECK(later->rounds_added == 92);
  // No pipeline: rounds of one micro-batch.
  const auto alone = steady_runs(pipeline(1, 8, 1, 800));
  REQUIRE(alone);
  CHECK(alone->micro_batches == std::array<int, 3>{2, 3, 4});
}

TEST_CASE("short pipelines and a smaller last micro-batch are replayed whole") {
  CHECK_FALSE(steady_runs(pipeline(4, 2, 1, 2 * 60)));  // 60 micro-batches: 36 replayed is over half
  CHECK_FALSE(steady_runs(pipeline(4, 2, 1, 2 * 12)));  // fewer than four rounds
  CHECK_FALSE(steady_runs(pipeline(4, 2, 2, 2 * 2 * 100 - 1)));  // the last micro-batch holds one sample
}

TEST_CASE("extrapolation continues every figure along the line through the replays") {
  SteadyRuns runs;
  runs.round = 4;
  runs.micro_batches = {8, 12, 16};
  runs.rounds_added = 21;  // to 100 micro-batches
  const auto whole = extrapolate({at(8), at(12), at(16)}, runs);
  REQUIRE(whole);
  const Result expected = at(100);
  CHECK(whole->iteration.value() == doctest::Approx(expected.iteration.value()).epsilon(1e-12));
  CHECK(whole->stages[0].forward.value() == doctest::Approx(10.0).epsilon(1e-12));
  CHECK(whole->stages[0].bubble.value() == doctest::Approx(6.5).epsilon(1e-12));
  CHECK(whole->stages[0].exposed[1].value() == doctest::Approx(0.3).epsilon(1e-12));
  CHECK(whole->hardware_flops == doctest::Approx(1e17).epsilon(1e-12));
  CHECK(whole->tasks == 1100);
  CHECK(whole->events == 3300);
  CHECK(whole->extrapolated_rounds == 21);
  REQUIRE(whole->critical_path.size() == 2);
  CHECK(whole->critical_path[0].what == "mlp backward_input");
  CHECK(whole->critical_path[0].time.value() == doctest::Approx(15.0).epsilon(1e-12));
}

TEST_CASE("replays whose steps differ by more than a millionth of the iteration are not extrapolated") {
  SteadyRuns runs;
  runs.round = 4;
  runs.micro_batches = {8, 12, 16};
  runs.rounds_added = 21;
  auto bent = at(16);
  bent.stages[0].bubble += Seconds(1e-4 * bent.iteration.value());  // the last round idles a little more
  CHECK_FALSE(extrapolate({at(8), at(12), bent}, runs));
  auto settled = at(16);
  settled.iteration += Seconds(1e-8 * settled.iteration.value());  // rounding, not a trend
  CHECK(extrapolate({at(8), at(12), settled}, runs));
}
