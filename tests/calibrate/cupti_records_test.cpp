#include <doctest/doctest.h>
#include <cmath>

#include "calibrate/cost_model.hpp"
#include "calibrate/cupti_records.hpp"
#include "calibrate/gemm_points.hpp"
#include "calibrate/profile_fit.hpp"
#include "calibrate/profile_yaml.hpp"
#include "core/schema.hpp"
#include "tests/topology/fixtures.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {

using Kind = ActivityRecord::Kind;

/// Synthetic CUPTI records as the collector's buffer callback hands them over.
struct Writer {
  ActivityLog& log;
  std::uint32_t correlation = 1;
  /// A kernel of `probe`'s `iteration` on `device` from `start` to `end` (us), and its external correlation.
  void kernel(std::size_t probe, int iteration, const std::string& name, double start_us, double end_us, std::uint32_t device = 0) {
    const std::uint32_t c = correlation++;
    log.record({Kind::external_correlation, c, probe_iteration_id(probe, iteration), 0, 0, 0, 0, "", 0});
    log.record({Kind::kernel, c, 0, static_cast<std::uint64_t>(start_us * 1000), static_cast<std::uint64_t>(end_us * 1000), device, 7, name, 0});
  }
  void copy(std::size_t probe, int iteration, double start_us, double end_us, std::uint64_t bytes) {
    const std::uint32_t c = correlation++;
    log.record({Kind::external_correlation, c, probe_iteration_id(probe, iteration), 0, 0, 0, 0, "", 0});
    log.record({Kind::memcpy, c, 0, static_cast<std::uint64_t>(start_us * 1000), static_cast<std::uint64_t>(end_us * 1000), 0, 7, "", bytes});
  }
};

Probe gemm_probe(std::int64_t m, std::int64_t n, std::int64_t k) {
  Probe p;
  p.kind = ProbeKind::gemm;
  p.precision = Precision::bf16;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

}  // namespace

TEST_CASE("a GEMM probe: the sum of each iteration's kernels, warm-up dropped, median of the rest") {
  ActivityLog log;
  const auto p = log.add(gemm_probe(4096, 4096, 4096));
  Writer w{log};
  // Iterations 0 and 1 warm up (50 us each); 2..4 take a GEMM kernel plus a split-K reduction:
  // 10 + 1, 12 + 1, 10.5 + 1 us -> median 11.5 us.
  const double gemm[] = {50, 50, 10, 12, 10.5};
  double t = 0;
  for (int i = 0; i < 5; ++i) {
    w.kernel(p, i, "sm90_xmma_gemm_bf16bf16_bf16f32", t, t + gemm[i]);
    w.kernel(p, i, "cublasLt::splitKreduce_kernel", t + gemm[i], t + gemm[i] + 1);
    t += 100;
  }
  const auto times = log.iterations(p);
  REQUIRE(times.size() == 3);
  CHECK(times[0] == doctest::Approx(11e-6).scale(0));
  const auto m = log.reduce();
  REQUIRE(m.gemms.size() == 1);
  CHECK(m.gemms[0].m == 4096);
  CHECK(m.gemms[0].seconds == doctest::Approx(11.5e-6).scale(0));
  CHECK(log.unclaimed() == 0);
}

