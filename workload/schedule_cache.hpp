#pragma once
// Built schedules kept by their shape, for callers that build the same few many times (the
// planner's scan: every candidate's memory is checked under several recompute choices). A value:
// each search thread owns one.
#include <map>
#include <tuple>
#include <vector>

#include "workload/schedule.hpp"

namespace parasim::workload {

class ScheduleCache {
 public:
  const std::vector<std::vector<ScheduleStep>>& get(const PipelineShape& shape);

 private:
  using Key = std::tuple<int, int, int, int, bool, double, double, double, double>;
  std::map<Key, std::vector<std::vector<ScheduleStep>>> built_;
};

}  // namespace parasim::workload
