#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "sim/error_model.hpp"

using namespace parasim;
using namespace parasim::sim;

namespace {

ErrorObservation observation(const std::string& family, double comm, double measured_over_predicted) {
  ErrorObservation o;
  o.family = family;
  o.features.comm_share = comm;
  o.features.gpus = 64;
  o.predicted_s = 10.0;
  o.measured_s = 10.0 * measured_over_predicted;
  return o;
}

}  // namespace

TEST_CASE("the prediction interval is the prediction times e^(center + scale z) at the 10th and 90th percentiles of z") {
  ErrorModel m;
  m.rows = 100;
  m.center = {0.05, 0.2, 0, 0, 0};  // 5% slower than predicted, 2% more per 10% of exposed communication
  m.scale = {0.10, 0, 0, 0, 0};
  m.z_low = -1.5;
  m.z_high = 1.2;
  ErrorFeatures x;
  x.comm_share = 0.5;
  const auto i = prediction_interval(m, x, Seconds(4.0));
  // center 0.05 + 0.2 x 0.5 = 0.15; scale 0.10.
  CHECK(i.lo.value() == doctest::Approx(4.0 * std::exp(0.15 - 0.15)));
  CHECK(i.hi.value() == doctest::Approx(4.0 * std::exp(0.15 + 0.12)));
  // The scale never goes below 1%, so an interval is never a point.
  m.scale = {-1, 0, 0, 0, 0};
  const auto narrow = prediction_interval(m, x, Seconds(4.0));
  CHECK(narrow.hi.value() / narrow.lo.value() == doctest::Approx(std::exp(0.01 * 2.7)));
}

TEST_CASE("the error features: the most exposed stage's communication and the idlest stage's bubble, the scale, fp8") {
  Result r;
  r.iteration = Seconds(10);
  r.gpus = 1024;
  r.stages.resize(2);
  r.stages[0].exposed[0] = Seconds(1);
  r.stages[0].exposed[1] = Seconds(0.5);
  r.stages[1].exposed[2] = Seconds(2);
  r.stages[0].bubble = Seconds(3);
  const auto f = error_features(r, Precision::fp8);
  CHECK(f.comm_share == doctest::Approx(0.2));
  CHECK(f.bubble_share == doctest::Approx(0.3));
  const auto v = f.vector();
  CHECK(v[0] == 1.0);
  CHECK(v[3] == doctest::Approx(1.0));  // log2(1024) / 10
  CHECK(v[4] == 1.0);
}

TEST_CASE("fitting the error model: the center follows the residuals, the interval is as wide as the error on a family left out") {
  std::vector<ErrorObservation> obs;
  // Three families whose residual is 0.1 + 0.4 x comm, each with its own shift of ±0.05.
  const std::vector<std::pair<std::string, double>> families{{"a", -0.05}, {"b", 0.0}, {"c", 0.05}};
  for (const auto& [name, shift] : families) {
    for (int i = 0; i < 10; ++i) {
      const double comm = 0.05 * i;
      obs.push_back(observation(name, comm, std::exp(0.1 + 0.4 * comm + shift)));
    }
  }
  const auto m = fit_error_model(obs, "three families");
  REQUIRE_FALSE(m.empty());
  CHECK(m.rows == 30);
  CHECK(m.center[0] == doctest::Approx(0.1).epsilon(0.05));
  CHECK(m.center[1] == doctest::Approx(0.4).epsilon(0.05));
  // Out of family the residuals are the shifts (±0.05 and 0, a little more from the refit), so the
  // interval spans about them: at least the ±0.05, not the in-sample zero.
  ErrorFeatures x;
  x.gpus = 64;
  const auto i = prediction_interval(m, x, Seconds(10.0));
  CHECK(std::log(i.hi.value() / 10.0) - std::log(i.lo.value() / 10.0) > 0.09);
  CHECK(std::log(i.hi.value() / 10.0) - std::log(i.lo.value() / 10.0) < 0.3);
  // Too few rows: no model.
  obs.resize(5);
  CHECK(fit_error_model(obs, "five").empty());
}

