#include <doctest/doctest.h>

#include <cmath>

#include "calibrate/megatron_log.hpp"
#include "sim/log_fit.hpp"
#include "sim/megatron_log_run.hpp"
#include "sim/validation.hpp"

using namespace parasim;
using namespace parasim::sim;

namespace {
const std::filesystem::path kHardware = "scenarios/hardware";

std::vector<MeasuredRun> h100_runs() {
  std::vector<MeasuredRun> runs;
  for (const char* f : {"tests/data/logs/megatron/h100_gpt0.7b_mb4.log", "tests/data/logs/megatron/h100_gpt0.7b_mb2_full_recompute.log",
                        "tests/data/logs/megatron/h100_gpt1.7b_s512_mb16.log"}) {
    runs.push_back(megatron_log_run(calibrate::read_megatron_log(f), {"h100-sxm5-80gb", 8, std::nullopt}).run);
  }
  return runs;
}
}  // namespace

TEST_CASE("a correction scales the profile's efficiencies, stops at 1 and says where it came from") {
  const auto base = calibrate::default_profile("H100-SXM5-80GB");
  const auto p = corrected_profile(base, {0.5, 2.0, 1.0}, "log: test");
  CHECK(p.gemm_efficiency[static_cast<std::size_t>(Precision::bf16)] == doctest::Approx(0.5 * base.gemm_efficiency[static_cast<std::size_t>(Precision::bf16)]));
  CHECK(p.memory_efficiency == 1.0);  // 0.85 x 2 stops at 1
  CHECK(p.sources.at("memory.efficiency") == "log: test: 0.85 x 2 (stopped at 1)");
  CHECK(p.nvlink.efficiency == base.nvlink.efficiency);  // network 1: untouched
  CHECK(p.sources.count("fabrics.nvlink") == base.sources.count("fabrics.nvlink"));
}

TEST_CASE("the fit recovers a known correction from runs timed with it, and predicts each held out") {
  auto runs = h100_runs();
  const auto base = calibrate::default_profile("H100-SXM5-80GB");
  const LogCorrection truth{0.8, 0.6, 1.0};
  const auto timed = corrected_profile(base, truth, "log: truth");
  for (auto& r : runs) r.measured_iteration_s = simulate_row(r, kHardware, &timed).predicted_s;
  const auto fit = fit_correction(runs, kHardware, base);
  CHECK_FALSE(fit.network_fitted);  // one GPU each: nothing crosses a fabric
  CHECK(fit.correction.gemm == doctest::Approx(0.8).epsilon(0.01));
  CHECK(fit.correction.memory == doctest::Approx(0.6).epsilon(0.01));
  CHECK(fit.correction.network == 1.0);
  REQUIRE(fit.fitted_error.size() == 3);
  REQUIRE(fit.held_out_error.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(std::fabs(fit.fitted_error[i]) < 0.01);
    CHECK(std::fabs(fit.held_out_error[i]) < 0.10);  // two runs of other shapes pin the third within 10%
    CHECK(fit.uncorrected_error[i] < -0.2);           // the bundled profile is 20-40% fast on them
  }
}
