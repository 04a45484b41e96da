#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "calibrate/cost_model.hpp"
#include "tests/topology/fixtures.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {
workload::Op gemm(std::int64_t b, std::int64_t m, std::int64_t n, std::int64_t k) {
  workload::Op op;
  op.kind = workload::OpKind::gemm;
  op.precision = Precision::bf16;
  op.m = m;
  op.n = n;
  op.k = k;
  op.batch = static_cast<int>(b);
  op.flops = 2.0 * b * m * n * k;
  op.bytes = 2.0 * b * (m * k + k * n + m * n);
  return op;
}
}  // namespace

TEST_CASE("GEMM time by hand: main loop, waves, K fill and the fixed kernel time") {
  auto gpu = test::h100();
  gpu.sms = 132;
  const CostModel cost(gpu, default_profile("H100-SXM5-80GB"));
  // The MAMF reference shape 2048 x 2048 x 13312: 16 x 16 = 256 tiles in 2 waves of 132 -> 256/264;
  // K fill 13312 / (13312 + 128). Its time is the measured 80.3% of 989.4 TFLOPS, plus 4 us.
  const auto ref = gemm(1, 2048, 2048, 13312);
  CHECK(cost.op_time(ref).value() == doctest::Approx(ref.flops / (989.4e12 * 0.803) + 4e-6));
  // 1024 x 1024 x 1024: 64 tiles in one wave of 132 (64/132), K fill 1024/1152.
  const auto small = gemm(1, 1024, 1024, 1024);
  const double eff = cost.main_loop_efficiency(Precision::bf16) * 64.0 / 132 * 1024.0 / 1152;
  CHECK(cost.op_time(small).value() == doctest::Approx(small.flops / (989.4e12 * eff) + 4e-6));
}

TEST_CASE("the bundled H100 profile predicts the held-out 30% of XLA's sm_90 matmul table within 10% (median)") {
  std::ifstream in("tests/data/gemm/xla_matmul_perf_table_sm90.csv");
  REQUIRE(in.good());
  auto gpu = test::h100();
  gpu.sms = 132;
  const CostModel cost(gpu, default_profile("H100-SXM5-80GB"));
  std::string line;
  std::vector<double> errors;
  int row = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.rfind("arch", 0) == 0) continue;
    std::stringstream s(line);
    std::string arch, f[8];
    std::getline(s, arch, ',');
    for (auto& x : f) std::getline(s, x, ',');
    // Columns: b, m, n, k, bf16_flops, f32_flops, bf16_time_ns, f32_time_ns.
    const int i = row++;
    if (i % 10 < 7) continue;  // the 70% the shape law was fitted on
    const auto op = gemm(std::stoll(f[0]), std::stoll(f[1]), std::stoll(f[2]), std::stoll(f[3]));
    const double measured = std::stod(f[6]) * 1e-9;
    errors.push_back(std::fabs(cost.op_time(op).value() - measured) / measured);
  }
  REQUIRE(errors.size() == 111);  // rows 7, 8, 9 of every ten of the 375
  std::sort(errors.begin(), errors.end());
  const double median = errors[55];
  CHECK(median <= 0.10);
  MESSAGE("held-out median error " << median);
}
