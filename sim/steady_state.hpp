#pragma once
// The steady state of a long pipeline, replayed three times instead of the whole iteration.
//
// Past its warm-up, a pipeline schedule repeats: every further round of q micro-batches (q = pp, the
// group the interleaved schedules cycle through; 1 without a pipeline) adds the same tasks at the
// same pace, and the cool-down, the data-parallel tail and the optimizer come after them unchanged.
// So the iteration of m micro-batches is T(m_c) + k·(T(m_c) − T(m_c − q)), k = (m − m_c) / q, once
// the rounds are seen to repeat: three replays at m_c − 2q, m_c − q and m_c must step by the same
// time, and so must every stage's breakdown, to a millionth of the iteration. Where they do not (a
// schedule that has not settled, contention that drifts) they are tried again later in the
// iteration, and then the whole iteration is replayed. The replays cost 3·m_c − 3q micro-batches,
// with m_c ≥ 4q: used where that is under half of m.
#include <array>
#include <optional>

#include "sim/result.hpp"
#include "workload/plan.hpp"

namespace parasim::sim {

struct SteadyRuns {
  int round = 1;                     ///< q: micro-batches per steady round
  std::array<int, 3> micro_batches;  ///< m_c − 2q, m_c − q, m_c
  int rounds_added = 0;              ///< k = (m − m_c) / q
};

/// The three replays that stand for `plan`'s iteration, the first with `warm_rounds` rounds, or
/// nullopt where it is replayed whole (too few micro-batches to gain, or a last micro-batch of
/// another size). Zero-bubble schedules settle later than 1F1B: a caller whose replays at 2 warm
/// rounds do not line up tries 6.
std::optional<SteadyRuns> steady_runs(const workload::Plan& plan, int warm_rounds = 2);

/// The result of the whole iteration from the three replays' results, or nullopt where their steps
/// differ (iteration, stage breakdowns) by more than a millionth of the iteration. Rates, memory
/// and FLOP-derived figures are left for the caller to derive for the whole plan.
std::optional<Result> extrapolate(const std::array<Result, 3>& replays, const SteadyRuns& runs);

}  // namespace parasim::sim
