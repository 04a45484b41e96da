// ZB-V: the V-shaped zero-bubble schedule of Qi et al. (the ZB-V of "Pipeline Parallelism with
// Controllable Memory" and their zero-bubble Megatron-LM fork), re-expressed here. Stage s holds
// chunk 0 (layers going down, stage s of the first half) and chunk 1 (coming back, stage s of the
// second half): a micro-batch's forward runs chunk 0 on stages 0..pp−1, then chunk 1 on stages
// pp−1..0; its backward the other way round, so the last stage turns both locally.
// The greedy builds, with the passes' times and a memory limit (in half-size chunks' activations):
//   - warm-up: forwards of chunk 0 on every stage, then from the last stage back, chunk 1's first
//     forward preceded by as many chunk-0 forwards (on it and every stage before) as fit before it;
//     then forwards alternating chunks until each stage has run at least as many as the one before;
//   - 2m rounds of a backward on every stage (chunk 1's, "b1", where its gradient has arrived, from
//     the last stage back; chunk 0's otherwise), then a forward on every stage (chunk 1's where its
//     input has arrived, else chunk 0's), weight steps going first where the memory needs them, into
//     idle gaps before an input, and into a partial gap larger than the worst stage's idling so far;
//   - the weight steps left. A variant filling partial gaps before forwards, before backwards, both
//     or neither is run; each is re-run while letting stages idle up to what the worst one did
//     lowers the worst; the one with the least worst idling wins.
// Memory: a forward adds one chunk's activations, its weight step frees them.
#include <algorithm>
#include <deque>
#include <optional>

#include "workload/schedule_builders.hpp"

namespace parasim::workload {
namespace {

enum Kind { kF = 0, kB = 1, kW = 2 };

class VPlanner {
 public:
  VPlanner(int pp, int m, const PassTimes& t, int limit, bool fill_forward, bool fill_backward, std::vector<double> approved)
      : pp_(pp), m_(m), limit_(limit), fill_forward_(fill_forward), fill_backward_(fill_backward), cost_{t.forward, t.backward, t.weight},
        comm_(t.transfer), approved_(std::move(approved)) {
    count_.assign(static_cast<std::size_t>(pp * 6), 0);
    done_.assign(static_cast<std::size_t>(3 * 2 * pp * m), -1.0);
    now_.assign(static_cast<std::size_t>(pp), 0.0);
    memory_.assign(static_cast<std::size_t>(pp), 0);
    bubble_.assign(static_cast<std::size_t>(pp), 0.0);
    pending_.resize(static_cast<std::size_t>(pp));
    steps_.resize(static_cast<std::size_t>(pp));
    max_approved_ = approved_.empty() ? -1.0 : *std::max_element(approved_.begin(), approved_.end());
  }

  bool run() { return warm_up() && steady() && drain(); }
  double worst_bubble() const { return worst(-1); }
  const std::vector<double>& bubbles() const { return bubble_; }
  std::vector<std::vector<ScheduleStep>> steps() && { return std::move(steps_); }

 private:
  // Counts per stage by (kind, chunk); a backward's or weight's chunk is numbered in backward order:
  // 0 is chunk 1's (run first), 1 is chunk 0's.
  int& count(int stage, Kind k, int c) { return count_[static_cast<std::size_t>(stage * 6 + k * 2 + c)]; }
  double& done(Kind k, int c, int stage, int mb) { return done_[static_cast<std::size_t>(((k * 2 + c) * pp_ + stage) * m_ + mb)]; }
  int memory_change(Kind k) const { return k == kF ? 1 : k == kW ? -1 : 0; }
  double worst(int stage) const {
    double w = *std::max_element(bubble_.begin(), bubble_.end());
    if (stage >= 0 && max_approved_ >= 0) w = std::max(w, max_approved_ - approved_[static_cast<std::size_t>(stage)]);
    return w;
  }

