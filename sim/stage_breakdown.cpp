#include "sim/stage_breakdown.hpp"

#include <algorithm>
#include <array>

namespace parasim::sim {
namespace {

using workload::CommDim;
using workload::Phase;
using workload::Task;
using workload::TaskGraph;
using workload::TaskKind;

constexpr double kPicosecond = 1e-12;

void add_compute(StageBreakdown& b, const Task& task, double seconds) {
  switch (task.phase) {
    case Phase::forward: b.forward += Seconds(seconds); break;
    case Phase::backward_input:
    case Phase::backward_weight: b.backward += Seconds(seconds); break;
    case Phase::recompute: b.recompute += Seconds(seconds); break;
    case Phase::optimizer: b.optimizer += Seconds(seconds); break;
  }
}

// The dependency of `task` that finished last (the one it started after), or -1 without any.
std::int64_t binding_dependency(const TaskGraph& g, std::uint32_t task, const std::vector<std::int64_t>& finish) {
  std::int64_t best = -1;
  for (const auto d : g.dependencies(task)) {
    if (best < 0 || finish[d] > finish[static_cast<std::size_t>(best)]) best = d;
  }
  return best;
}

// The idle gap [from, to) that ended when compute task `next` started, charged to what it waited
// for. A stage waiting for its own communication (a TP all-reduce, a ZeRO gather queued behind a
// reduce-scatter) or for the pipeline transfer that brings its input is exposed to it for the time
// that transfer ran inside the gap; a stage waiting for another stage's compute (pipeline fill and
// drain) is in a bubble, whatever collectives happen to be open meanwhile.
void charge_gap(StageBreakdown& b, int stage, std::uint32_t next, std::int64_t from, std::int64_t to, const TaskGraph& g, TaskTimes times) {
  std::int64_t exposed = 0;
  std::int64_t cursor = to;
  std::uint32_t waiting = next;
  while (cursor > from) {
    const auto d = binding_dependency(g, waiting, times.finish);
    if (d < 0 || times.finish[static_cast<std::size_t>(d)] <= from) break;
    const auto dep = static_cast<std::uint32_t>(d);
    const Task& task = g.tasks[dep];
    if (task.kind == TaskKind::compute) {
      // Only an instantaneous task of this stage ends inside its idle gap; look through it.
      if (task.stage != stage) break;
    } else {
      if (task.stage != stage && task.dim != CommDim::pp) break;
      const std::int64_t lo = std::max(from, times.start[dep]);
      const std::int64_t hi = std::min(cursor, times.finish[dep]);
      if (hi > lo) {
        b.exposed[static_cast<std::size_t>(task.dim)] += Seconds(static_cast<double>(hi - lo) * kPicosecond);
        exposed += hi - lo;
      }
      cursor = std::min(cursor, lo);
      // What another stage's transfer waited for is that stage's own time.
      if (task.stage != stage) break;
    }
    waiting = dep;
  }
  b.bubble += Seconds(static_cast<double>(to - from - exposed) * kPicosecond);
}

// After the stage's last compute: its communication still open is exposed (split evenly between
// the dimensions open at once), the rest is waiting for the other stages.
void charge_tail(StageBreakdown& b, const std::vector<StageEdge>& edges, std::int64_t from, std::int64_t end) {
  std::array<int, 1 + workload::kCommDims> open{};
  std::int64_t last = from;
  auto account = [&](std::int64_t until) {
    const double span = static_cast<double>(until - last) * kPicosecond;
    int dims = 0;
    for (int k = 1; k <= workload::kCommDims; ++k) dims += open[static_cast<std::size_t>(k)] > 0;
    if (dims == 0) {
      b.bubble += Seconds(span);
      return;
    }
    for (int k = 1; k <= workload::kCommDims; ++k) {
      if (open[static_cast<std::size_t>(k)] > 0) b.exposed[static_cast<std::size_t>(k - 1)] += Seconds(span / dims);
    }
  };
  for (const auto& e : edges) {
    if (e.time > last) {
      account(e.time);
      last = e.time;
    }
    open[static_cast<std::size_t>(e.kind)] += e.delta;
  }
  if (end > last) account(end);
}

}  // namespace

StageBreakdown stage_breakdown(int stage, const std::vector<std::uint32_t>& tasks, const TaskGraph& g, TaskTimes times,
                               const std::vector<StageEdge>& edges, std::int64_t end) {
  StageBreakdown b;
  b.stage = stage;
  std::vector<std::uint32_t> computes;
  for (const std::uint32_t t : tasks) {
    const Task& task = g.tasks[t];
    if (task.kind != TaskKind::compute || times.finish[t] <= times.start[t]) continue;
    add_compute(b, task, static_cast<double>(times.finish[t] - times.start[t]) * kPicosecond);
    computes.push_back(t);
  }
  std::sort(computes.begin(), computes.end(), [&](std::uint32_t x, std::uint32_t y) {
    return times.start[x] != times.start[y] ? times.start[x] < times.start[y] : x < y;
  });
  std::int64_t busy_until = 0;
  for (const std::uint32_t c : computes) {
    if (times.start[c] > busy_until) charge_gap(b, stage, c, busy_until, times.start[c], g, times);
    busy_until = std::max(busy_until, times.finish[c]);
  }
  charge_tail(b, edges, busy_until, end);
  return b;
}

}  // namespace parasim::sim
