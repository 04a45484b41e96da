#pragma once
// Chrome trace format (chrome://tracing, Perfetto) of a simulated iteration: a process per simulated
// GPU (each pipeline stage's representative), a thread per stream with its tasks as slices; a
// "network" process with a track per link that carried traffic, transfers as slices on it, and link
// utilization as counters.
#include <ostream>

#include "sim/simulator.hpp"

namespace parasim::sim {

void write_chrome_trace(std::ostream& out, const workload::TaskGraph& graph, const Timeline& timeline, const topology::Cluster& cluster);

}  // namespace parasim::sim
