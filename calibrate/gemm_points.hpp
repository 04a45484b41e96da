#pragma once
// Measured GEMMs as a correction to the shape law. At each measured point the law's time is off by a
// ratio r = measured / law; at any shape, the cost model multiplies the law's time by the ratio
// interpolated in log space: exp(Σ w_i ln r_i / (1 + Σ w_i)) over the 8 nearest points of the same
// format, with w_i = 1 / d_i² and d_i the distance in log2 of (batch, m, n, k). A point at the shape
// itself gives its own measurement back; a point a factor of two away in one dimension weighs as much
// as the law (the 1 in the denominator); far from every point the law stands. Without points the ratio
// is exactly 1.
#include <functional>
#include <vector>

#include "calibrate/profile.hpp"
#include "workload/ops.hpp"

namespace parasim::calibrate {

/// The GEMM op of a measured shape: 2·b·m·n·k FLOPs, its three matrices read or written once.
workload::Op gemm_point_op(Precision precision, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k);

class GemmPointTable {
 public:
  GemmPointTable() = default;
  /// `law` gives the shape law's time of a point's GEMM (seconds) at the clock it was timed at.
  GemmPointTable(const std::vector<GemmPoint>& points, const std::function<double(const workload::Op&, bool burst)>& law);

  bool empty() const { return entries_.empty(); }
  /// The factor the law's time of a GEMM op is multiplied by; 1 without points of its format.
  double ratio(const workload::Op& op) const;

 private:
  struct Entry {
    Precision precision;
    double log_shape[4];  ///< log2 of batch, m, n, k
    double log_ratio;     ///< ln(measured / law)
  };
  std::vector<Entry> entries_;
};

}  // namespace parasim::calibrate
