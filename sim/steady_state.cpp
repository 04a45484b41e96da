#include "sim/steady_state.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace parasim::sim {

std::optional<SteadyRuns> steady_runs(const workload::Plan& plan, int warm_rounds) {
  const long long per_step = 1LL * plan.micro_batch * plan.dp;
  if (per_step <= 0 || plan.global_batch % per_step != 0) return std::nullopt;
  const int m = plan.micro_batches();
  SteadyRuns runs;
  runs.round = std::max(1, plan.pp);
  const int q = runs.round;
  // The first replay has `warm_rounds` rounds (warm-up and cool-down), the last two more; the last
  // lies on m's residue so that whole rounds are added.
  const int first = (warm_rounds + 2) * q;
  if (m < first) return std::nullopt;
  const int last = first + (m - first) % q;
  runs.micro_batches = {last - 2 * q, last - q, last};
  runs.rounds_added = (m - last) / q;
  const long long replayed = 3LL * last - 3LL * q;
  if (2 * replayed > m) return std::nullopt;
  return runs;
}

namespace {

// x_c + k·(x_c − x_b), after checking that x_c − x_b and x_b − x_a agree within `tolerance`.
struct Line {
  int k = 0;
  double tolerance = 0;
  bool straight = true;
  double operator()(double a, double b, double c) {
    if (std::abs((c - b) - (b - a)) > tolerance) straight = false;
    return c + k * (c - b);
  }
  Seconds operator()(Seconds a, Seconds b, Seconds c) { return Seconds((*this)(a.value(), b.value(), c.value())); }
};

std::size_t count(std::size_t b, std::size_t c, int k) {
  return c + static_cast<std::size_t>(k) * (c >= b ? c - b : 0);
}

std::vector<CriticalItem> critical_path(const std::array<Result, 3>& r, int k) {
  std::map<std::string, std::array<double, 2>> by_name;  // (b, c)
  for (int i = 1; i < 3; ++i) {
    for (const auto& item : r[static_cast<std::size_t>(i)].critical_path) by_name[item.what][static_cast<std::size_t>(i - 1)] = item.time.value();
  }
  std::vector<CriticalItem> out;
  for (const auto& [what, t] : by_name) out.push_back({what, Seconds(std::max(0.0, t[1] + k * (t[1] - t[0])))});
  std::stable_sort(out.begin(), out.end(), [](const CriticalItem& a, const CriticalItem& b) { return a.time > b.time; });
  return out;
}

}  // namespace

std::optional<Result> extrapolate(const std::array<Result, 3>& r, const SteadyRuns& runs) {
  const auto& [a, b, c] = r;
  if (a.stages.size() != c.stages.size() || b.stages.size() != c.stages.size()) return std::nullopt;
  Line line{runs.rounds_added, 1e-6 * c.iteration.value()};
  Result out = c;
  out.iteration = line(a.iteration, b.iteration, c.iteration);
  for (std::size_t s = 0; s < c.stages.size(); ++s) {
    const auto &sa = a.stages[s], &sb = b.stages[s], &sc = c.stages[s];
    auto& so = out.stages[s];
    so.forward = line(sa.forward, sb.forward, sc.forward);
    so.backward = line(sa.backward, sb.backward, sc.backward);
    so.recompute = line(sa.recompute, sb.recompute, sc.recompute);
    so.optimizer = line(sa.optimizer, sb.optimizer, sc.optimizer);
    for (std::size_t d = 0; d < so.exposed.size(); ++d) so.exposed[d] = line(sa.exposed[d], sb.exposed[d], sc.exposed[d]);
    so.bubble = line(sa.bubble, sb.bubble, sc.bubble);
  }
  if (!line.straight) return std::nullopt;
  const int k = runs.rounds_added;
  out.hardware_flops = c.hardware_flops + k * (c.hardware_flops - b.hardware_flops);
  out.critical_path = critical_path(r, k);
  out.tasks = count(b.tasks, c.tasks, k);
  out.events = count(b.events, c.events, k);
  out.activities = count(b.activities, c.activities, k);
  out.extrapolated_rounds = k;
  return out;
}

}  // namespace parasim::sim
