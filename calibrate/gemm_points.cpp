#include "calibrate/gemm_points.hpp"

#include <algorithm>
#include <cmath>

namespace parasim::calibrate {
namespace {

int element_bytes(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4;
    case Precision::bf16:
    case Precision::fp16: return 2;
    case Precision::fp8: return 1;
  }
  return 2;
}

constexpr std::size_t kNearest = 8;

}  // namespace

workload::Op gemm_point_op(Precision precision, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
  workload::Op op;
  op.kind = workload::OpKind::gemm;
  op.precision = precision;
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = static_cast<int>(batch);
  const double b = static_cast<double>(batch), dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  op.flops = 2.0 * b * dm * dn * dk;
  op.bytes = element_bytes(precision) * b * (dm * dk + dk * dn + dm * dn);
  return op;
}

GemmPointTable::GemmPointTable(const std::vector<GemmPoint>& points, const std::function<double(const workload::Op&, bool burst)>& law) {
  for (const auto& g : points) {
    const double predicted = law(gemm_point_op(g.precision, g.batch, g.m, g.n, g.k), g.burst);
    if (!(predicted > 0) || !(g.time.value() > 0)) continue;
    entries_.push_back({g.precision,
                        {std::log2(static_cast<double>(std::max<std::int64_t>(1, g.batch))), std::log2(static_cast<double>(g.m)),
                         std::log2(static_cast<double>(g.n)), std::log2(static_cast<double>(g.k))},
                        std::log(g.time.value() / predicted)});
  }
}

double GemmPointTable::ratio(const workload::Op& op) const {
  if (entries_.empty()) return 1.0;
  const double q[4] = {std::log2(static_cast<double>(std::max(1, op.batch))), std::log2(static_cast<double>(std::max<std::int64_t>(1, op.m))),
                       std::log2(static_cast<double>(std::max<std::int64_t>(1, op.n))), std::log2(static_cast<double>(std::max<std::int64_t>(1, op.k)))};
  // (squared distance, log ratio) of the nearest points of this format.
  std::vector<std::pair<double, double>> near;
  for (const auto& e : entries_) {
    if (e.precision != op.precision) continue;
    double d2 = 0;
    for (int i = 0; i < 4; ++i) d2 += (e.log_shape[i] - q[i]) * (e.log_shape[i] - q[i]);
    near.emplace_back(d2, e.log_ratio);
  }
  if (near.empty()) return 1.0;
  const std::size_t count = std::min(kNearest, near.size());
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(count), near.end());
  if (near.front().first == 0.0) {
    // The shape was measured: its own measurement (the mean if it was measured more than once).
    double sum = 0;
    int same = 0;
    for (std::size_t i = 0; i < count && near[i].first == 0.0; ++i, ++same) sum += near[i].second;
    return std::exp(sum / same);
  }
  double weighted = 0, weights = 1.0;  // the law weighs as much as a point at distance 1
  for (std::size_t i = 0; i < count; ++i) {
    const double w = 1.0 / near[i].first;
    weighted += w * near[i].second;
    weights += w;
  }
  return std::exp(weighted / weights);
}

}  // namespace parasim::calibrate
