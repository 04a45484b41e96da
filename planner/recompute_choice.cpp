#include "planner/recompute_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

namespace parasim::planner {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Units = std::vector<std::vector<long>>;

// Each option's bytes in units of budget / q, rounded up (computed once, not once per reachable
// state); with no budget any bytes at all are more than q units.
Units option_units(const std::vector<std::vector<LayerOption>>& layers, double budget, std::size_t q) {
  const double unit = budget > 0 ? budget / static_cast<double>(q) : 1.0;
  auto units = [&](double bytes) -> long {
    if (bytes <= 0) return 0;
    return budget > 0 ? static_cast<long>(std::ceil(bytes / unit - 1e-9)) : static_cast<long>(q) + 1;
  };
  Units cost(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (const auto& option : layers[i]) cost[i].push_back(units(option.bytes));
  }
  return cost;
}

// Whether every layer at its first option fits while that option alone costs no time: the table
// would find that path and no other at time 0 (every other option costs time), so it is the answer.
bool first_options_answer(const std::vector<std::vector<LayerOption>>& layers, const Units& cost, std::size_t q) {
  long first_units = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].empty() || layers[i][0].seconds != 0) return false;
    for (std::size_t o = 1; o < layers[i].size(); ++o) {
      if (!(layers[i][o].seconds > 0)) return false;
    }
    first_units += cost[i][0];
  }
  return first_units <= static_cast<long>(q);
}

// Row by row: time[u], the least time for the layers so far holding exactly u units; the returned
// choice[i * (q + 1) + u] is the option that got layer i there, to recover the path (a byte each:
// options are few). `time` ends as the last row.
std::vector<std::int8_t> fill_table(const std::vector<std::vector<LayerOption>>& layers, const Units& cost, std::size_t q, std::vector<double>& time) {
  const std::size_t n = layers.size(), w = q + 1;
  std::vector<double> next_time(w);
  std::vector<std::int8_t> choice(n * w, -1);
  time.assign(w, kInf);
  time[0] = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (layers[i].size() > 127) throw std::logic_error("choose_within_budget: more than 127 options for a layer");
    std::fill(next_time.begin(), next_time.end(), kInf);
    std::int8_t* picked = &choice[i * w];
    for (std::size_t u = 0; u <= q; ++u) {
      if (time[u] == kInf) continue;
      for (std::size_t o = 0; o < layers[i].size(); ++o) {
        const long next = static_cast<long>(u) + cost[i][o];
        if (next > static_cast<long>(q)) continue;
        const double t = time[u] + layers[i][o].seconds;
        if (t < next_time[next]) {
          next_time[next] = t;
          picked[next] = static_cast<std::int8_t>(o);
        }
      }
    }
    time.swap(next_time);
  }
  return choice;
}

}  // namespace

std::optional<std::vector<int>> choose_within_budget(const std::vector<std::vector<LayerOption>>& layers, double budget, int resolution) {
  if (budget < 0) return std::nullopt;
  const std::size_t n = layers.size();
  // Rounding up loses at most one step per layer: with 16 steps per layer at least, under 1/16 of
  // the budget.
  const std::size_t q = std::max(static_cast<std::size_t>(std::max(resolution, 1)), 16 * n);
  const Units cost = option_units(layers, budget, q);
  if (first_options_answer(layers, cost, q)) return std::vector<int>(n, 0);
  std::vector<double> last;
  const auto choice = fill_table(layers, cost, q, last);
  std::size_t best = q + 1;
  for (std::size_t u = 0; u <= q; ++u) {
    if (last[u] < kInf && (best > q || last[u] < last[best])) best = u;
  }
  if (best > q) return std::nullopt;
  std::vector<int> out(n);
  std::size_t u = best;
  for (std::size_t i = n; i > 0; --i) {
    const int o = choice[(i - 1) * (q + 1) + u];
    out[i - 1] = o;
    u -= static_cast<std::size_t>(cost[i - 1][static_cast<std::size_t>(o)]);
  }
  return out;
}

}  // namespace parasim::planner
