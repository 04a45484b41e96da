#include "workload/schedule.hpp"

#include <algorithm>

namespace parasim::workload {

int warmup_steps(Schedule schedule, int pp, int vpp, int stage, int m) {
  switch (schedule) {
    case Schedule::gpipe: return m;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1: return std::min(pp - stage - 1, m);
    case Schedule::interleaved_1f1b: {
      const int total = m * vpp;
      if (m == pp) return total;
      return std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
    }
  }
  return 0;
}

bool defers_weights(Schedule schedule) { return schedule == Schedule::zb_h1; }

namespace {

// See the header: warm-up F; `stage` x (F, B) with W deferred; (F, B, W) while forwards remain;
// (B, W); the deferred W's. W's go in the order of their B's.
std::vector<ScheduleStep> zb_h1(int pp, int stage, int m) {
  std::vector<ScheduleStep> out;
  int f = 0, b = 0, w = 0;
  auto forward = [&]() { out.push_back({Pass::forward, f++, 0}); };
  auto backward = [&]() { out.push_back({Pass::backward, b++, 0}); };
  auto weight = [&]() { out.push_back({Pass::weight, w++, 0}); };
  for (int i = 0; i < pp - stage - 1 && f < m; ++i) forward();
  for (int i = 0; i < stage && f < m; ++i) {
    forward();
    backward();
  }
  while (f < m) {
    forward();
    backward();
    weight();
  }
  while (b < m) {
    backward();
    weight();
  }
  while (w < m) weight();
  return out;
}

}  // namespace

std::vector<ScheduleStep> stage_schedule(Schedule schedule, int pp, int vpp, int stage, int m) {
  if (schedule == Schedule::zb_h1) return zb_h1(pp, stage, m);
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
  const Pass frees = defers_weights(schedule) ? Pass::weight : Pass::backward;
  for (const auto& s : stage_schedule(schedule, pp, vpp, stage, m)) {
    if (s.pass == Pass::forward) ++alive;
    if (s.pass == frees) --alive;
    peak = std::max(peak, alive);
  }
  return peak;
}

}  // namespace parasim::workload