TEST_CASE("a collective probe: the slowest GPU of each iteration; protocol from the probe or the kernel name") {
  ActivityLog log;
  Probe c;
  c.kind = ProbeKind::collective;
  c.collective = CollectiveKind::all_reduce;
  c.ranks = 2;
  c.bytes = 1048576;
  c.fabric = Fabric::nvlink;
  c.warmup = 0;
  const auto p = log.add(c);
  Writer w{log};
  // Two GPUs, three iterations: (20, 22), (21, 20), (30, 25) us -> slowest 22, 21, 30 -> median 22 us.
  const double d0[] = {20, 21, 30}, d1[] = {22, 20, 25};
  for (int i = 0; i < 3; ++i) {
    w.kernel(p, i, "ncclDevKernel_AllReduce_Sum_i8_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 100.0 * i, 100.0 * i + d0[i], 0);
    w.kernel(p, i, "ncclDevKernel_AllReduce_Sum_i8_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 100.0 * i, 100.0 * i + d1[i], 1);
  }
  const auto m = log.reduce();
  REQUIRE(m.collectives.size() == 1);
  CHECK(m.collectives[0].seconds == doctest::Approx(22e-6).scale(0));
  CHECK(m.collectives[0].protocol == "LL");     // from the kernel name
  CHECK(m.collectives[0].algorithm == "ring");
  CHECK(m.collectives[0].fabric == Fabric::nvlink);
  CHECK(m.collectives[0].intra_node);
}

TEST_CASE("copies and elementwise kernels become memory samples with the bytes the probe moved") {
  ActivityLog log;
  Probe copy;
  copy.kind = ProbeKind::copy;
  copy.bytes = 2.0 * 1073741824;  // a 1 GiB copy reads and writes 1 GiB
  copy.warmup = 1;
  const auto p = log.add(copy);
  Writer w{log};
  for (int i = 0; i < 4; ++i) w.copy(p, i, 1000.0 * i, 1000.0 * i + 700, 1073741824);
  const auto m = log.reduce();
  REQUIRE(m.memory.size() == 1);
  CHECK(m.memory[0].kind == "copy");
  CHECK(m.memory[0].bytes == 2.0 * 1073741824);
  CHECK(m.memory[0].seconds == doctest::Approx(700e-6).scale(0));
}

TEST_CASE("overlap probes count only iterations that ran at least half beside the other kind, against their probe alone") {
  ActivityLog log;
  const auto alone = log.add(gemm_probe(8192, 8192, 8192));
  Probe beside = gemm_probe(8192, 8192, 8192);
  beside.kind = ProbeKind::gemm_beside_collective;
  beside.alone = alone;
  beside.warmup = 0;
  const auto gemm = log.add(beside);
  Probe comm;
  comm.kind = ProbeKind::collective;
  comm.bytes = 1073741824;
  comm.ranks = 2;
  comm.warmup = 0;
  const auto nccl = log.add(comm);
  Writer w{log};
  // Alone: 100 us after two warm-ups.
  for (int i = 0; i < 4; ++i) w.kernel(alone, i, "sm90_gemm", 1000.0 * i, 1000.0 * i + 100);
  // Beside an all-reduce running 10000-10500 us: iteration 0 (10000-10120) is fully under it, iteration 1
  // (10400-10520) only 100 of 120 us (> half), iteration 2 (10450-10570) 50 of 120 (< half: not counted).
  w.kernel(nccl, 0, "ncclDevKernel_AllReduce_Sum_i8_RING_SIMPLE", 10000, 10500);
  w.kernel(gemm, 0, "sm90_gemm", 10000, 10120);
  w.kernel(gemm, 1, "sm90_gemm", 10400, 10520);
  w.kernel(gemm, 2, "sm90_gemm", 10450, 10570);
  CHECK(log.iterations(gemm).size() == 2);
  const auto m = log.reduce();
  REQUIRE(m.compute_overlap.size() == 1);
  // 120 us beside against 100 us alone: 20% slower.
  CHECK(m.compute_overlap[0].alone_s == doctest::Approx(100e-6).scale(0));
  CHECK(m.compute_overlap[0].overlapped_s == doctest::Approx(120e-6).scale(0));
  CHECK(m.compute_overlap[0].overlapped == 2);
  FitOptions o;
  o.source = "cupti: test";
  const auto fit = fit_profile(default_profile("H100"), m, o);
  CHECK(fit.profile.compute_slowdown_for(ComputeKind::gemm, Fabric::nvlink) == doctest::Approx(0.2).scale(0));
}

TEST_CASE("records outside any probe are counted, probes without records are reported missing") {
  ActivityLog log;
  const auto p = log.add(gemm_probe(256, 256, 256));
  log.record({Kind::kernel, 99, 0, 0, 1000, 0, 7, "stray", 0});
  CHECK(log.unclaimed() == 1);
  std::vector<std::size_t> missing;
  const auto m = log.reduce(&missing);
  CHECK(m.gemms.empty());
  REQUIRE(missing.size() == 1);
  CHECK(missing[0] == p);
}

TEST_CASE("the sweep: formats by compute capability, GEMM shapes and collective sizes") {
  CHECK(gemm_formats(7, 0) == std::vector<Precision>{Precision::fp32, Precision::fp16});
  CHECK(gemm_formats(8, 0) == std::vector<Precision>{Precision::fp32, Precision::fp16, Precision::tf32, Precision::bf16});
  CHECK(gemm_formats(8, 9).back() == Precision::fp8);  // Ada
  CHECK(gemm_formats(9, 0).back() == Precision::fp8);  // Hopper
  // 7 squares (256 .. 16384), 6 skinny, 4 transformer, 6 MoE expert, 2 batched.
  CHECK(gemm_sweep().size() == 25);
  // 1 KiB .. 1 GiB by powers of 4: 4^0 .. 4^10 KiB.
  const auto sizes = collective_sweep();
  CHECK(sizes.size() == 11);
  CHECK(sizes.front() == 1024.0);
  CHECK(sizes.back() == 1073741824.0);
  CHECK(probe_iteration_id(0, 3) == (1u << 16 | 3u));
}

TEST_CASE("from records to a profile YAML: GEMMs timed in bursts at 75% of the H100 law are fitted and written") {
  auto gpu = test::h100();
  gpu.sms = 132;
  Profile truth = default_profile("H100-SXM5-80GB");
  truth.gemm_efficiency[static_cast<std::size_t>(Precision::bf16)] = 0.75;
  truth.sustained_clock = 1.0;  // the probes' few launches run at the boost clock
  const CostModel cost(gpu, truth);
  ActivityLog log;
  Writer w{log};
  double t = 0;
  for (const auto& s : gemm_sweep()) {
    Probe probe = gemm_probe(s.m, s.n, s.k);
    probe.batch = s.batch;
    const auto p = log.add(probe);
    const double us = cost.op_time(gemm_point_op(Precision::bf16, s.batch, s.m, s.n, s.k)).value() * 1e6;
    for (int i = 0; i < 5; ++i, t += 2 * us + 10) w.kernel(p, i, "sm90_xmma_gemm", t, t + us);
  }
  FitOptions o;
  o.gpu = gpu;
  o.source = "cupti: parasim-calibrate-gpu on 1 x H100 (test)";
  auto fit = fit_profile(default_profile("H100-SXM5-80GB"), log.reduce(), o);
  CHECK(fit.profile.gemm_efficiency[static_cast<std::size_t>(Precision::bf16)] == doctest::Approx(0.75).epsilon(1e-5));
  fit.profile.name = "h100-node";
  fit.profile.source = o.source;
  CHECK(fit.profile.sustained_clock == doctest::Approx(0.87));  // the board's, not folded into the efficiency
  const Profile back = parse_profile(yaml::Record(yaml::parse_text(profile_yaml(fit.profile), "node.yaml"), kProfileSchema));
  CHECK(back.gemm_points.size() == 25);
  CHECK(back.gemm_points.front().burst);
  CHECK(back.gemm_points.front().source == "cupti: median of 3 launches");  // 5 launches, 2 warm-ups
  CHECK(back.gemm_efficiency[static_cast<std::size_t>(Precision::bf16)] == doctest::Approx(0.75).epsilon(1e-5));
  CHECK(source_kind(source_of(back, "gemm.efficiency.bf16")) == "cupti");
  // Training runs at the sustained clock: at a measured shape the profile predicts the burst time / 0.87
  // (8192³ is compute-bound; the kernel launch is not slowed by the clock).
  const CostModel trained(gpu, back);
  const auto op = gemm_point_op(Precision::bf16, 1, 8192, 8192, 8192);
  const double launch = back.kernel_launch.value();
  CHECK(trained.op_time(op).value() - launch == doctest::Approx((cost.op_time(op).value() - launch) / 0.87).epsilon(1e-9));
}

TEST_CASE("the sustained clock: a GEMM's last fifth of launches against its first 20") {
  ActivityLog log;
  Writer w{log};
  Probe probe = gemm_probe(8192, 8192, 8192);
  probe.kind = ProbeKind::sustained_gemm;
  const auto id = log.add(probe);
  // 300 launches: the board holds its boost clock for 100 (1000 us each), then the power limit sets it
  // to 1000 / 1150 of that.
  double t = 0;
  for (int i = 0; i < 300; ++i) {
    const double us = i < 100 ? 1000 : 1150;
    w.kernel(id, i, "sm90_xmma_gemm", t, t + us);
    t += us;
  }
  const auto s = log.sustained(id);
  REQUIRE(s);
  CHECK(s->burst_seconds == doctest::Approx(1000e-6));
  CHECK(s->sustained_seconds == doctest::Approx(1150e-6));
  CHECK(s->burst_launches == 20);
  CHECK(s->sustained_launches == 59);  // (300 - 2 warm-ups) / 5
  CHECK(s->launches == 298);
  const auto m = log.reduce();
  REQUIRE(m.sustained);
  FitOptions o;
  o.gpu = test::h100();
  o.source = "cupti: test";
  const auto fit = fit_profile(default_profile("H100-SXM5-80GB"), m, o);
  CHECK(fit.profile.sustained_clock == doctest::Approx(1000.0 / 1150.0));
  CHECK(source_of(fit.profile, "gemm.sustained_clock").find("median of the first 20 launches 1000.0 us, of the last 59 1150.0 us") != std::string::npos);

  // Too short a run to see the power limit says so instead of a number.
  ActivityLog brief;
  Writer b{brief};
  const auto short_id = brief.add(probe);
  for (int i = 0; i < 50; ++i) b.kernel(short_id, i, "sm90_xmma_gemm", 1000.0 * i, 1000.0 * i + 1000);
  std::vector<std::size_t> missing;
  CHECK_FALSE(brief.reduce(&missing).sustained);
  CHECK(missing == std::vector<std::size_t>{short_id});
}

namespace {
// A value of `p` from its little-endian bits: sign, biased exponent, mantissa (normal numbers only).
double decode(Precision p, const std::vector<std::uint8_t>& bytes, std::size_t at) {
  struct Layout {
    std::size_t width;
    int mantissa_bits, exponent_bits, bias;
  };
  const Layout l = p == Precision::fp8    ? Layout{1, 3, 4, 7}
                   : p == Precision::fp16 ? Layout{2, 10, 5, 15}
                   : p == Precision::bf16 ? Layout{2, 7, 8, 127}
                                          : Layout{4, 23, 8, 127};
  std::uint64_t bits = 0;
  for (std::size_t b = 0; b < l.width; ++b) bits |= std::uint64_t{bytes[at + b]} << (8 * b);
  const auto mantissa = bits & ((std::uint64_t{1} << l.mantissa_bits) - 1);
  const auto exponent = static_cast<int>((bits >> l.mantissa_bits) & ((1u << l.exponent_bits) - 1));
  const bool negative = (bits >> (l.mantissa_bits + l.exponent_bits)) & 1;
  const double value = std::ldexp(1.0 + static_cast<double>(mantissa) / std::ldexp(1.0, l.mantissa_bits), exponent - l.bias);
  return negative ? -value : value;
}
}  // namespace

TEST_CASE("GEMM operands are random numbers in [0.5, 2) of either sign in every format, never zeros") {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16, Precision::fp8}) {
    CAPTURE(static_cast<int>(p));
    const auto bytes = random_operands(p, 4096, 7);
    REQUIRE(bytes.size() == 4096);
    const std::size_t width = p == Precision::fp8 ? 1 : (p == Precision::bf16 || p == Precision::fp16) ? 2 : 4;
    int negative = 0, below_one = 0;
    for (std::size_t at = 0; at < bytes.size(); at += width) {
      const double v = decode(p, bytes, at);
      CHECK(std::abs(v) >= 0.5);
      CHECK(std::abs(v) < 2.0);
      negative += v < 0;
      below_one += std::abs(v) < 1;
    }
    const auto n = static_cast<int>(bytes.size() / width);
    CHECK(negative > n / 3);  // both signs, both binades: not a constant fill
    CHECK(negative < 2 * n / 3);
    CHECK(below_one > n / 3);
    CHECK(below_one < 2 * n / 3);
  }
  CHECK(random_operands(Precision::bf16, 64, 1) == random_operands(Precision::bf16, 64, 1));  // reproducible
  CHECK(random_operands(Precision::bf16, 64, 1) != random_operands(Precision::bf16, 64, 2));
}
