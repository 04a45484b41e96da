// ZB-1P and ZB-2P: the heuristic scheduler of Qi et al. ("Zero Bubble Pipeline Parallelism", ICLR
// 2024, §3.1 and their Megatron-LM fork), re-expressed here. It plans with the passes' times (T_F,
// T_B, T_W, a transfer's) under a memory limit, round by round, one micro-batch a round:
//   - warm-up: every stage runs its first forward, then each stage (last to first) as many more as
//     the limit allows and as fit before the first backward reaches it, fewer on each later stage;
//   - each later round: a forward on every stage that still has one (a stage keeps at least one
//     forward ahead of the next stage), then a backward on every stage from the last to the first;
//   - before a pass: weight steps while the memory would go over the limit, and weight steps into
//     the gap before the pass's input arrives; a partial gap gets one too when it is larger than
//     what the worst stage has idled so far (or always, in the greedy variant);
//   - the remaining weight steps at the end.
// Eight variants (an idle gap allowed before the first backward or not, backward prioritized on a
// stage that runs ahead or not, the greedy fill or not) are tried; the one whose longest stage span
// is shortest wins. Memory counts micro-batches: a forward adds one, its weight step frees it.
#include <algorithm>
#include <limits>
#include <optional>

#include "workload/schedule_builders.hpp"

namespace parasim::workload {
namespace {

enum Kind { kF = 0, kB = 1, kW = 2 };

struct Variant {
  bool gap_before_first_backward = false;
  bool prioritize_backward = false;
  bool greedy_fill = false;
};

class ZeroBubblePlanner {
 public:
  ZeroBubblePlanner(int pp, int m, const PassTimes& t, int limit, Variant v)
      : pp_(pp), m_(m), limit_(limit), v_(v), cost_{t.forward, t.backward, t.weight}, comm_(t.transfer) {
    for (auto& c : count_) c.assign(static_cast<std::size_t>(pp), 0);
    for (auto& d : done_) d.assign(static_cast<std::size_t>(pp * m), 0.0);
    end_.assign(static_cast<std::size_t>(pp), 0.0);
    start_.assign(static_cast<std::size_t>(pp), -1.0);
    bubble_.assign(static_cast<std::size_t>(pp), 0.0);
    memory_.assign(static_cast<std::size_t>(pp), 0);
    steps_.resize(static_cast<std::size_t>(pp));
    for (auto& stage : steps_) stage.reserve(static_cast<std::size_t>(3 * m));
  }

  /// False when the limit could not be kept.
  bool run() {
    for (int i = 0; i < m_; ++i) {
      if (!(i == 0 ? warm_up() : round(i))) return false;
    }
    for (int j = 0; j < pp_; ++j) {
      while (count(kW, j) < m_) put(j, kW);
    }
    return true;
  }

  /// The longest span of a stage from its first pass to its last: what the variants are ranked by.
  double span() const {
    double longest = 0;
    for (int j = 0; j < pp_; ++j) longest = std::max(longest, end_[static_cast<std::size_t>(j)] - start_[static_cast<std::size_t>(j)]);
    return longest;
  }
  std::vector<std::vector<ScheduleStep>> steps() && { return std::move(steps_); }

 private:
  int& count(Kind k, int stage) { return count_[k][static_cast<std::size_t>(stage)]; }
  double done(Kind k, int stage, int mb) const { return done_[k][static_cast<std::size_t>(stage * m_ + mb)]; }
  // Bubbles only grow, so the worst is kept as they do (it is asked before every weight step).
  double worst_bubble() const { return worst_bubble_; }
  int memory_change(Kind k) const { return k == kF ? 1 : k == kW ? -1 : 0; }

  void put(int j, Kind k) {
    const auto s = static_cast<std::size_t>(j);
    const int mb = count(k, j);
    const double earliest = end_[s] + cost_[k];
    double finish = earliest;
    if (k == kF && j > 0) finish = std::max(finish, done(kF, j - 1, mb) + comm_ + cost_[k]);
    if (k == kB && j + 1 < pp_) finish = std::max(finish, done(kB, j + 1, mb) + comm_ + cost_[k]);
    if (count(kF, j) > 0) {
      bubble_[s] += finish - earliest;
      worst_bubble_ = std::max(worst_bubble_, bubble_[s]);
    }
    if (start_[s] < 0) start_[s] = finish - cost_[k];
    end_[s] = finish;
    done_[k][static_cast<std::size_t>(j * m_ + mb)] = finish;
    memory_[s] += memory_change(k);
    ++count(k, j);
    steps_[s].push_back({k == kF ? Pass::forward : k == kB ? Pass::backward : Pass::weight, mb, 0, k == kB});
  }

  // Weight steps until the next pass fits the limit; false when none is left to run.
  bool make_room(int j, Kind next) {
    while (memory_[static_cast<std::size_t>(j)] + memory_change(next) > limit_) {
      if (count(kW, j) >= count(kB, j)) return false;
      put(j, kW);
    }
    return true;
  }

