#pragma once
// The process's peak resident memory so far, for the benchmarks' memory figures.
#include <sys/resource.h>

namespace parasim::bench {

inline double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

}  // namespace parasim::bench
