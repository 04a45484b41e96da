#include <doctest/doctest.h>

#include "sim/fluid.hpp"

#include <algorithm>
#include <vector>

using parasim::sim::FluidModel;

TEST_CASE("two flows sharing one link each get half and finish at 2·S/B") {
  // B = 100 units/s, S = 50 units each: alone a flow would take 0.5 s; together 2·50/100 = 1 s.
  FluidModel f;
  const auto link = f.add_resource(100);
  const auto a = f.start(50, {{link, 1}});
  const auto b = f.start(50, {{link, 1}});
  CHECK(f.rate(a) == doctest::Approx(50).scale(0));
  CHECK(f.rate(b) == doctest::Approx(50).scale(0));
  CHECK(f.next_completion() == doctest::Approx(1.0).scale(0));
  std::vector<FluidModel::ActivityId> done;
  f.advance(1.0, done);
  CHECK(done == std::vector<FluidModel::ActivityId>{a, b});
  CHECK(f.running_count() == 0);
}

TEST_CASE("max-min fairness: a flow limited elsewhere leaves its share to the other") {
  // Flow a crosses links 1 (cap 100) and 2 (cap 30); flow b only link 1. a is held to 30 by link 2,
  // b takes the remaining 70 of link 1.
  FluidModel f;
  const auto l1 = f.add_resource(100), l2 = f.add_resource(30);
  const auto a = f.start(10, {{l1, 1}, {l2, 1}});
  const auto b = f.start(10, {{l1, 1}});
  CHECK(f.rate(a) == doctest::Approx(30).scale(0));
  CHECK(f.rate(b) == doctest::Approx(70).scale(0));
}

TEST_CASE("weights count symmetric copies: one flow standing for 8 through one link") {
  // A class of 8 identical flows on a 50-unit link moves 50/8 per flow.
  FluidModel f;
  const auto nic = f.add_resource(50);
  const auto a = f.start(1, {{nic, 8}});
  CHECK(f.rate(a) == doctest::Approx(50.0 / 8).scale(0));
}

TEST_CASE("caps and efficiency; rates recover when a sharer finishes") {
  FluidModel f;
  const auto link = f.add_resource(100);
  const auto a = f.start(100, {{link, 1}}, 20);  // capped at 20
  const auto b = f.start(40, {{link, 1}});
  CHECK(f.rate(a) == doctest::Approx(20).scale(0));
  CHECK(f.rate(b) == doctest::Approx(80).scale(0));
  // b finishes after 40/80 = 0.5 s; then a is still capped at 20.
  std::vector<FluidModel::ActivityId> done;
  CHECK(f.next_completion() == doctest::Approx(0.5).scale(0));
  f.advance(0.5, done);
  CHECK(done == std::vector<FluidModel::ActivityId>{b});
  CHECK(f.remaining(a) == doctest::Approx(90).scale(0));
  f.set_cap(a, FluidModel::kUnlimited);
  CHECK(f.rate(a) == doctest::Approx(100).scale(0));
  f.set_efficiency(a, 0.5);
  CHECK(f.rate(a) == doctest::Approx(50).scale(0));
  // A compute activity: no resources, rate = cap.
  const auto c = f.start(2.0, {}, 1.0 / 1.25);
  CHECK(f.rate(c) == doctest::Approx(0.8).scale(0));
}

TEST_CASE("independent components keep their rates") {
  FluidModel f;
  const auto l1 = f.add_resource(10), l2 = f.add_resource(20);
  const auto a = f.start(1, {{l1, 1}});
  const auto b = f.start(1, {{l2, 1}});
  CHECK(f.rate(a) == doctest::Approx(10).scale(0));
  CHECK(f.rate(b) == doctest::Approx(20).scale(0));
  const auto c = f.start(1, {{l2, 1}});
  CHECK(f.rate(a) == doctest::Approx(10).scale(0));
  CHECK(f.rate(b) == doctest::Approx(10).scale(0));
  CHECK(f.rate(c) == doctest::Approx(10).scale(0));
}

TEST_CASE("a finished activity's id is not reused before the next advance") {
  FluidModel f;
  const auto link = f.add_resource(10);
  const auto a = f.start(1, {{link, 1}});
  std::vector<FluidModel::ActivityId> done;
  f.advance(0.1, done);
  REQUIRE(done == std::vector<FluidModel::ActivityId>{a});
  // The caller still maps `a` to its task while it starts new work: `a` must stay unique.
  const auto b = f.start(1, {{link, 1}});
  CHECK(b != a);
  done.clear();
  f.advance(0.1, done);
  CHECK(done == std::vector<FluidModel::ActivityId>{b});
  CHECK(f.start(1, {}, 1.0) == a);  // now it may be reused
}

TEST_CASE("a resource whose users are all fixed limits no one, whatever rounding leaves of its weight") {
  // R (3 units) is shared by a (weight 0.1) and b (0.2): both fixed at 3/0.3 = 10, after which R's
  // weight is a rounding residue (0.1 + 0.2 − 0.1 − 0.2 ≈ 4e-17) over a capacity left near 0. c shares
  // S (100 units) with a's small use of it and must get what S has left, 100 − 0.001·10 = 99.99; a
  // residue taken for a live user would have set a level that fixes no one and left c at rate 0.
  FluidModel f;
  const auto r = f.add_resource(3.0), s = f.add_resource(100.0);
  const auto a = f.start(1.0, {{r, 0.1}, {s, 0.001}});
  const auto b = f.start(1.0, {{r, 0.2}});
  const auto c = f.start(1.0, {{s, 1.0}});
  CHECK(f.rate(a) == doctest::Approx(10.0).scale(0));
  CHECK(f.rate(b) == doctest::Approx(10.0).scale(0));
  CHECK(f.rate(c) == doctest::Approx(99.99).scale(0));
}

