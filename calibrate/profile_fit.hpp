#pragma once
// Measurements → a profile. Starting from a base profile (the bundled one of the GPU, whose sources
// carry over), each figure that the measurements constrain is fitted through the same cost model
// and collective formulas the simulator prices with, and the rest are kept:
//   gemm.efficiency.<format>  per format with >= 3 GEMMs: the value minimising the squared log error
//                             of CostModel::op_time over the measured GEMMs (golden-section search);
//   memory.efficiency         the same over copies and elementwise kernels whose bytes at full HBM
//                             speed take longer than a kernel launch;
//   fabrics.<f>.efficiency / step_latency (Simple) and ll_efficiency / ll_step_latency (LL): linear
//                             least squares of time − collective launch = steps·latency + traffic/(B·eff)
//                             per fabric and protocol (ring steps and bus traffic as nccl-tests counts
//                             them; B the fabric's datasheet bandwidth per direction); needs >= 3
//                             collectives of >= 2 sizes; the fitted latency includes the wires;
//   overlap.*                 the mean, weighted by launches, of overlapped / alone − 1 per compute kind
//                             and fabric (and per fabric for the collectives);
// and every measurement is kept as a point (median per distinct shape or size) with its source.
// A fitted value replaces the base figure only when its median relative error is within
// FitOptions::max_median_error (25%): a law that explains little of a trace is not better than a
// public measurement, though the trace's points still go into the profile.
// Fractions of datasheet figures need the datasheet: without a GpuSpec only the overlap factors and
// the points are fitted, and the report says so.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/measurements.hpp"
#include "calibrate/profile.hpp"
#include "core/units.hpp"
#include "topology/gpu_spec.hpp"

namespace parasim::calibrate {

struct FitOptions {
  std::optional<topology::GpuSpec> gpu;              ///< the measured GPU's datasheet
  std::optional<BytesPerSecond> network_bandwidth;  ///< per GPU across nodes, for network collectives
  std::string source;                                ///< "trace: …" or "cupti: …", put on what is fitted
  /// A fitted figure replaces the base one only when it reproduces its measurements this well
  /// (median relative error); the measured points are kept either way.
  double max_median_error = 0.25;
};

/// How well one fitted part of the model reproduces its measurements.
struct FitQuality {
  std::string what;  ///< "gemm bf16", "memory", "nccl nvlink SIMPLE", "overlap gemm nvlink", …
  std::size_t samples = 0;
  bool fitted = false;
  std::vector<std::string> keys;  ///< profile keys it set
  double r2 = std::numeric_limits<double>::quiet_NaN();  ///< of log time
  double median_error = std::numeric_limits<double>::quiet_NaN();
  double worst_error = std::numeric_limits<double>::quiet_NaN();
  std::string note;
};

struct FitResult {
  Profile profile;
  std::vector<FitQuality> quality;
};

FitResult fit_profile(const Profile& base, const Measurements& measurements, const FitOptions& options);

/// Ring steps and per-rank bus traffic of a collective of `bytes` over `ranks`, as the fit prices it.
int collective_steps(CollectiveKind kind, const std::string& algorithm, int ranks);

/// R² of log(predicted) against log(measured), and median / worst |predicted − measured| / measured.
struct ErrorStats {
  double r2 = std::numeric_limits<double>::quiet_NaN();
  double median = std::numeric_limits<double>::quiet_NaN();
  double worst = std::numeric_limits<double>::quiet_NaN();
};
ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& measured);

}  // namespace parasim::calibrate