  bool put(Kind k, int c, int stage) {
    const auto s = static_cast<std::size_t>(stage);
    const int mb = count(stage, k, c);
    if (mb >= m_ || memory_[s] + memory_change(k) > limit_) return false;
    const double earliest = now_[s] + cost_[k];
    double finish = earliest;
    // On its own stage a pass follows the one before it in the V: chunk 1's forward its chunk 0's,
    // chunk 1's backward ("0") its chunk 1's forward, chunk 0's backward ("1") chunk 1's.
    if (k == kF && c == 1 && done(kF, 0, stage, mb) < 0) return false;
    if (k == kB && c == 0 && done(kF, 1, stage, mb) < 0) return false;
    if (k == kB && c == 1 && done(kB, 0, stage, mb) < 0) return false;
    if (k != kW) {
      // Chunk "1" flows from the stage after, chunk "0" from the stage before.
      if (c == 1 && stage + 1 < pp_) {
        if (done(k, 1, stage + 1, mb) < 0) return false;
        finish = std::max(finish, done(k, 1, stage + 1, mb) + comm_ + cost_[k]);
      }
      if (c == 0 && stage > 0) {
        if (done(k, 0, stage - 1, mb) < 0) return false;
        finish = std::max(finish, done(k, 0, stage - 1, mb) + comm_ + cost_[k]);
      }
    }
    if (count(stage, kF, 0) > 0) bubble_[s] += finish - earliest;
    done(k, c, stage, mb) = finish;
    now_[s] = finish;
    memory_[s] += memory_change(k);
    ++count(stage, k, c);
    // Local chunks: a forward's "c" is its chunk; a backward's or weight's "c" is chunk 1 − c.
    const int local = k == kF ? c : 1 - c;
    steps_[s].push_back({k == kF ? Pass::forward : k == kB ? Pass::backward : Pass::weight, mb, local, k == kB});
    if (k == kB) pending_[s].push_back(c);
    return true;
  }
  bool put_weight(int stage) {
    auto& q = pending_[static_cast<std::size_t>(stage)];
    if (q.empty()) return false;
    const int c = q.front();
    q.pop_front();
    return put(kW, c, stage);
  }

  // Weight steps before a pass whose input arrives at `arrival` (none when it has no input).
  void fill(int stage, std::optional<double> arrival, bool fill_partial) {
    if (!arrival) return;
    const auto s = static_cast<std::size_t>(stage);
    while (!pending_[s].empty() && *arrival >= now_[s] + cost_[kW]) put_weight(stage);
    if (!pending_[s].empty() && *arrival - now_[s] > worst(stage) - bubble_[s] && fill_partial) put_weight(stage);
  }

  bool warm_up() {
    for (int i = 0; i < pp_; ++i) {
      if (!put(kF, 0, i)) return false;
    }
    for (int i = pp_ - 1; i >= 0; --i) {
      if (i < pp_ - 1) {
        const double turn = done(kF, 1, i + 1, 0) + comm_;
        while (memory_[static_cast<std::size_t>(i)] + 2 + 2 * i <= limit_ && now_[static_cast<std::size_t>(i)] + cost_[kF] <= turn &&
               count(i, kF, 0) < m_ - i) {
          for (int j = 0; j <= i; ++j) {
            if (!put(kF, 0, j)) return false;
          }
        }
      }
      if (!put(kF, 1, i)) return false;
    }
    int c = 0;
    for (int i = 1; i < pp_; ++i) {
      while (count(i, kF, 0) + count(i, kF, 1) < count(i - 1, kF, 0) + count(i - 1, kF, 1) ||
             (count(i, kF, 1) <= count(i - 1, kF, 1) && count(i - 1, kF, 1) < m_)) {
        bool any = false;
        for (int j = pp_ - 1; j >= i; --j) {
          if (count(j, kF, c) < m_) any |= put(kF, c, j);
        }
        c = 1 - c;
        if (!any && count(i, kF, c) >= m_) return false;
      }
    }
    return true;
  }

