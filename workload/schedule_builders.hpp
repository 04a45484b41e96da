#pragma once
// The schedules that are built for all stages together (internal to workload/schedule.cpp).
#include <vector>

#include "workload/schedule.hpp"

namespace parasim::workload {

/// ZB-1P (limit pp) and ZB-2P (limit 2·pp): Qi et al.'s heuristic under a limit of `limit`
/// micro-batches' activations on each stage (a forward adds one, its weight step frees it).
std::vector<std::vector<ScheduleStep>> zero_bubble_schedule(int pp, int micro_batches, const PassTimes& times, int limit);

/// ZB-V: Qi et al.'s V-shaped greedy schedule under a limit of `limit` half-size chunks' activations.
std::vector<std::vector<ScheduleStep>> zbv_schedule(int pp, int micro_batches, const PassTimes& times, int limit);

/// DualPipe over pp ranks (pp even, micro_batches even and at least 2·pp) and DualPipe-V over pp
/// ranks (micro_batches at least 2·pp), as deepseek-ai/DualPipe issues them.
std::vector<std::vector<ScheduleStep>> dualpipe_schedule(int pp, int micro_batches);
std::vector<std::vector<ScheduleStep>> dualpipe_v_schedule(int pp, int micro_batches);

}  // namespace parasim::workload
