#include <doctest/doctest.h>

#include <cmath>

#include "calibrate/cost_model.hpp"
#include "calibrate/profile_fit.hpp"
#include "calibrate/profile_yaml.hpp"
#include "tests/topology/fixtures.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {

topology::GpuSpec h100() {
  auto gpu = test::h100();
  gpu.sms = 132;
  return gpu;
}

FitOptions options() {
  FitOptions o;
  o.gpu = h100();
  o.source = "cupti: test";
  return o;
}

const FitQuality& quality(const FitResult& r, const std::string& what) {
  for (const auto& q : r.quality) {
    if (q.what == what) return q;
  }
  FAIL("no fit named " << what);
  return r.quality.front();
}

}  // namespace

TEST_CASE("GEMM efficiency: GEMMs timed by the law at 70% are fitted back to 70%") {
  Profile truth = default_profile("H100-SXM5-80GB");
  truth.gemm_efficiency[static_cast<std::size_t>(Precision::bf16)] = 0.70;
  const CostModel cost(h100(), truth);
  Measurements m;
  for (std::int64_t s : {512, 1024, 2048, 4096, 8192}) {
    const auto op = gemm_point_op(Precision::bf16, 1, s, s, s / 2);
    m.gemms.push_back({Precision::bf16, 1, s, s, s / 2, cost.op_time(op).value(), 1});
  }
  const auto r = fit_profile(default_profile("H100-SXM5-80GB"), m, options());
  // The law is the model the samples came from: the fit finds 0.70 and reproduces every time.
  CHECK(r.profile.gemm_efficiency[static_cast<std::size_t>(Precision::bf16)] == doctest::Approx(0.70).epsilon(1e-6));
  const auto& q = quality(r, "gemm bf16");
  CHECK(q.fitted);
  CHECK(q.r2 == doctest::Approx(1.0).epsilon(1e-9));
  CHECK(q.median_error < 1e-6);
  CHECK(source_of(r.profile, "gemm.efficiency.bf16").rfind("cupti: test; fitted on 5 GEMMs", 0) == 0);
  // Every GEMM is kept as a measured point with its source.
  REQUIRE(r.profile.gemm_points.size() == 5);
  CHECK(r.profile.gemm_points[0].source == "cupti: median of 1 launch");
  CHECK_FALSE(r.profile.gemm_points[0].burst);  // samples not marked burst are training-clock times
}

TEST_CASE("collective latency and bandwidth: least squares recovers the fabric's figures") {
  // 8-rank ring all-reduces over NVLink at 450 GB/s per direction: time = 10 us launch + 14 steps x 3 us
  // + 2·7/8·S / (450 GB/s x 0.8), sizes 64 KiB to 1 GiB, Simple protocol.
  Measurements m;
  for (double s = 65536; s <= 1073741824.0; s *= 4) {
    const double t = 10e-6 + 14 * 3e-6 + 1.75 * s / (450e9 * 0.8);
    m.collectives.push_back({CollectiveKind::all_reduce, 8, s, t, "ring", "SIMPLE", true, std::nullopt});
  }
  const auto r = fit_profile(default_profile("H100-SXM5-80GB"), m, options());
  CHECK(r.profile.nvlink.efficiency == doctest::Approx(0.8).epsilon(1e-9));
  CHECK(r.profile.nvlink.step_latency.value() == doctest::Approx(3e-6).epsilon(1e-9));
  // The LL figures are untouched: no LL samples.
  CHECK(r.profile.nvlink.ll_efficiency == default_profile("H100-SXM5-80GB").nvlink.ll_efficiency);
  const auto& q = quality(r, "nccl nvlink SIMPLE");
  CHECK(q.fitted);
  CHECK(q.samples == 8);
  CHECK(q.worst_error < 1e-9);
  REQUIRE(r.profile.collective_points.size() == 8);
  // 1 GiB in 10 + 42 us + 1.75 GiB / 360 GB/s: busbw 2·7/8 · S / t.
  const auto& big = r.profile.collective_points.back();
  CHECK(big.bytes == 1073741824.0);
  CHECK(bus_bandwidth(big.collective, big.ranks, big.bytes, big.time) == doctest::Approx(1.75 * 1073741824.0 / big.time.value()).scale(0));
}

