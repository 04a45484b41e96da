#include <doctest/doctest.h>

#include "planner/pipeline_bubble.hpp"
#include "tests/workload/fixtures.hpp"

using namespace parasim;
using workload::Schedule;

TEST_CASE("the planner's replayed bubble is the schedule's closed form, scaled to the slowest stage's passes, by hand") {
  planner::PipelineBubbles bubbles;
  auto p = test::plan(1, 4, 1, 1, 8);  // pp 4, 8 micro-batches
  // ZB-1P, forward 0.3 s, input gradients 0.4 s, weight gradients 0.3 s a micro-batch on the slowest
  // stage: (pp - 1)(F + B - W) = 3 x 0.4 = 1.2 s.
  p.schedule = Schedule::zb_1p;
  CHECK(planner::replayed_schedule(p));
  CHECK(bubbles.idle(p, 0.3, 0.4, 0.3).bubble == doctest::Approx(1.2));
  // DualPipe with F = B = W = 1/3 s: (PP/2 - 1)(F&B + B - 3W) in DeepSeek's notation, B the full
  // backward: 1 x (1 + 2/3 - 1) = 2/3 s. Its micro-batches pass one of a stage's two copies.
  p.schedule = Schedule::dualpipe;
  // The shares are kept to 0.1% (0.333, 0.333, 0.334): within 0.2% of the figure.
  CHECK(bubbles.idle(p, 1.0 / 3, 1.0 / 3, 1.0 / 3).bubble == doctest::Approx(2.0 / 3).epsilon(0.002));
  // The same shares at twice the time: twice the bubble (the cache keeps shares, not seconds).
  CHECK(bubbles.idle(p, 2.0 / 3, 2.0 / 3, 2.0 / 3).bubble == doctest::Approx(4.0 / 3).epsilon(0.002));
  // Interleaved pp 2 x vpp 2 with the all-to-all overlap, 4 micro-batches: stage 0 warms up with
  // (2-0-1)·2 + (2-1)·2 + 1 = 5 of its 8 forwards and pairs 3; stage 1 warms up with 3 and pairs 5:
  // half of the 16 forwards run paired.
  auto q = test::plan(1, 2, 1, 1, 4);
  q.schedule = Schedule::interleaved_1f1b;
  q.vpp = 2;
  q.overlap.ep_comm = true;
  CHECK(bubbles.idle(q, 1, 1, 1).paired == doctest::Approx(0.5));
  q.overlap.ep_comm = false;
  CHECK_FALSE(planner::replayed_schedule(q));
}