  bool backward_round() {
    for (int i = 0; i < pp_; ++i) {
      while (memory_[static_cast<std::size_t>(i)] + memory_change(kB) > limit_) {
        if (!put_weight(i)) return false;
      }
    }
    // Chunk 0's backward ("1") where chunk 1's is ahead and its gradient has come back (or chunk
    // 1's are all done), from the last stage back; chunk 1's ("0") everywhere else.
    auto backward_chunk = [&](int i) {
      if (count(i, kB, 1) >= count(i, kB, 0)) return 0;
      if (i == pp_ - 1 || count(i, kB, 0) >= m_ || done(kB, 1, i + 1, count(i, kB, 1)) >= 0) return 1;
      return 0;
    };
    std::vector<std::pair<int, int>> order;  // (stage, backward chunk)
    for (int i = pp_ - 1; i >= 0; --i) {
      if (backward_chunk(i) == 1) order.emplace_back(i, 1);
    }
    for (int i = 0; i < pp_; ++i) {
      if (backward_chunk(i) == 0) order.emplace_back(i, 0);
    }
    for (const auto& [i, c] : order) {
      if (count(i, kB, c) >= m_) continue;
      std::optional<double> arrival;
      if (c == 1 && i + 1 < pp_) arrival = done(kB, 1, i + 1, count(i, kB, 1));
      if (c == 0 && i > 0) arrival = done(kB, 0, i - 1, count(i, kB, 0));
      if (arrival && *arrival < 0) return false;
      if (arrival) *arrival += comm_;
      fill(i, arrival, c == 1 || fill_backward_);
      if (!put(kB, c, i)) return false;
    }
    return true;
  }

  bool forward_round() {
    for (int i = 0; i < pp_; ++i) {
      if (count(i, kF, 1) >= m_) continue;
      int c = -1;
      if (count(i, kF, 1) >= count(i, kF, 0)) {
        c = 0;
      } else if (i == pp_ - 1 || done(kF, 1, i + 1, count(i, kF, 1)) >= 0) {
        c = 1;
      } else if (count(i, kF, 0) < m_ && (i == 0 || done(kF, 0, i - 1, count(i, kF, 0)) >= 0)) {
        c = 0;
      }
      if (c < 0) continue;
      while (memory_[static_cast<std::size_t>(i)] + memory_change(kF) > limit_) {
        if (!put_weight(i)) return false;
      }
      std::optional<double> arrival;
      if (c == 0 && i > 0) arrival = done(kF, 0, i - 1, count(i, kF, 0));
      if (c == 1 && i + 1 < pp_) arrival = done(kF, 1, i + 1, count(i, kF, 1));
      if (arrival && *arrival < 0) return false;
      if (arrival) *arrival += comm_;
      fill(i, arrival, fill_forward_);
      if (!put(kF, c, i)) return false;
    }
    return true;
  }

  bool steady() {
    for (int r = 0; r < 2 * m_; ++r) {
      if (!backward_round() || !forward_round()) return false;
    }
    return true;
  }

  bool drain() {
    for (int i = 0; i < pp_; ++i) {
      while (!pending_[static_cast<std::size_t>(i)].empty()) {
        if (!put_weight(i)) return false;
      }
      for (int c = 0; c < 2; ++c) {
        if (count(i, kF, c) != m_ || count(i, kB, c) != m_ || count(i, kW, c) != m_) return false;
      }
    }
    return true;
  }

  int pp_, m_, limit_;
  bool fill_forward_, fill_backward_;
  double cost_[3];
  double comm_;
  std::vector<double> approved_;
  double max_approved_;
  std::vector<int> count_;
  std::vector<double> done_, now_, bubble_;
  std::vector<int> memory_;
  std::vector<std::deque<int>> pending_;
  std::vector<std::vector<ScheduleStep>> steps_;
};

// One variant, re-run while admitting the idling the last run found lowers the worst stage's.
std::optional<VPlanner> plan_variant(int pp, int m, const PassTimes& t, int limit, bool fill_forward, bool fill_backward) {
  std::optional<VPlanner> best;
  std::vector<double> approved;
  for (int attempt = 0; attempt < 64; ++attempt) {
    VPlanner planner(pp, m, t, limit, fill_forward, fill_backward, approved);
    if (!planner.run()) break;
    if (best && planner.worst_bubble() >= best->worst_bubble()) break;
    approved = planner.bubbles();
    best.emplace(std::move(planner));
  }
  return best;
}

}  // namespace

std::vector<std::vector<ScheduleStep>> zbv_schedule(int pp, int m, const PassTimes& times, int limit) {
  std::optional<VPlanner> best;
  for (bool fill_backward : {true, false}) {
    for (bool fill_forward : {true, false}) {
      auto planner = plan_variant(pp, m, times, limit, fill_forward, fill_backward);
      if (planner && (!best || planner->worst_bubble() < best->worst_bubble())) best.emplace(std::move(*planner));
    }
  }
  if (!best) throw std::logic_error("zbv_schedule: no variant completes the schedule");
  return std::move(*best).steps();
}

}  // namespace parasim::workload
