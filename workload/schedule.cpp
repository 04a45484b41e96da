#include "workload/schedule.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "workload/schedule_builders.hpp"

namespace parasim::workload {

PipelineShape pipeline_shape(const Plan& plan, const PassTimes& times) {
  PipelineShape s;
  s.schedule = plan.schedule;
  s.pp = plan.pp;
  s.vpp = plan.vpp;
  s.micro_batches = plan.micro_batches();
  s.microbatch_group = plan.microbatch_group_size();
  s.times = times;
  s.pair_forward_backward = plan.overlap.ep_comm;
  return s;
}

int warmup_steps(Schedule schedule, int pp, int vpp, int stage, int m, bool paired, int group) {
  const int extra = paired ? 1 : 0;
  switch (schedule) {
    case Schedule::gpipe: return m;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1: return std::min(pp - stage - 1 + extra, m);
    case Schedule::interleaved_1f1b: {
      const int total = m * vpp;
      return std::min((pp - stage - 1) * 2 + (vpp - 1) * (group > 0 ? group : pp) + extra, total);
    }
    default: break;
  }
  throw std::logic_error("warmup_steps: not a warm-up schedule");
}

bool defers_weights(Schedule schedule) {
  return schedule != Schedule::gpipe && schedule != Schedule::one_f_one_b && schedule != Schedule::interleaved_1f1b;
}

namespace {

// See the header: warm-up F; `stage` x (F, B) with W deferred; (F, B, W) while forwards remain;
// (B, W); the deferred W's. W's go in the order of their B's.
std::vector<ScheduleStep> zb_h1(int pp, int stage, int m) {
  std::vector<ScheduleStep> out;
  int f = 0, b = 0, w = 0;
  auto forward = [&]() { out.push_back({Pass::forward, f++, 0}); };
  auto backward = [&]() { out.push_back({Pass::backward, b++, 0, true}); };
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

std::vector<ScheduleStep> gpipe(int m) {
  std::vector<ScheduleStep> out;
  for (int i = 0; i < m; ++i) out.push_back({Pass::forward, i, 0});
  for (int i = 0; i < m; ++i) out.push_back({Pass::backward, i, 0});
  return out;
}

// Interleaved 1F1B's virtual steps in Megatron-LM's order (its get_schedule_table): groups of
// `group` micro-batches, the last taking what remains; within a group every chunk in turn runs the
// group's micro-batches. Without interleaving step k is micro-batch k of chunk 0.
std::vector<ScheduleStep> virtual_steps(int m, int v, int group) {
  std::vector<ScheduleStep> table;
  table.reserve(static_cast<std::size_t>(m) * v);
  for (int first = 0; first < m; first += group) {
    const int end = first + group >= m ? m : first + group;
    for (int chunk = 0; chunk < v; ++chunk) {
      for (int micro = first; micro < end; ++micro) table.push_back({Pass::forward, micro, chunk});
    }
  }
  return table;
}

// 1F1B and interleaved 1F1B (Megatron-LM's schedules.py); `paired` runs each steady-state forward
// and backward as one step.
std::vector<ScheduleStep> one_f_one_b(const PipelineShape& shape, int stage) {
  const int m = shape.micro_batches, pp = shape.pp;
  const int v = shape.schedule == Schedule::interleaved_1f1b ? shape.vpp : 1;
  const int group = v > 1 && shape.microbatch_group > 0 ? shape.microbatch_group : pp;
  const auto table = virtual_steps(m, v, v > 1 ? group : m);
  const int total = m * v;
  std::vector<ScheduleStep> out;
  auto step = [&](Pass pass, int k) {
    ScheduleStep s = table[static_cast<std::size_t>(k)];
    s.pass = pass;
    if (pass == Pass::backward) s.chunk = v - 1 - s.chunk;
    return s;
  };
  const bool paired = shape.pair_forward_backward;
  const int warmup = warmup_steps(shape.schedule, pp, shape.vpp, stage, m, paired, group);
  for (int k = 0; k < warmup; ++k) out.push_back(step(Pass::forward, k));
  for (int i = 0; i < total - warmup; ++i) {
    out.push_back(step(Pass::forward, warmup + i));
    out.back().overlaps_next = paired;
    out.push_back(step(Pass::backward, i));
  }
  for (int i = total - warmup; i < total; ++i) out.push_back(step(Pass::backward, i));
  return out;
}

}  // namespace

std::vector<std::vector<ScheduleStep>> pipeline_schedule(const PipelineShape& shape) {
  const int pp = shape.pp, m = shape.micro_batches;
  switch (shape.schedule) {
    case Schedule::zb_1p: return zero_bubble_schedule(pp, m, shape.times, pp);
    case Schedule::zb_2p: return zero_bubble_schedule(pp, m, shape.times, 2 * pp);
    case Schedule::zb_v: return zbv_schedule(pp, m, shape.times, 2 * pp);
    case Schedule::dualpipe: return dualpipe_schedule(pp, m);
    case Schedule::dualpipe_v: return dualpipe_v_schedule(pp, m);
    default: break;
  }
  std::vector<std::vector<ScheduleStep>> out;
  for (int stage = 0; stage < pp; ++stage) {
    if (shape.schedule == Schedule::zb_h1) out.push_back(zb_h1(pp, stage, m));
    else if (shape.schedule == Schedule::gpipe) out.push_back(gpipe(m));
    else out.push_back(one_f_one_b(shape, stage));
  }
  return out;
}

std::vector<ScheduleStep> stage_schedule(Schedule schedule, int pp, int vpp, int stage, int m, int microbatch_group) {
  PipelineShape shape;
  shape.schedule = schedule;
  shape.pp = pp;
  shape.vpp = vpp;
  shape.micro_batches = m;
  shape.microbatch_group = microbatch_group;
  return pipeline_schedule(shape)[static_cast<std::size_t>(stage)];
}

int chunks_in_flight(const std::vector<ScheduleStep>& steps) {
  int alive = 0, peak = 0;
  for (const auto& s : steps) {
    if (s.pass == Pass::forward) ++alive;
    if ((s.pass == Pass::backward && !s.defers_weight) || s.pass == Pass::weight) --alive;
    peak = std::max(peak, alive);
  }
  return peak;
}

int chunks_in_flight(Schedule schedule, int pp, int vpp, int stage, int m) { return chunks_in_flight(stage_schedule(schedule, pp, vpp, stage, m)); }

}  // namespace parasim::workload
