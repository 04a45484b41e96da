#include "workload/schedule_cache.hpp"

namespace parasim::workload {

const std::vector<std::vector<ScheduleStep>>& ScheduleCache::get(const PipelineShape& s) {
  const Key key{static_cast<int>(s.schedule), s.pp, s.vpp, s.micro_batches, s.pair_forward_backward,
                s.times.forward, s.times.backward, s.times.weight, s.times.transfer};
  {
    std::lock_guard lock(mutex_);
    if (auto it = built_.find(key); it != built_.end()) return it->second;
  }
  // Built outside the lock; a thread that built the same shape meanwhile keeps its copy (map nodes
  // never move, so references handed out stay valid).
  auto steps = pipeline_schedule(s);
  std::lock_guard lock(mutex_);
  return built_.emplace(key, std::move(steps)).first->second;
}

}  // namespace parasim::workload
