// DeepSeek-V3's DualPipe and DualPipe-V (deepseek-ai/DualPipe), step by step as its runtime issues
// them. A rank holds two chunks, phase 0 and phase 1:
//   DualPipe-V on n ranks: phase 0 is chunk r going down, phase 1 chunk 2n − 1 − r coming back; every
//     micro-batch passes both.
//   DualPipe on N = 2n ranks: each rank runs DualPipe-V's steps of its "half rank" h = min(r, N−1−r)
//     over n half ranks and m/2 micro-batches a direction. Phase 0 is the direction in which the rank
//     sits at position h (down for the first half of the ranks, up for the second), phase 1 the
//     other; a micro-batch goes one way only.
// A rank's steps, with F_p/B_p a forward/backward of phase p, F_p&B_q one overlapped pair and W a
// deferred weight-gradient step popped in first-in first-out order:
//   1. 2(n − r − 1) x F0                     2. (r + 1) x (F0, F1)
//   3. (n − r − 1) x (B1 deferring W, W, F1)  4. (m − 2n + r + 1) x (F0&B1, F1&B0)
//   5. (n − r − 1) x (B1, F1&B0)              6. (r + 1) x (B1, B0), deferring W from the middle on
//   7. (n − r − 1) x (W, B0 deferring W)      8. (r + 1) x W
// The last rank's first step-4 pair runs unpaired (F0, then B1), as the runtime does.
#include <algorithm>
#include <deque>
#include <utility>

#include "workload/schedule_builders.hpp"

namespace parasim::workload {
namespace {

struct PhaseStep {
  Pass pass;
  int phase = 0;  // -1 for W
  bool defers_weight = false;
  bool overlaps_next = false;
};

std::vector<PhaseStep> dualpipe_v_rank(int n, int r, int m) {
  std::vector<PhaseStep> out;
  auto forward = [&](int phase) { out.push_back({Pass::forward, phase}); };
  auto backward = [&](int phase, bool defer = false) { out.push_back({Pass::backward, phase, defer}); };
  auto weight = [&]() { out.push_back({Pass::weight, -1}); };
  auto paired = [&](int forward_phase, int backward_phase) {
    out.push_back({Pass::forward, forward_phase, false, true});
    backward(backward_phase);
  };
  const bool last = r == n - 1;
  for (int i = 0; i < 2 * (n - r - 1); ++i) forward(0);
  for (int i = 0; i < r + 1; ++i) {
    forward(0);
    forward(1);
  }
  for (int i = 0; i < n - r - 1; ++i) {
    backward(1, true);
    weight();
    forward(1);
  }
  for (int i = 0; i < m - 2 * n + r + 1; ++i) {
    if (i == 0 && last) {
      forward(0);
      backward(1);
    } else {
      paired(0, 1);
    }
    paired(1, 0);
  }
  for (int i = 0; i < n - r - 1; ++i) {
    backward(1);
    paired(1, 0);
  }
  // The second half of these backwards defers its weights, which the W's after fill in.
  bool defer = false;
  const int drain = r + 1;
  for (int i = 0; i < drain; ++i) {
    if (i == drain / 2 && r % 2 == 1) defer = true;
    backward(1, defer);
    if (i == drain / 2 && r % 2 == 0) defer = true;
    backward(0, defer);
  }
  for (int i = 0; i < n - r - 1; ++i) {
    weight();
    backward(0, true);
  }
  for (int i = 0; i < r + 1; ++i) weight();
  return out;
}

// Phase steps to schedule steps: each phase's forwards and backwards take its micro-batches in
// order; a W completes the oldest deferred backward.
std::vector<ScheduleStep> assign(const std::vector<PhaseStep>& steps, const int local_chunk[2], const int first_microbatch[2]) {
  std::vector<ScheduleStep> out;
  int forwards[2] = {0, 0}, backwards[2] = {0, 0};
  std::deque<std::pair<int, int>> deferred;  // (local chunk, micro-batch)
  for (const auto& s : steps) {
    if (s.pass == Pass::weight) {
      const auto [chunk, mb] = deferred.front();
      deferred.pop_front();
      out.push_back({Pass::weight, mb, chunk});
      continue;
    }
    const auto phase = static_cast<std::size_t>(s.phase);
    int& count = s.pass == Pass::forward ? forwards[phase] : backwards[phase];
    const int mb = first_microbatch[phase] + count++;
    out.push_back({s.pass, mb, local_chunk[phase], s.defers_weight, s.overlaps_next});
    if (s.defers_weight) deferred.emplace_back(local_chunk[phase], mb);
  }
  return out;
}

}  // namespace

std::vector<std::vector<ScheduleStep>> dualpipe_v_schedule(int pp, int m) {
  std::vector<std::vector<ScheduleStep>> out;
  const int chunks[2] = {0, 1}, first[2] = {0, 0};
  for (int r = 0; r < pp; ++r) out.push_back(assign(dualpipe_v_rank(pp, r, m), chunks, first));
  return out;
}

std::vector<std::vector<ScheduleStep>> dualpipe_schedule(int pp, int m) {
  std::vector<std::vector<ScheduleStep>> out;
  const int n = pp / 2;
  for (int r = 0; r < pp; ++r) {
    const int half_rank = std::min(r, pp - 1 - r);
    const bool second_half = r >= n;
    // stage_chunks lists the lower chunk first: for the first half of the ranks that is its own
    // (down) chunk, phase 0; for the second half the mirrored (up) one, which is also phase 0.
    const int chunks[2] = {0, 1};
    // Phase 0 goes down (micro-batches 0 .. m/2 − 1) on the first half, up on the second.
    const int first[2] = {second_half ? m / 2 : 0, second_half ? 0 : m / 2};
    out.push_back(assign(dualpipe_v_rank(n, half_rank, m / 2), chunks, first));
  }
  return out;
}

}  // namespace parasim::workload
