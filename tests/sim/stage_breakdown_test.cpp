#include "sim/stage_breakdown.hpp"

#include <algorithm>
#include <doctest/doctest.h>

using namespace parasim;
using workload::CommDim;
using workload::Task;
using workload::TaskGraph;
using workload::TaskKind;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000'000;

struct Timed {
  Task task;
  std::vector<std::uint32_t> deps;
  double start, finish;  // seconds
};

Task compute(int stage) {
  Task t;
  t.kind = TaskKind::compute;
  t.phase = workload::Phase::forward;
  t.stage = stage;
  return t;
}

Task collective(int stage, CommDim dim) {
  Task t;
  t.kind = TaskKind::collective;
  t.dim = dim;
  t.stage = stage;
  return t;
}

// The breakdown of `stage` for hand-timed tasks, with the edges the replay would note.
sim::StageBreakdown breakdown_of(const std::vector<Timed>& timed, int stage, double end) {
  TaskGraph g;
  g.stages = 2;
  std::vector<std::int64_t> start, finish;
  std::vector<std::uint32_t> own;
  std::vector<sim::StageEdge> edges;
  for (std::uint32_t i = 0; i < timed.size(); ++i) {
    Task t = timed[i].task;
    t.deps_begin = static_cast<std::uint32_t>(g.deps.size());
    g.deps.insert(g.deps.end(), timed[i].deps.begin(), timed[i].deps.end());
    t.deps_end = static_cast<std::uint32_t>(g.deps.size());
    g.tasks.push_back(t);
    start.push_back(static_cast<std::int64_t>(timed[i].start * kSecond));
    finish.push_back(static_cast<std::int64_t>(timed[i].finish * kSecond));
    if (t.stage != stage) continue;
    own.push_back(i);
    const int kind = t.kind == TaskKind::compute ? 0 : 1 + static_cast<int>(t.dim);
    edges.push_back({start.back(), +1, kind});
    edges.push_back({finish.back(), -1, kind});
  }
  std::stable_sort(edges.begin(), edges.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  return sim::stage_breakdown(stage, own, g, sim::TaskTimes{start, finish}, edges, static_cast<std::int64_t>(end * kSecond));
}

double exposed(const sim::StageBreakdown& b, CommDim d) { return b.exposed[static_cast<std::size_t>(d)].value(); }

}  // namespace

TEST_CASE("a stage's idle time goes to what its next compute waited for, not to whatever was open") {
  // Stage 1 of two: a ZeRO-3 gather runs 0-3 s while stage 0 computes the first forward (0-4 s) and
  // the activation travels 4-5 s; its forward runs 5-7 s; its reduce-scatter 7-9 s and the gather
  // queued behind it on the same stream 9-10 s hold the next forward to 10-11 s; a last all-reduce
  // runs 11-13 s; the iteration ends at 14 s.
  const std::vector<Timed> timed{
      {compute(0), {}, 0, 4},                            // 0: stage 0's forward
      {collective(1, CommDim::pp), {0}, 4, 5},           // 1: the activation's transfer
      {collective(1, CommDim::dp), {}, 0, 3},            // 2: a parameter gather
      {compute(1), {1, 2}, 5, 7},                        // 3: forward
      {collective(1, CommDim::dp), {3}, 7, 9},           // 4: reduce-scatter
      {collective(1, CommDim::dp), {4, 3}, 9, 10},       // 5: gather, behind 4 on its stream
      {compute(1), {5, 3}, 10, 11},                      // 6: forward
      {collective(1, CommDim::dp), {6}, 11, 13},         // 7: the last reduction
  };
  const auto b = breakdown_of(timed, 1, 14);
  CHECK(b.forward.value() == doctest::Approx(3));
  // The fill (0-4 s) waited on stage 0's compute: bubble, though the gather was open for 3 s of it.
  // The transfer itself (4-5 s) is exposed pipeline communication.
  CHECK(exposed(b, CommDim::pp) == doctest::Approx(1));
  // 7-10 s: the gather and the reduce-scatter it queued behind (3 s); 11-13 s: the reduction after
  // the last compute (2 s).
  CHECK(exposed(b, CommDim::dp) == doctest::Approx(5));
  CHECK(b.bubble.value() == doctest::Approx(4 + 1));
  CHECK(b.compute().value() + exposed(b, CommDim::pp) + exposed(b, CommDim::dp) + b.bubble.value() == doctest::Approx(14));
}

TEST_CASE("a transfer that starts inside the gap is exposed only for the time it ran there") {
  // Stage 1 computes 0-1 s, then waits for a TP all-reduce that starts only at 2 s (its input came
  // from a pipeline transfer of stage 0 at 1.5-2 s) and ends at 3 s; the next compute runs 3-4 s.
  const std::vector<Timed> timed{
      {compute(1), {}, 0, 1},                            // 0
      {compute(0), {}, 0, 1.5},                          // 1: stage 0
      {collective(0, CommDim::pp), {1}, 1.5, 2},         // 2: sent from stage 0's side
      {collective(1, CommDim::tp), {2, 0}, 2, 3},        // 3
      {compute(1), {3, 0}, 3, 4},                        // 4
  };
  const auto b = breakdown_of(timed, 1, 4);
  CHECK(exposed(b, CommDim::tp) == doctest::Approx(1));
  // The transfer fed the all-reduce: its 0.5 s is pipeline time; before it, stage 0 was computing.
  CHECK(exposed(b, CommDim::pp) == doctest::Approx(0.5));
  CHECK(b.bubble.value() == doctest::Approx(0.5));
}
