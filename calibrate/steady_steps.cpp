#include "calibrate/steady_steps.hpp"

#include <algorithm>

namespace parasim::calibrate {

double steady_median(const std::vector<double>& in_order, int* used) {
  const std::size_t n = in_order.size();
  const std::size_t dropped = n < 2 ? 0 : std::max<std::size_t>(1, n / 3);
  std::vector<double> times(in_order.begin() + static_cast<std::ptrdiff_t>(dropped), in_order.end());
  if (used) *used = static_cast<int>(times.size());
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  const std::size_t mid = times.size() / 2;
  return times.size() % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
}

}  // namespace parasim::calibrate
