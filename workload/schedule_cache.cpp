#include "workload/schedule_cache.hpp"

namespace parasim::workload {

const std::vector<std::vector<ScheduleStep>>& ScheduleCache::get(const PipelineShape& s) {
  const Key key{static_cast<int>(s.schedule), s.pp, s.vpp, s.micro_batches, s.pair_forward_backward,
                s.times.forward, s.times.backward, s.times.weight, s.times.transfer};
  auto it = built_.find(key);
  if (it == built_.end()) it = built_.emplace(key, pipeline_schedule(s)).first;
  return it->second;
}

}  // namespace parasim::workload
