#pragma once
// Where one pipeline stage's simulated iteration went: its compute by phase, the communication it
// waited for by dimension, and the rest (bubble), from the replay's task times.
#include <cstdint>
#include <vector>

#include "sim/result.hpp"
#include "workload/task_graph.hpp"

namespace parasim::sim {

/// One end of a task's interval on a stage: a compute task's (kind 0) or a collective's (1 + its
/// CommDim), noted in time order as the replay's clock reaches it.
struct StageEdge {
  std::int64_t time;
  int delta;  ///< +1 at the start, -1 at the end
  int kind;
};

/// The task times of one replay, in picoseconds, indexed by task.
struct TaskTimes {
  const std::vector<std::int64_t>& start;
  const std::vector<std::int64_t>& finish;
};

/// The breakdown of `stage` (its tasks in id order, its edges in time order) over [0, end).
/// An idle gap before a compute task goes to what that task waited for: the chain of dependencies
/// that finished last, through the stage's own communication and the pipeline transfer that fed
/// it, each link's time in the gap exposed in its dimension; what the chain does not cover (the
/// waits on other stages' compute) is bubble. After the stage's last compute, communication still
/// open is exposed (split evenly between dimensions open at once) and the rest is bubble.
StageBreakdown stage_breakdown(int stage, const std::vector<std::uint32_t>& tasks, const workload::TaskGraph& g, TaskTimes times,
                               const std::vector<StageEdge>& edges, std::int64_t end);

}  // namespace parasim::sim
