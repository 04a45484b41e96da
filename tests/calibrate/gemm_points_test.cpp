#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "calibrate/cost_model.hpp"
#include "tests/topology/fixtures.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {

topology::GpuSpec h100() {
  auto gpu = test::h100();
  gpu.sms = 132;
  gpu.peak[static_cast<std::size_t>(Precision::fp16)] = FlopsPerSecond(989.4e12);
  return gpu;
}

struct XlaRow {
  std::int64_t b, m, n, k;
  double seconds;
};

std::vector<XlaRow> xla_rows() {
  std::ifstream in("tests/data/gemm/xla_matmul_perf_table_sm90.csv");
  std::vector<XlaRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("arch", 0) == 0) continue;
    std::stringstream s(line);
    std::string arch, f[8];
    std::getline(s, arch, ',');
    for (auto& x : f) std::getline(s, x, ',');
    // Columns: b, m, n, k, bf16_flops, f32_flops, bf16_time_ns, f32_time_ns.
    rows.push_back({std::stoll(f[0]), std::stoll(f[1]), std::stoll(f[2]), std::stoll(f[3]), std::stod(f[6]) * 1e-9});
  }
  return rows;
}

}  // namespace

TEST_CASE("without measured points the cost model is the shape law, exactly") {
  const auto op = gemm_point_op(Precision::bf16, 1, 4096, 4096, 4096);
  const GemmPointTable empty;
  CHECK(empty.ratio(op) == 1.0);
  // 2·4096³ FLOPs; bytes 2·3·4096² for three bf16 matrices.
  CHECK(op.flops == 2.0 * 4096.0 * 4096.0 * 4096.0);
  CHECK(op.bytes == 2.0 * 3 * 4096.0 * 4096.0);
}

TEST_CASE("a measured shape gives its measurement back; between points the ratio is interpolated in log space") {
  Profile p = default_profile("H100-SXM5-80GB");
  const CostModel law(h100(), p);
  const auto at = gemm_point_op(Precision::bf16, 1, 1024, 1024, 1024);
  const double law_time = law.op_time(at).value();
  // Measured twice as slow as the law at 1024³.
  p.gemm_points.push_back({Precision::bf16, 1, 1024, 1024, 1024, Seconds(2 * law_time), "cupti: test"});
  const CostModel measured(h100(), p);
  CHECK(measured.op_time(at).value() == doctest::Approx(2 * law_time).epsilon(1e-12));
  // 2048 x 1024 x 1024 is one doubling away: d² = 1, w = 1, against the law's weight 1:
  // ratio = exp((1 · ln 2) / (1 + 1)) = √2.
  const auto next = gemm_point_op(Precision::bf16, 1, 2048, 1024, 1024);
  CHECK(measured.op_time(next).value() == doctest::Approx(law.op_time(next).value() * std::sqrt(2.0)).epsilon(1e-12));
  // Four doublings away in each of m, n, k: d² = 3·16 = 48, ratio = exp(ln 2 · (1/48) / (1 + 1/48)) = 2^(1/49).
  const auto far = gemm_point_op(Precision::bf16, 1, 16384, 16384, 16384);
  CHECK(measured.op_time(far).value() == doctest::Approx(law.op_time(far).value() * std::pow(2.0, 1.0 / 49)).epsilon(1e-12));
  // Points of another format leave this one alone.
  const auto fp16 = gemm_point_op(Precision::fp16, 1, 1024, 1024, 1024);
  CHECK(measured.op_time(fp16).value() == law.op_time(fp16).value());
}

TEST_CASE("measured points from 70% of XLA's sm_90 table predict the other 30% better than the law alone") {
  const auto rows = xla_rows();
  REQUIRE(rows.size() == 375);
  Profile p = default_profile("H100-SXM5-80GB");
  const CostModel law(h100(), p);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i % 10 < 7) p.gemm_points.push_back({Precision::bf16, rows[i].b, rows[i].m, rows[i].n, rows[i].k, Seconds(rows[i].seconds), "public: [XLA]"});
  }
  const CostModel measured(h100(), p);
  std::vector<double> law_errors, point_errors;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i % 10 < 7) continue;
    const auto op = gemm_point_op(Precision::bf16, rows[i].b, rows[i].m, rows[i].n, rows[i].k);
    law_errors.push_back(std::fabs(law.op_time(op).value() - rows[i].seconds) / rows[i].seconds);
    point_errors.push_back(std::fabs(measured.op_time(op).value() - rows[i].seconds) / rows[i].seconds);
  }
  REQUIRE(point_errors.size() == 111);
  std::sort(law_errors.begin(), law_errors.end());
  std::sort(point_errors.begin(), point_errors.end());
  MESSAGE("held-out median error: law " << law_errors[55] << ", law + points " << point_errors[55]);
  CHECK(point_errors[55] <= 0.10);
  CHECK(point_errors[55] < law_errors[55]);
}

TEST_CASE("a measured point in a format the GPU has no peak for says nothing there, and breaks nothing") {
  Profile p = default_profile("H100-SXM5-80GB");
  p.gemm_points.push_back({Precision::fp8, 1, 4096, 4096, 4096, Seconds(100e-6), "cupti: another GPU's", true});
  const auto gpu = test::h100();  // a bf16 peak only, as an A100's hardware file has no fp8 one
  REQUIRE_FALSE(gpu.peak_for(Precision::fp8));
  const CostModel with_point(gpu, p);
  p.gemm_points.clear();
  const CostModel without(gpu, p);
  const auto op = gemm_point_op(Precision::bf16, 1, 4096, 4096, 4096);
  CHECK(with_point.op_time(op).value() == without.op_time(op).value());
}
