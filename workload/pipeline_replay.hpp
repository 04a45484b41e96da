#pragma once
// A schedule's timing with abstract pass times: every stage runs its steps in order, each as soon as
// its input is there (a forward after the chunk before it in the micro-batch's path, plus a transfer
// where that chunk ran on another stage; a backward after its own forward and the backward of the
// chunk after it; a weight step after its backward). An F&B pair starts when both of its inputs are
// there and runs the two one after the other. What the closed forms of the schedules are checked
// against, and how the planner prices the schedules that have none.
#include <vector>

#include "workload/schedule.hpp"

namespace parasim::workload {

struct PipelineTiming {
  double makespan = 0;               ///< every stage starting at 0, to the last pass's end
  std::vector<double> first_start;   ///< per stage
  std::vector<double> last_end;      ///< per stage
  /// Qi et al.'s measure: the longest time a stage spends from its first pass to its last.
  double longest_span() const;
};

/// Throws std::logic_error when the steps deadlock (a stage waits on a pass that never runs).
PipelineTiming replay_pipeline(const PipelineShape& shape, const std::vector<std::vector<ScheduleStep>>& steps);

}  // namespace parasim::workload
