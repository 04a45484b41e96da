#pragma once
// The steady step time of a training log, whichever stack printed it.
#include <vector>

namespace parasim::calibrate {

/// The median of the step times after the first third (at least one dropped when there are two or
/// more), in the order the log printed them, so that warm-up, first-step allocation and a profiled
/// or checkpointing step do not count. `used` is the number of times the median is over.
double steady_median(const std::vector<double>& in_order, int* used = nullptr);

}  // namespace parasim::calibrate