TEST_CASE("a fit that explains too little keeps the base figure; the points stay") {
  // GEMMs of one shape whose times scatter by factors of 3: no efficiency reproduces them within 25%.
  Measurements m;
  for (double t : {10e-6, 30e-6, 90e-6, 10e-6, 30e-6, 90e-6}) m.gemms.push_back({Precision::bf16, 1, 1024, 1024, 1024, t, 1});
  const Profile base = default_profile("H100-SXM5-80GB");
  const auto r = fit_profile(base, m, options());
  CHECK(r.profile.gemm_efficiency == base.gemm_efficiency);
  const auto& q = quality(r, "gemm bf16");
  CHECK_FALSE(q.fitted);
  CHECK(q.note.find("base figure kept") != std::string::npos);
  // One shape, one point: the median of 10, 10, 30, 30, 90, 90 us is 30 us.
  REQUIRE(r.profile.gemm_points.size() == 1);
  CHECK(r.profile.gemm_points[0].time.value() == doctest::Approx(30e-6).scale(0));
}

TEST_CASE("overlap slowdown: overlapped / alone − 1, weighted by the overlapped launches") {
  Measurements m;
  // A GEMM kernel: 10 us alone, 12 us beside NVLink collectives (x2 launches); another 20 -> 21 us (x2):
  // (2 x 0.2 + 2 x 0.05) / 4 = 0.125.
  m.compute_overlap.push_back({ComputeKind::gemm, true, std::nullopt, 10e-6, 12e-6, 5, 2});
  m.compute_overlap.push_back({ComputeKind::gemm, true, std::nullopt, 20e-6, 21e-6, 3, 2});
  // A collective 100 us alone, 110 us beside compute: 0.1.
  m.comm_overlap.push_back({true, std::nullopt, 100e-6, 110e-6, 4, 4});
  // No datasheet needed for ratios: the fabric of a node with NVLink is assumed.
  FitOptions o;
  o.source = "trace: x";
  const auto r = fit_profile(default_profile("H100-SXM5-80GB"), m, o);
  CHECK(r.profile.compute_slowdown_for(ComputeKind::gemm, Fabric::nvlink) == doctest::Approx(0.125).scale(0));
  CHECK(r.profile.comm_slowdown[static_cast<std::size_t>(Fabric::nvlink)] == doctest::Approx(0.1).scale(0));
  CHECK(source_of(r.profile, "overlap.compute_slowdown.gemm.nvlink").rfind("trace: x; 2 kernels", 0) == 0);
}

TEST_CASE("without a datasheet only points and overlap are fitted, and the report says why") {
  Measurements m;
  for (std::int64_t s : {512, 1024, 2048}) m.gemms.push_back({Precision::bf16, 1, s, s, s, 1e-5 * static_cast<double>(s) / 512, 1});
  m.memory.push_back({"copy", 1e9, 1e-3});
  FitOptions o;
  o.source = "trace: x";
  const Profile base = default_profile("A100");
  const auto r = fit_profile(base, m, o);
  CHECK(diff_numbers(base, r.profile).empty());
  CHECK(quality(r, "gemm bf16").note == "no hardware for this GPU (--hardware): efficiency not fitted, points kept");
  CHECK(quality(r, "memory").note == "no hardware for this GPU (--hardware): efficiency not fitted, points kept");
  CHECK(r.profile.gemm_points.size() == 3);
  CHECK(r.profile.memory_points.size() == 1);
}

TEST_CASE("error statistics: R² of log time, median and worst relative error") {
  // Predictions 10% high on 1 and 4, exact on 2: errors 0.1, 0, 0.1; median 0.1, worst 0.1.
  const auto s = error_stats({1.1, 2.0, 4.4}, {1.0, 2.0, 4.0});
  CHECK(s.median == doctest::Approx(0.1).scale(0));
  CHECK(s.worst == doctest::Approx(0.1).scale(0));
  // Residuals ln 1.1 on two of three points against a spread of ln 1, ln 2, ln 4 about their mean ln 2:
  // 1 − 2·ln²1.1 / (2·ln²2).
  CHECK(s.r2 == doctest::Approx(1 - 2 * std::pow(std::log(1.1), 2) / (2 * std::pow(std::log(2.0), 2))).scale(0));
  // Ring steps: all-reduce 2(n−1), all-gather n−1, send/recv 1, tree all-reduce 2⌈log2 n⌉.
  CHECK(collective_steps(CollectiveKind::all_reduce, "ring", 8) == 14);
  CHECK(collective_steps(CollectiveKind::all_gather, "ring", 8) == 7);
  CHECK(collective_steps(CollectiveKind::send_recv, "", 2) == 1);
  CHECK(collective_steps(CollectiveKind::all_reduce, "tree", 16) == 8);
}
