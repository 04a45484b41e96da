#include <doctest/doctest.h>

#include <cmath>

#include "sim/residuals.hpp"

using namespace parasim::sim;

namespace {

// A simulated row whose measured MFU is `measured_mfu` and whose prediction is off by `error`.
RowResult row(const MeasuredRun& run, double measured_mfu, double error) {
  RowResult r;
  r.run = &run;
  r.predicted_s = run.measured_iteration_s * (1 + error);
  r.error = error;
  // The simulated MFU of the predicted time: the same FLOPs over a different time.
  r.mfu = measured_mfu * run.measured_iteration_s / r.predicted_s;
  return r;
}

MeasuredRun run_of(const char* id, const char* gpu, int seq, int gpus) {
  MeasuredRun m;
  m.id = id;
  m.family = std::string(id).substr(0, 1);
  m.gpu = gpu;
  m.seq_len = seq;
  m.gpus = gpus;
  m.measured_iteration_s = 2.0;
  return m;
}

}  // namespace

TEST_CASE("the rule of thumb's MFU is the one that minimizes its MAPE: the median of the measured MFUs weighted by them, by hand") {
  const MeasuredRun a = run_of("a", "h100", 2048, 8), b = run_of("b", "h100", 2048, 8), c = run_of("c", "h100", 2048, 8);
  // Measured MFUs 0.2, 0.3, 0.6: weights sum to 1.1; sorted by 1/a the first (0.6, weight 0.6) passes
  // half of it, so c = 0.6. Its errors a/c - 1: -2/3, -1/2, 0: MAPE 0.389, against 0.444 at c = 0.3
  // and 0.407 at 0.45.
  std::vector<RowResult> rows{row(a, 0.2, 0.1), row(b, 0.3, -0.05), row(c, 0.6, 0.0)};
  const double mfu = fit_rule_of_thumb(rows);
  CHECK(mfu == doctest::Approx(0.6));
  apply_rule_of_thumb(rows, mfu);
  CHECK(rows[0].rule_of_thumb_error == doctest::Approx(-2.0 / 3));
  CHECK(rows[1].rule_of_thumb_error == doctest::Approx(-0.5));
  CHECK(rows[2].rule_of_thumb_error == doctest::Approx(0.0).scale(1));
  auto mape = [&](double k) {
    double s = 0;
    for (double x : {0.2, 0.3, 0.6}) s += std::fabs(x / k - 1);
    return s / 3;
  };
  for (double other : {0.3, 0.45, 0.5, 0.7}) CHECK(mape(mfu) < mape(other));
  // Skipped rows take no part.
  rows[1].skipped = "not simulated";
  CHECK(fit_rule_of_thumb(rows) == doctest::Approx(0.6));
  CHECK(fit_rule_of_thumb({}) == 0);
}