TEST_CASE("fitting the error model: how wide the error is follows the cluster size alone, not which families share a feature") {
  // Two families with exposed communication off by ±20%, two without it off by ±2%: in sample
  // |residual| grows with the communication share, but that is which families have it. The scale's
  // communication slope stays zero; its width is the families' mean, 0.11, at any share.
  std::vector<ErrorObservation> obs;
  for (const std::string family : {"comm-a", "comm-b", "quiet-a", "quiet-b"}) {
    const bool comm = family.rfind("comm", 0) == 0;
    for (int i = 0; i < 8; ++i) obs.push_back(observation(family, comm ? 0.4 : 0.0, std::exp((i % 2 ? 1 : -1) * (comm ? 0.2 : 0.02))));
  }
  const auto m = fit_error_model(obs, "comm and quiet");
  REQUIRE_FALSE(m.empty());
  CHECK(m.scale[1] == 0.0);
  CHECK(m.scale[2] == 0.0);
  CHECK(m.scale[4] == 0.0);
  CHECK(m.scale[0] + m.scale[3] * 0.6 == doctest::Approx(0.11).epsilon(0.05));  // 64 GPUs: log2 / 10 = 0.6
}

TEST_CASE("fitting the error model: a family's deviations are standardized by a scale fitted without it") {
  // Three calm families off by ±2%, one wild family off by ±40%. Fitted without the wild family the
  // scale is 0.02, so its rows stand at z = ±20; with it in the fit (0.115) they would stand at ±3.5
  // and the interval would end at the wild rows' ±0.4 exactly. A new family may be as far off the
  // rest as the wild one is: the interval reaches well past it.
  std::vector<ErrorObservation> obs;
  for (const std::string family : {"calm-a", "calm-b", "calm-c"}) {
    for (int i = 0; i < 8; ++i) obs.push_back(observation(family, 0.0, std::exp(i % 2 ? 0.02 : -0.02)));
  }
  for (int i = 0; i < 8; ++i) obs.push_back(observation("wild", 0.0, std::exp(i % 2 ? 0.4 : -0.4)));
  const auto m = fit_error_model(obs, "calm and wild");
  REQUIRE_FALSE(m.empty());
  CHECK(m.z_low == doctest::Approx(-20).epsilon(0.05));
  CHECK(m.z_high == doctest::Approx(20).epsilon(0.05));
  ErrorFeatures x;
  x.gpus = 64;
  const auto i = prediction_interval(m, x, Seconds(10.0));
  CHECK(std::log(i.hi.value() / 10.0) > 1.0);
  CHECK(std::log(i.lo.value() / 10.0) < -1.0);
}

TEST_CASE("the error model file: written and read back; a bad one names its file, line and key") {
  ErrorModel m;
  m.rows = 505;
  m.fitted_on = "505 published rows";
  m.center = {0.01, -0.2, 0.05, 0.1, 0.04};
  m.scale = {0.2, 0.1, 0.01, -0.1, 0.02};
  m.z_low = -1.5;
  m.z_high = 1.25;
  const auto dir = std::filesystem::temp_directory_path() / "parasim_error_model_test";
  std::filesystem::create_directories(dir);
  const auto file = dir / "model.yaml";
  std::ofstream(file) << error_model_yaml(m);
  const auto back = load_error_model(file);
  CHECK(back.rows == 505);
  CHECK(back.fitted_on == m.fitted_on);
  for (std::size_t i = 0; i < kErrorFeatures; ++i) {
    CHECK(back.center[i] == doctest::Approx(m.center[i]));
    CHECK(back.scale[i] == doctest::Approx(m.scale[i]));
  }
  CHECK(back.z_low == doctest::Approx(-1.5));
  std::ofstream(file) << "fitted_on: x\nrows: 3\ncenter: {intercept: 0, comm: 0, bubble: 0, scale: 0, fp8: 0}\n"
                         "scale: {intercept: 0, comm: 0, bubble: 0, scale: 0, fp8: 0}\nz_low: 2\nz_high: 1\n";
  CHECK_THROWS_WITH_AS(load_error_model(file), doctest::Contains("z_low"), InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the error of a difference between plans: the median |residual a - residual b|, each family's pairs weighing the same") {
  // Family a: three pairs off by 0.01, 0.02 and 0.30 (weight 1/3 each); family b: one pair off by
  // 0.05 (weight 1). Sorted: 0.01 (1/3), 0.02 (2/3), 0.05 (5/3), 0.30 (2) of a total 2: the median
  // is the first value whose cumulative weight reaches 1, 0.05; unweighted it would be 0.02 or 0.05.
  const std::vector<PlanPair> pairs{{0.10, 0.09, "a"}, {0.0, 0.02, "a"}, {0.3, 0.0, "a"}, {-0.05, 0.0, "b"}};
  CHECK(difference_error(pairs) == doctest::Approx(0.05));
  // Without family b the median of a's three is 0.02.
  CHECK(difference_error({pairs[0], pairs[1], pairs[2]}) == doctest::Approx(0.02));
  CHECK(difference_error({}) == 0.0);
}
