#pragma once
// Chrome trace format (chrome://tracing, Perfetto) of a simulated iteration, written event by event:
//   - a process per simulated GPU (each pipeline stage's representative) with a track per stream
//     (compute, tp/dp/pp/cp/ep communication; the backward of F&B steps on communication tracks of
//     its own); where a stream's slices overlap in time (transfers issued ahead of their use), the
//     later ones go on further tracks of that stream ("pp_comm 2"), so slices on one track never
//     overlap in part;
//   - a flow arrow from each pipeline transfer's producer (the sending stage's last task of the chunk)
//     to its consumer (the receiving stage's first);
//   - a "links" process with one counter per directed link, named after it ("node0/gpu0 -> ..."),
//     stepping at each transfer's start and end (its load in units of one rank's rate): every link
//     that carried traffic, the busiest few by load x time, or none.
#include <cstddef>
#include <ostream>
#include <string_view>

#include "sim/simulator.hpp"

namespace parasim::sim {

enum class TraceLinks { none, busiest, all };
std::string_view trace_links_name(TraceLinks links);

struct TraceOptions {
  TraceLinks links = TraceLinks::busiest;
  int busiest = 16;  ///< links kept under TraceLinks::busiest
};

struct TraceSummary {
  std::size_t events = 0;
  std::size_t links = 0;        ///< link counters written
  std::size_t links_busy = 0;   ///< links that carried traffic
};

TraceSummary write_chrome_trace(std::ostream& out, const workload::TaskGraph& graph, const Timeline& timeline, const topology::Cluster& cluster,
                                const TraceOptions& options = {});

}  // namespace parasim::sim
