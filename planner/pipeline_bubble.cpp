#include "planner/pipeline_bubble.hpp"

#include <algorithm>
#include <cmath>

#include "workload/pipeline_replay.hpp"
#include "workload/schedule.hpp"

namespace parasim::planner {

bool replayed_schedule(const workload::Plan& p) {
  using workload::Schedule;
  if (p.pp == 1) return false;
  return p.overlap.ep_comm || p.schedule == Schedule::zb_1p || p.schedule == Schedule::zb_2p || p.schedule == Schedule::zb_v ||
         p.schedule == Schedule::dualpipe || p.schedule == Schedule::dualpipe_v;
}

PipelineIdle PipelineBubbles::idle(const workload::Plan& p, double forward, double backward, double weight) {
  const double all = forward + backward + weight;
  if (all <= 0) return {};
  const int f = static_cast<int>(std::lround(1000 * forward / all)), b = static_cast<int>(std::lround(1000 * backward / all));
  const Key key{static_cast<int>(p.schedule), p.pp, p.vpp, p.micro_batches(), p.microbatch_group_size(), p.overlap.ep_comm, f, b};
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    // One micro-batch's chunk on a stage: the stage's work over the chunks it passes (DualPipe's
    // micro-batches pass one of a stage's two copies).
    const double chunks = p.schedule == workload::Schedule::dualpipe ? 1 : p.vpp;
    auto shape = workload::pipeline_shape(p);
    shape.times = {f / 1000.0 / chunks, b / 1000.0 / chunks, std::max(0, 1000 - f - b) / 1000.0 / chunks, 0};
    const auto steps = workload::pipeline_schedule(shape);
    const auto timing = workload::replay_pipeline(shape, steps);
    const int m = shape.micro_batches;
    int forwards = 0, paired = 0;
    for (const auto& stage : steps) {
      for (const auto& s : stage) {
        forwards += s.pass == workload::Pass::forward;
        paired += s.pass == workload::Pass::forward && s.overlaps_next;
      }
    }
    PipelineIdle unit;
    unit.bubble = std::max(0.0, timing.makespan - m);
    unit.paired = forwards > 0 ? static_cast<double>(paired) / forwards : 0.0;
    it = cache_.emplace(key, unit).first;
  }
  return {it->second.bubble * all, it->second.paired};
}

}  // namespace parasim::planner
