#pragma once
// The host-side half of the CUPTI collector (parasim-calibrate-gpu, calibrate/cupti/): what it
// measures, and how CUPTI activity records become measurements. Plain C++, built and unit-tested on
// every machine; calibrate/cupti/ only launches the work on the GPUs and copies CUPTI's records here.
//
// Every launch of a probe runs between cuptiActivityPushExternalCorrelationId(CUSTOM0, id) and
// the matching pop, with id = probe index << 16 | iteration, so CUPTI writes an external-correlation
// record tying each kernel, copy or memset (by its correlation id) to one iteration of one probe. An
// iteration's time is taken from the GPU timestamps of its records (never host timers):
//   GEMM, copy, elementwise: the sum of its records' durations (one stream, back to back);
//   collective: per GPU the sum of its NCCL kernels, and the slowest GPU's sum (all GPUs launch the
//     collective together in one NCCL group);
// the first `warmup` iterations are dropped and the median of the rest is the measurement.
// Overlap probes run a GEMM (or a collective) while a collective (or a GEMM) runs beside it on another
// stream; only iterations whose records lie at least half under the other kind's kernels on the same
// GPU count, and their median is set against the paired probe that ran alone.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/measurements.hpp"

namespace parasim::calibrate {

/// One CUPTI activity record, reduced to what the collector reads (CUpti_ActivityKernel10,
/// CUpti_ActivityMemcpy6, CUpti_ActivityMemset4, CUpti_ActivityExternalCorrelation).
struct ActivityRecord {
  enum class Kind { kernel, memcpy, memset, external_correlation };
  Kind kind = Kind::kernel;
  std::uint32_t correlation = 0;
  std::uint64_t external_id = 0;  ///< external_correlation records
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint32_t device = 0, stream = 0;
  std::string name;  ///< kernels
  std::uint64_t bytes = 0;
};

/// sustained_gemm: one GEMM launched back to back for seconds, until the board's power limit sets the
/// clock; its first launches against its last give the profile's sustained_clock (reduce()).
enum class ProbeKind { gemm, copy, elementwise, collective, gemm_beside_collective, collective_beside_gemm, sustained_gemm };

/// What one probe launches each iteration.
struct Probe {
  ProbeKind kind = ProbeKind::gemm;
  // GEMM probes
  Precision precision = Precision::bf16;
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  // copy and elementwise probes: bytes read plus bytes written per iteration
  double bytes = 0;
  // collective probes: the whole buffer (nccl-tests' size)
  CollectiveKind collective = CollectiveKind::all_reduce;
  int ranks = 1;
  std::optional<Fabric> fabric;
  std::string algorithm, protocol;  ///< NCCL_ALGO / NCCL_PROTO the communicator was made with; empty: from kernel names
  int warmup = 2;
  /// Overlap probes: the probe that measured the same work alone.
  std::optional<std::size_t> alone;
};

/// The external correlation id of a probe's iteration.
constexpr std::uint64_t probe_iteration_id(std::size_t probe, int iteration) {
  return (static_cast<std::uint64_t>(probe) + 1) << 16 | static_cast<std::uint64_t>(iteration);
}

/// Probes and the records CUPTI wrote for them.
class ActivityLog {
 public:
  std::size_t add(const Probe& probe);
  const std::vector<Probe>& probes() const { return probes_; }
  void record(const ActivityRecord& r);
  std::size_t records() const { return kernels_.size() + external_.size(); }
  /// Records whose correlation id no external-correlation record claimed (work outside any probe).
  std::size_t unclaimed() const;

  /// Median time of each probe's counted iterations, as measurements for profile_fit. Probes without
  /// counted iterations are left out (`missing` lists them).
  Measurements reduce(std::vector<std::size_t>* missing = nullptr) const;
  /// Seconds of each counted iteration of a probe (warm-up dropped; overlap probes: only overlapped ones).
  std::vector<double> iterations(std::size_t probe) const;
  /// A sustained-GEMM probe's burst and sustained medians; none with fewer than kSustainedMinLaunches.
  std::optional<SustainedSample> sustained(std::size_t probe) const;

 private:
  /// A collective probe's sample, its algorithm and protocol from its NCCL kernel's name where the probe
  /// did not set them.
  CollectiveSample collective_sample(std::size_t probe, double seconds) const;

  std::vector<Probe> probes_;
  std::vector<ActivityRecord> kernels_;                  ///< kernels, copies and memsets
  std::map<std::uint32_t, std::uint64_t> external_;      ///< correlation id -> external id
};

/// A sustained-GEMM probe's launches: the first kSustainedWindow counted ones are the burst, the last
/// fifth (at least kSustainedWindow) the sustained rate; fewer than kSustainedMinLaunches count as missing.
inline constexpr std::size_t kSustainedWindow = 20;
inline constexpr std::size_t kSustainedMinLaunches = 100;

/// The sweep the collector runs (calibrate/cupti/collector.cpp): square and skinny GEMMs from 256 to
/// 16384, transformer shapes, batched GEMMs; collective sizes 1 KiB to 1 GiB by powers of 4.
struct GemmShape4 {
  std::int64_t batch, m, n, k;
};
std::vector<GemmShape4> gemm_sweep();
std::vector<double> collective_sweep();
/// The formats a GPU of this compute capability runs on its tensor cores (fp8 from 8.9, Ada and Hopper).
std::vector<Precision> gemm_formats(int compute_major, int compute_minor);

/// `bytes` of GEMM operands in format `p`: random signs and mantissas, magnitudes in [0.5, 2), never
/// zero, NaN or infinite. A tensor core on zeros draws less power and holds a higher clock (about 13%
/// faster on an H200 at 8192³), so timing GEMMs on cudaMemset buffers would overstate what training sees.
std::vector<std::uint8_t> random_operands(Precision p, std::size_t bytes, std::uint64_t seed);

}  // namespace parasim::calibrate
