#pragma once
// The idle time of a pipeline schedule that has no closed form (ZB-1P, ZB-2P, ZB-V, DualPipe,
// DualPipe-V) or pairs forwards with backwards (the MoE all-to-all overlap): the schedule built and
// replayed (workload/pipeline_replay.hpp) with the slowest stage's pass times, cached by the
// schedule's shape and the passes' shares of a micro-batch's time (to 0.1%).
#include <map>
#include <tuple>

#include "workload/plan.hpp"

namespace parasim::planner {

struct PipelineIdle {
  double bubble = 0;  ///< idle seconds of the busiest stage: makespan − micro-batches × its work
  double paired = 0;  ///< share of the forwards that run paired with a backward (F&B)
};

class PipelineBubbles {
 public:
  /// With forward, input-gradient and weight-gradient seconds of one micro-batch on the slowest
  /// stage (over all its chunks that one micro-batch passes).
  PipelineIdle idle(const workload::Plan& plan, double forward, double backward, double weight);

 private:
  using Key = std::tuple<int, int, int, int, int, bool, int, int>;
  std::map<Key, PipelineIdle> cache_;  // per unit of a micro-batch's work
};

/// True for the schedules this prices (the others keep their closed forms).
bool replayed_schedule(const workload::Plan& plan);

}  // namespace parasim::planner
