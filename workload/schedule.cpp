#include "workload/schedule.hpp"

#include <algorithm>

namespace parasim::workload {

int warmup_steps(Schedule schedule, int pp, int vpp, int stage, int m) {
  switch (schedule) {
    case Schedule::gpipe: return m;
    case Schedule::one_f_one_b: return std::min(pp - stage - 1, m);
    case Schedule::interleaved_1f1b: {
      const int total = m * vpp;
      if (m == pp) return total;
      return std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
    }
  }
  return 0;
}

std::vector<ScheduleStep> stage_schedule(Schedule schedule, int pp, int vpp, int stage, int m) {
  std::vector<ScheduleStep> out;
  if (schedule == Schedule::gpipe) {
    for (int i = 0; i < m; ++i) out.push_back({Pass::forward, i, 0});
    for (int i = 0; i < m; ++i) out.push_back({Pass::backward, i, 0});
    return out;
  }
  const int v = schedule == Schedule::interleaved_1f1b ? vpp : 1;
  const int total = m * v;
  const int group = pp * v;
  auto step = [&](Pass pass, int k) {
    const int in_group = k % group;
    int chunk = in_group / pp;
    if (pass == Pass::backward) chunk = v - 1 - chunk;
    const int micro = (k / group) * pp + k % pp;
    // Without interleaving micro-batch k is simply k (pp divides nothing here).
    return ScheduleStep{pass, v == 1 ? k : micro, chunk};
  };
  const int warmup = warmup_steps(schedule, pp, vpp, stage, m);
  for (int k = 0; k < warmup; ++k) out.push_back(step(Pass::forward, k));
  for (int i = 0; i < total - warmup; ++i) {
    out.push_back(step(Pass::forward, warmup + i));
    out.push_back(step(Pass::backward, i));
  }
  for (int i = total - warmup; i < total; ++i) out.push_back(step(Pass::backward, i));
  return out;
}

int chunks_in_flight(Schedule schedule, int pp, int vpp, int stage, int m) {
  int alive = 0, peak = 0;
  for (const auto& s : stage_schedule(schedule, pp, vpp, stage, m)) {
    alive += s.pass == Pass::forward ? 1 : -1;
    peak = std::max(peak, alive);
  }
  return peak;
}

}  // namespace parasim::workload
