#include "planner/partition.hpp"

#include <algorithm>
#include <limits>

namespace parasim::planner {

std::vector<double> stage_times(const std::vector<int>& stage_layers, const std::vector<double>& layer_time, double first_extra, double last_extra) {
  std::vector<double> out;
  std::size_t l = 0;
  for (std::size_t s = 0; s < stage_layers.size(); ++s) {
    double t = 0;
    for (int i = 0; i < stage_layers[s] && l < layer_time.size(); ++i) t += layer_time[l++];
    if (s == 0) t += first_extra;
    if (s + 1 == stage_layers.size()) t += last_extra;
    out.push_back(t);
  }
  return out;
}

namespace {

double slowest(const std::vector<int>& stage_layers, const std::vector<double>& layer_time, double first_extra, double last_extra) {
  const auto t = stage_times(stage_layers, layer_time, first_extra, last_extra);
  return *std::max_element(t.begin(), t.end());
}

// The slowest stage of `first` layers, pp - 2 stages of `mid` and `last`, summed as stage_times sums
// them; stops at the first stage reaching `bound` (the split cannot win then), returning its time.
// No allocation: the search calls it for every split of every candidate plan.
double slowest_split(const std::vector<double>& layer_time, int pp, int first, int mid, int last, double first_extra, double last_extra,
                     double bound) {
  double worst = -std::numeric_limits<double>::infinity();
  std::size_t l = 0;
  for (int s = 0; s < pp; ++s) {
    const int n = s == 0 ? first : s + 1 == pp ? last : mid;
    double t = 0;
    for (int i = 0; i < n && l < layer_time.size(); ++i) t += layer_time[l++];
    if (s == 0) t += first_extra;
    if (s + 1 == pp) t += last_extra;
    worst = std::max(worst, t);
    if (worst >= bound) break;
  }
  return worst;
}

std::vector<int> to_chunks(const std::vector<int>& stage_layers, int vpp) {
  const int pp = static_cast<int>(stage_layers.size());
  std::vector<int> chunks(static_cast<std::size_t>(pp * vpp));
  for (int s = 0; s < pp; ++s) {
    const int n = stage_layers[static_cast<std::size_t>(s)];
    for (int v = 0; v < vpp; ++v) chunks[static_cast<std::size_t>(v * pp + s)] = n / vpp + (v < n % vpp ? 1 : 0);
  }
  return chunks;
}

}  // namespace

std::vector<int> balanced_chunks(const std::vector<double>& layer_time, int pp, int vpp, double first_extra, double last_extra, double tolerance) {
  const int layers = static_cast<int>(layer_time.size());
  if (pp < 2 || layers < pp * vpp) return {};
  std::vector<int> best;
  double best_time = std::numeric_limits<double>::infinity();
  // Middle stages take `mid` layers each; the first and last share the rest.
  const int middle_stages = pp - 2;
  for (int mid = vpp; middle_stages == 0 ? mid == vpp : mid * middle_stages <= layers - 2 * vpp; ++mid) {
    const int rest = layers - mid * middle_stages;
    for (int first = vpp; first <= rest - vpp; ++first) {
      const double bound = best_time * (1 - 1e-12);
      const double t = slowest_split(layer_time, pp, first, mid, rest - first, first_extra, last_extra, bound);
      if (t < bound) {
        best_time = t;
        best.assign(static_cast<std::size_t>(pp), mid);
        best.front() = first;
        best.back() = rest - first;
      }
    }
  }
  if (best.empty()) return {};
  if (layers % (pp * vpp) == 0) {
    const std::vector<int> even(static_cast<std::size_t>(pp), layers / pp);
    if (slowest(even, layer_time, first_extra, last_extra) <= best_time * (1 + tolerance)) return {};
  }
  return to_chunks(best, vpp);
}

const std::vector<int>& ChunkCache::get(const std::vector<double>& layer_time, int pp, int vpp, double first_extra, double last_extra) {
  auto key = std::make_tuple(pp, vpp, first_extra, last_extra, layer_time);
  auto it = built_.find(key);
  if (it == built_.end()) it = built_.emplace(std::move(key), balanced_chunks(layer_time, pp, vpp, first_extra, last_extra)).first;
  return it->second;
}

}  // namespace parasim::planner
