#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <tuple>

#include "sim/fill_search.hpp"

using namespace parasim::sim;
using parasim::workload::Plan;
using parasim::workload::Recompute;

namespace {

// A toy memory model and clock over (recompute, zero, micro_batch), so that each test states which
// combinations fit and how fast they run.
struct Toy {
  std::map<std::tuple<Recompute, int, int>, double> seconds;  // absent: does not fit
  std::map<std::tuple<Recompute, int, int>, double> peak;     // GiB, for the ones that do not fit
  int runs = 0;

  FillEvaluator evaluator() {
    FillEvaluator e;
    e.probe = [this](const Plan& p) {
      const auto key = std::make_tuple(p.recompute, p.zero, p.micro_batch);
      FillProbe probe;
      probe.valid = p.micro_batch != 3;  // a micro-batch of 3 stands for a plan the stack refuses
      probe.fits = seconds.count(key) > 0;
      probe.peak = peak.count(key) ? peak.at(key) : 10.0;
      return probe;
    };
    e.run = [this](const Plan& p) {
      ++runs;
      const auto key = std::make_tuple(p.recompute, p.zero, p.micro_batch);
      return FillRun{seconds.count(key) ? seconds.at(key) : 99.0, 0.4, 0.1, {}};
    };
    return e;
  }
};

FillField recompute_field() {
  return {"recompute", {[](Plan& p) { p.recompute = Recompute::none; }, [](Plan& p) { p.recompute = Recompute::full; }}};
}
FillField zero_field() { return {"zero", {[](Plan& p) { p.zero = 0; }, [](Plan& p) { p.zero = 1; }}}; }
FillField micro_batch_field(std::vector<int> values) {
  FillField f{"micro_batch", {}};
  for (int v : values) f.values.push_back([v](Plan& p) { p.micro_batch = v; });
  return f;
}

}  // namespace

TEST_CASE("the fill search never keeps a value under which nothing fits, and finds what one field at a time misses") {
  // No recompute fits only with ZeRO-1. One field at a time from the given plan (no recompute,
  // zero 0: out of memory) reaches full recompute first and keeps it; the joint search starts from
  // the least recompute that fits and so finds no recompute at ZeRO-1.
  Toy toy;
  toy.seconds = {{{Recompute::full, 0, 1}, 13.0}, {{Recompute::full, 1, 1}, 13.2}, {{Recompute::none, 1, 1}, 10.0}};
  Plan given;
  const auto found = joint_fill_search(given, {recompute_field(), zero_field()}, toy.evaluator());
  CHECK(found.plan.recompute == Recompute::none);
  CHECK(found.plan.zero == 1);
  CHECK(found.probe.fits);
  CHECK(found.run.time == 10.0);
  // Only plans that fit were simulated, each once.
  CHECK(toy.runs == 2);
  REQUIRE(found.steps.size() >= 2);
  CHECK(found.steps[0].field == "given");
  CHECK_FALSE(found.steps[0].probe.fits);
  CHECK_FALSE(found.steps[0].run);
  for (const auto& step : found.steps) CHECK((!step.kept || step.probe.fits));
}

TEST_CASE("the fill search revisits a field after another moves") {
  // From the given plan (fits): micro-batch 2 is slower at zero 0 but the fastest at zero 1, which
  // the search reaches only after the micro-batch was first tried.
  Toy toy;
  toy.seconds = {{{Recompute::none, 0, 1}, 10.0}, {{Recompute::none, 0, 2}, 10.5}, {{Recompute::none, 1, 1}, 9.5}, {{Recompute::none, 1, 2}, 8.0}};
  Plan given;
  const auto found = joint_fill_search(given, {micro_batch_field({1, 2}), zero_field()}, toy.evaluator());
  CHECK(found.plan.micro_batch == 2);
  CHECK(found.plan.zero == 1);
  CHECK(found.run.time == 8.0);
  CHECK(found.steps.front().field == "given");
  CHECK(found.steps.front().kept);
  CHECK(found.steps.back().kept);
}

TEST_CASE("where nothing fits the fill search reports the plan needing the least memory, out of memory") {
  Toy toy;
  toy.peak = {{{Recompute::none, 0, 1}, 90.0}, {{Recompute::full, 0, 1}, 82.0}, {{Recompute::none, 1, 1}, 85.0}, {{Recompute::full, 1, 1}, 81.0}};
  Plan given;
  const auto found = joint_fill_search(given, {recompute_field(), zero_field()}, toy.evaluator());
  CHECK_FALSE(found.probe.fits);
  CHECK(found.plan.recompute == Recompute::full);
  CHECK(found.plan.zero == 1);
  CHECK(found.probe.peak == 81.0);
  CHECK(toy.runs == 1);
  CHECK(found.steps.back().field == "least memory");
  CHECK(found.steps.back().kept);
}

TEST_CASE("the fill search skips plans the stack refuses and reports none when every one is refused") {
  Toy toy;
  toy.seconds = {{{Recompute::none, 0, 1}, 10.0}, {{Recompute::none, 0, 4}, 9.0}};
  Plan given;
  const auto found = joint_fill_search(given, {micro_batch_field({1, 3, 4})}, toy.evaluator());
  CHECK(found.plan.micro_batch == 4);
  for (const auto& step : found.steps) CHECK(step.plan.micro_batch != 3);

  Toy refused;
  given.micro_batch = 3;
  const auto none = joint_fill_search(given, {micro_batch_field({3})}, refused.evaluator());
  CHECK(std::isinf(none.run.time));
  CHECK(none.steps.empty());
  CHECK(refused.runs == 0);
}
