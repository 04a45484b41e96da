#pragma once
// Built schedules kept by their shape, for callers that build the same few many times (the
// planner's scan: every candidate's memory is checked under several recompute choices). Shared by
// the threads of a search: a schedule depends on its shape alone, so whichever thread builds it
// first, every thread reads the same steps.
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "workload/schedule.hpp"

namespace parasim::workload {

class ScheduleCache {
 public:
  /// The schedule of `shape`; the reference stays valid as long as the cache.
  const std::vector<std::vector<ScheduleStep>>& get(const PipelineShape& shape);

 private:
  using Key = std::tuple<int, int, int, int, bool, double, double, double, double>;
  std::map<Key, std::vector<std::vector<ScheduleStep>>> built_;
  std::mutex mutex_;
};

}  // namespace parasim::workload
