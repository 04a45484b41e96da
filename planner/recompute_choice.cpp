#include "planner/recompute_choice.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace parasim::planner {

std::optional<std::vector<int>> choose_within_budget(const std::vector<std::vector<LayerOption>>& layers, double budget, int resolution) {
  if (budget < 0) return std::nullopt;
  const std::size_t n = layers.size();
  // Rounding up loses at most one step per layer: with 16 steps per layer at least, under 1/16 of
  // the budget.
  const std::size_t q = std::max(static_cast<std::size_t>(std::max(resolution, 1)), 16 * n);
  const double unit = budget > 0 ? budget / static_cast<double>(q) : 1.0;
  auto units = [&](double bytes) -> long {
    if (bytes <= 0) return 0;
    return budget > 0 ? static_cast<long>(std::ceil(bytes / unit - 1e-9)) : static_cast<long>(q) + 1;
  };
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // time[i][u]: least time for the first i layers holding exactly u units; choice to recover.
  std::vector<std::vector<double>> time(n + 1, std::vector<double>(q + 1, kInf));
  std::vector<std::vector<int>> choice(n + 1, std::vector<int>(q + 1, -1));
  time[0][0] = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t u = 0; u <= q; ++u) {
      if (time[i][u] == kInf) continue;
      for (std::size_t o = 0; o < layers[i].size(); ++o) {
        const long next = static_cast<long>(u) + units(layers[i][o].bytes);
        if (next > static_cast<long>(q)) continue;
        const double t = time[i][u] + layers[i][o].seconds;
        auto& slot = time[i + 1][static_cast<std::size_t>(next)];
        if (t < slot) {
          slot = t;
          choice[i + 1][static_cast<std::size_t>(next)] = static_cast<int>(o);
        }
      }
    }
  }
  std::size_t best = q + 1;
  for (std::size_t u = 0; u <= q; ++u) {
    if (time[n][u] < kInf && (best > q || time[n][u] < time[n][best])) best = u;
  }
  if (best > q) return std::nullopt;
  std::vector<int> out(n);
  std::size_t u = best;
  for (std::size_t i = n; i > 0; --i) {
    const int o = choice[i][u];
    out[i - 1] = o;
    u -= static_cast<std::size_t>(units(layers[i - 1][static_cast<std::size_t>(o)].bytes));
  }
  return out;
}

}  // namespace parasim::planner