  // Weight steps into the idle time before an input that arrives at `arrival`.
  void fill_gap(int j, double arrival) {
    const auto s = static_cast<std::size_t>(j);
    while (count(kW, j) < count(kB, j) && end_[s] + cost_[kW] <= arrival) put(j, kW);
    if (count(kW, j) < count(kB, j) && end_[s] < arrival) {
      const bool within_worst = arrival - end_[s] <= worst_bubble() - bubble_[s];
      if (!within_worst || v_.greedy_fill) put(j, kW);
    }
  }

  // Extra warm-up forwards each stage can run before the first backward reaches it.
  std::vector<int> warm_up_forwards() const {
    std::vector<int> extra(static_cast<std::size_t>(pp_), 0);
    double backward_arrives = done(kF, pp_ - 1, 0) + cost_[kB];
    for (int j = pp_ - 2; j >= 0; --j) {
      const auto s = static_cast<std::size_t>(j);
      int memory = memory_[s];
      double busy = end_[s];
      while (1 + extra[s] < m_ && memory + 1 <= limit_) {
        if (v_.gap_before_first_backward ? busy + cost_[kF] > backward_arrives + comm_ : busy >= backward_arrives + comm_) break;
        ++memory;
        busy += cost_[kF];
        ++extra[s];
      }
      backward_arrives = std::max(busy, backward_arrives + comm_) + cost_[kB];
    }
    // Each stage runs fewer than the one before it, so no stage waits on a forward it holds up.
    for (int j = 1; j < pp_; ++j) {
      auto& e = extra[static_cast<std::size_t>(j)];
      while (e > 0 && e >= extra[static_cast<std::size_t>(j - 1)] && 1 + e < m_) --e;
    }
    return extra;
  }

  bool warm_up() {
    for (int j = 0; j < pp_; ++j) put(j, kF);
    const auto extra = warm_up_forwards();
    for (int j = 0; j < pp_; ++j) {
      for (int k = 0; k < extra[static_cast<std::size_t>(j)]; ++k) put(j, kF);
    }
    for (int j = pp_ - 1; j >= 0; --j) put(j, kB);
    return true;
  }

  // Whether stage j runs a forward this round.
  bool wants_forward(int j) {
    if (count(kF, j) >= m_) return false;
    if (!v_.prioritize_backward || j + 1 >= pp_ || count(kF, j) < count(kF, j + 1) + 2) return true;
    // Far enough ahead of the next stage: a forward only if it does not delay the backward coming.
    const auto s = static_cast<std::size_t>(j);
    const double next_backward = end_[s + 1] + cost_[kF] + cost_[kB] + comm_;
    if (end_[s] >= next_backward) return false;
    double weights = 0;
    int memory = memory_[s] + 1, pending = count(kB, j) - count(kW, j);
    while (memory > limit_ && pending-- > 0) {
      weights += cost_[kW];
      --memory;
    }
    if (end_[s] + cost_[kF] + weights <= next_backward) return true;
    return next_backward - end_[s] > worst_bubble() - bubble_[s];
  }

  bool round(int i) {
    std::vector<int> forward(static_cast<std::size_t>(pp_));
    for (int j = 0; j < pp_; ++j) forward[static_cast<std::size_t>(j)] = wants_forward(j) ? 1 : 0;
    for (int j = pp_ - 2; j >= 0; --j) {
      forward[static_cast<std::size_t>(j)] = std::min(forward[static_cast<std::size_t>(j)], forward[static_cast<std::size_t>(j + 1)]);
    }
    for (int j = 0; j < pp_; ++j) {
      if (!forward[static_cast<std::size_t>(j)]) continue;
      if (!make_room(j, kF)) return false;
      if (j > 0) fill_gap(j, done(kF, j - 1, count(kF, j)) + comm_);
      put(j, kF);
    }
    for (int j = pp_ - 1; j >= 0; --j) {
      if (count(kB, j) != i || count(kF, j) <= i) return false;
      if (!make_room(j, kB)) return false;
      if (j + 1 < pp_) fill_gap(j, done(kB, j + 1, i) + comm_);
      if (j == 0 && count(kF, j) == m_) {
        while (count(kW, j) < count(kB, j)) put(j, kW);
      }
      put(j, kB);
    }
    return true;
  }

  int pp_, m_, limit_;
  Variant v_;
  double cost_[3];
  double comm_;
  std::vector<int> count_[3];
  std::vector<double> done_[3];
  std::vector<double> end_, start_, bubble_;
  double worst_bubble_ = 0;
  std::vector<int> memory_;
  std::vector<std::vector<ScheduleStep>> steps_;
};

}  // namespace

std::vector<std::vector<ScheduleStep>> zero_bubble_schedule(int pp, int m, const PassTimes& times, int limit) {
  std::optional<ZeroBubblePlanner> best;
  for (bool gap : {true, false}) {
    for (bool prioritize : {true, false}) {
      for (bool greedy : {true, false}) {
        ZeroBubblePlanner planner(pp, m, times, limit, {gap, prioritize, greedy});
        if (!planner.run()) continue;
        if (!best || planner.span() < best->span()) best.emplace(std::move(planner));
      }
    }
  }
  // A limit of pp always admits 1F1B's order; the variants keep to it.
  if (!best) throw std::logic_error("zero_bubble_schedule: no variant keeps the memory limit");
  return std::move(*best).steps();
}

}  // namespace parasim::workload
