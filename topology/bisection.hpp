#pragma once
// Bisection bandwidth: the most data per second the first half of the GPUs (by index, so whole
// nodes and pods for even counts) can send to the second half at once, as a maximum flow over the
// graph (Boost's push-relabel). One direction; the other is the same by symmetry.
#include "topology/cluster.hpp"

namespace parasim::topology {

BytesPerSecond bisection_bandwidth(const Cluster& cluster);

/// Maximum flow from the GPUs in [0, split) to those in [split, gpu_count).
BytesPerSecond max_flow_between(const Cluster& cluster, int split);

}  // namespace parasim::topology