TEST_CASE("residuals grouped by row properties: count, MAPE, signed bias and the rule of thumb's MAPE on the same rows") {
  const MeasuredRun a = run_of("x1", "h100", 2048, 8), b = run_of("x2", "h100", 8192, 1024), c = run_of("y1", "a100", 131072, 64);
  ValidationReport report;
  report.rows = {row(a, 0.4, -0.10), row(b, 0.4, 0.30), row(c, 0.2, -0.20)};
  report.file_of = {"f.yaml", "f.yaml", "g.yaml"};
  report.rows[1].exposed_comm_share = 0.3;
  report.rows[1].chosen.cp = 4;
  apply_rule_of_thumb(report.rows, 0.4);  // errors 0, 0, -0.5
  CHECK(row_property(report.rows[0], "f.yaml", "seq") == "<=2K");
  CHECK(row_property(report.rows[1], "f.yaml", "seq") == "8K");
  CHECK(row_property(report.rows[2], "g.yaml", "seq") == ">32K");
  CHECK(row_property(report.rows[1], "f.yaml", "gpus") == "513-4096");
  CHECK(row_property(report.rows[1], "f.yaml", "comm") == "25-50%");
  CHECK(row_property(report.rows[1], "f.yaml", "cp") == "cp>1");
  CHECK(row_property(report.rows[0], "f.yaml", "cp") == "cp1");
  const auto by_gpu = group_residuals(report, {"gpu"});
  REQUIRE(by_gpu.size() == 2);
  CHECK(by_gpu[0].key == std::vector<std::string>{"a100"});
  CHECK(by_gpu[0].rows == 1);
  CHECK(by_gpu[0].bias == doctest::Approx(-0.2));
  CHECK(by_gpu[0].rule_of_thumb_mape == doctest::Approx(0.5));
  CHECK(by_gpu[1].key == std::vector<std::string>{"h100"});
  CHECK(by_gpu[1].rows == 2);
  CHECK(by_gpu[1].mape == doctest::Approx(0.2));
  CHECK(by_gpu[1].bias == doctest::Approx(0.1));
  CHECK(by_gpu[1].rule_of_thumb_mape == doctest::Approx(0).scale(1));
  const auto two = group_residuals(report, {"file", "family"});
  REQUIRE(two.size() == 2);
  CHECK(two[0].key == std::vector<std::string>{"f.yaml", "x"});
  CHECK(two[1].key == std::vector<std::string>{"g.yaml", "y"});
  CHECK(is_residual_field("comm"));
  CHECK_FALSE(is_residual_field("colour"));
}

TEST_CASE("the release a row's source names: NVIDIA's YY.MM, Megatron-Core's rX.Y, else the year the source or notes date the run") {
  MeasuredRun m;
  m.source = "NVIDIA/dgxc-benchmarking: llama3.1/README.md (release 25.04.02, NeMo 2 / Megatron-Core)";
  CHECK(release_of(m) == "25.04");
  m.source = "NVIDIA/NeMo: docs/source/performance/performance_long_sequence.md (LLAMA2-7B FP8, DGX-H100, NeMo 24.03.01)";
  CHECK(release_of(m) == "24.03");
  m.source = "NVIDIA-NeMo/Megatron-Bridge: docs/performance-summary-archive.md (NeMo 25.09 container, Pre-Training, DGX-H100)";
  CHECK(release_of(m) == "25.09");
  m.source = "NVIDIA/Megatron-LM README \"Performance Benchmarking\" (Megatron-Core r0.8.0) (weak scaling table)";
  CHECK(release_of(m) == "r0.8");
  m.source = "pytorch/torchtitan: benchmarks/llama3_h100_202412_torchtitan.md (Dec 2024; also docs/performance.md)";
  CHECK(release_of(m) == "2024");
  // The year may be in the notes only; token and GPU counts are not years, nor are version parts.
  m.source = "bigscience-workshop/bigscience: train/tr11-176B-ml/chronicles-prequel.md";
  m.notes = "BLOOM-176B topology search, run date 2022-02-21, 2048 sequences on 384 GPUs";
  CHECK(release_of(m) == "2022");
  m.notes = "seq 2048 on 2048 GPUs; v1.10.3";
  CHECK(release_of(m) == "unstated");
  CHECK(is_residual_field("release"));
}

TEST_CASE("memory against the printed peaks: median and worst of the absolute errors, bias of the signed ones, rows without a peak left out") {
  MeasuredRun run;
  std::vector<RowResult> rows(4);
  for (auto& r : rows) r.run = &run;
  rows[0].memory_error = -0.30;
  rows[1].memory_error = 0.10;
  rows[2].memory_error = 0.05;  // rows[3] printed no peak
  const auto m = check_memory({&rows[0], &rows[1], &rows[2], &rows[3]});
  CHECK(m.rows == 3);
  CHECK(m.median == doctest::Approx(0.10));
  CHECK(m.worst == doctest::Approx(0.30));
  CHECK(m.bias == doctest::Approx(-0.05));
  rows[1].skipped = "no bundled hardware";
  CHECK(check_memory({&rows[0], &rows[1]}).rows == 1);
  CHECK(check_memory({&rows[3]}).rows == 0);
}