TEST_CASE("work left follows each activity when others finish around it, and a reused id starts afresh") {
  // Three flows on their own links at 10 units/s: 5, 20 and 40 units; the first is done at 0.5 s, and
  // 0.5 s later the others hold 10 and 30. The first's id, reused for a 30-unit flow on the third's
  // link, takes its own usage: the two share it at 5 a second.
  FluidModel f;
  const auto l1 = f.add_resource(10), l2 = f.add_resource(10), l3 = f.add_resource(10);
  const auto a = f.start(5, {{l1, 1}});
  const auto b = f.start(20, {{l2, 1}});
  const auto c = f.start(40, {{l3, 1}});
  std::vector<FluidModel::ActivityId> done;
  f.advance(f.next_completion(), done);
  CHECK(done == std::vector<FluidModel::ActivityId>{a});
  CHECK(f.remaining(a) == 0);
  CHECK(f.remaining(b) == doctest::Approx(15).scale(0));
  CHECK(f.remaining(c) == doctest::Approx(35).scale(0));
  done.clear();
  f.advance(0.5, done);  // the id of a is free only from here
  const auto d = f.start(30, {{l3, 1}});
  CHECK(d == a);
  CHECK(f.remaining(d) == doctest::Approx(30).scale(0));
  CHECK(f.rate(d) == doctest::Approx(5).scale(0));  // l3 shared with c
  CHECK(f.rate(c) == doctest::Approx(5).scale(0));
  CHECK(f.rate(b) == doctest::Approx(10).scale(0));
  // b (10 left) finishes at 1 s, in the middle of the running list; c and d keep theirs.
  CHECK(f.next_completion() == doctest::Approx(1.0).scale(0));
  done.clear();
  f.advance(1.0, done);
  CHECK(done == std::vector<FluidModel::ActivityId>{b});
  CHECK(f.remaining(c) == doctest::Approx(25).scale(0));
  CHECK(f.remaining(d) == doctest::Approx(25).scale(0));
  CHECK(f.running_count() == 2);
}

TEST_CASE("finish times follow rate changes up and down: each activity ends when its work at its rates is done") {
  // Twelve compute activities (no resources, rate = cap = 1) of 0.5, 1.0, ..., 6.0 units. At t = 1 s
  // the even ones slow to efficiency 0.5 and the odd ones speed up to 4 (a cap of 4): one that is not
  // done by then finishes at 1 + (amount - 1) / rate. The queue must reorder on both kinds of change.
  FluidModel f;
  std::vector<FluidModel::ActivityId> ids;
  std::vector<double> expected;
  for (int i = 0; i < 12; ++i) {
    const double amount = 0.5 * (i + 1);
    ids.push_back(f.start(amount, {}, 1.0));
    const double rate = i % 2 == 0 ? 0.5 : 4.0;
    expected.push_back(amount <= 1.0 ? amount : 1.0 + (amount - 1.0) / rate);
  }
  std::vector<double> finished_at(ids.size(), -1.0);
  double now = 0;
  std::vector<FluidModel::ActivityId> done;
  const auto run_until = [&](double limit) {
    while (f.running_count() > 0) {
      const double dt = std::min(f.next_completion(), limit - now);
      done.clear();
      f.advance(dt, done);
      now += dt;
      for (auto a : done) finished_at[a] = now;
      if (now >= limit) break;
    }
  };
  run_until(1.0);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!f.running(ids[i])) continue;
    CHECK(f.remaining(ids[i]) == doctest::Approx(0.5 * static_cast<double>(i + 1) - 1.0));
    if (i % 2 == 0) f.set_efficiency(ids[i], 0.5);
    else f.set_cap(ids[i], 4.0);
  }
  run_until(100.0);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    CAPTURE(i);
    CHECK(finished_at[ids[i]] == doctest::Approx(expected[i]).epsilon(1e-12));
  }
}

TEST_CASE("late in a long simulated iteration, short activities still finish in one event each") {
  // At 10^6 s a double resolves 1.2e-10 s, above the 1e-12 s tolerance: an activity of 3 ps, or one
  // whose finish lies a few units of the clock's last place ahead, must still finish, not stall.
  FluidModel f;
  std::vector<FluidModel::ActivityId> done;
  f.start(1e6, {}, 1.0);
  f.advance(f.next_completion(), done);
  REQUIRE(done.size() == 1);
  for (const double amount : {3e-12, 2.5e-10, 7e-10, 1.0}) {
    CAPTURE(amount);
    const auto a = f.start(amount, {}, 1.0);
    int events = 0;
    done.clear();
    while (f.running(a) && events < 4) {
      f.advance(f.next_completion(), done);
      ++events;
    }
    CHECK(done == std::vector<FluidModel::ActivityId>{a});
    CHECK(events == 1);
  }
}
