#pragma once
// How far a predicted iteration time may be from the measured one: an 80% prediction interval from
// a fitted error model. The residual of a prediction is y = ln(measured / predicted). It is modelled
// as y = center(x) + scale(x)·z, both linear (x: the exposed communication share of the most exposed
// stage, the bubble share of the most idle stage, the scale as log2(GPUs) / 10, and fp8; the scale on
// the cluster size alone), fitted on validate's published rows: center by least squares;
// scale by least squares on |y − center'(x)| (at least 1%) and z's 10th and 90th percentiles, where
// center' is fitted without the row's own source family and z = (y − center'(x)) / scale'(x) with
// scale' also fitted without it, so that the interval is as wide as the error on a stack or source
// the model has not seen (a family's shared bias included), not on the rows it was fitted to.
// The interval of a prediction t is [t·e^(center + scale·z10), t·e^(center + scale·z90)].
// Coverage is checked out of sample: fitted leaving one source family out at a time, on that family.
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "core/precision.hpp"
#include "core/units.hpp"
#include "sim/result.hpp"

namespace parasim::sim {

inline constexpr std::size_t kErrorFeatures = 5;
/// The names of the features, in order, as the model file spells them.
inline constexpr std::array<std::string_view, kErrorFeatures> kErrorFeatureNames = {"intercept", "comm", "bubble", "scale", "fp8"};

struct ErrorFeatures {
  double comm_share = 0;    ///< of the iteration, on the stage that waits longest for communication
  double bubble_share = 0;  ///< of the iteration, on the stage idle longest with nothing in flight
  int gpus = 1;
  bool fp8 = false;
  std::array<double, kErrorFeatures> vector() const;
};
ErrorFeatures error_features(const Result& result, Precision precision);

struct ErrorModel {
  std::array<double, kErrorFeatures> center{};
  std::array<double, kErrorFeatures> scale{};
  double z_low = 0, z_high = 0;  ///< the 10th and 90th percentiles of the standardized residuals
  /// The error of a difference between two plans of one job: the median of |y_a − y_b| over the
  /// published pairs of rows that differ only in the plan (each family's pairs weighing the same).
  /// Half the published pairs' predicted ratios are off by more than e^difference, so plans whose
  /// predicted times are closer than that are tied.
  double difference = 0;
  /// The memory model's median |predicted − published| / published peak: the margin a plan keeps to
  /// be preferred among tied plans (0 where no row printed a peak).
  double memory_margin = 0;
  int rows = 0;                  ///< rows fitted on
  std::string fitted_on;         ///< what they were
  bool empty() const { return rows == 0; }
};

struct Interval {
  Seconds lo, hi;
};
Interval prediction_interval(const ErrorModel& model, const ErrorFeatures& x, Seconds predicted);

/// One prediction against its measurement.
struct ErrorObservation {
  ErrorFeatures features;
  double predicted_s = 0, measured_s = 0;
  std::string family;  ///< the source family (validate's), whose shared bias the scale must cover
};
/// The model fitted on these observations (an empty model when there are fewer than kErrorFeatures + 2).
ErrorModel fit_error_model(const std::vector<ErrorObservation>& observations, const std::string& fitted_on);

/// Two published rows of one job that differ in the plan: their residuals and their family.
struct PlanPair {
  double residual_a = 0, residual_b = 0;  ///< ln(measured / predicted) of each
  std::string family;
};
/// ErrorModel::difference from the pairs (0 when there are none).
double difference_error(const std::vector<PlanPair>& pairs);

/// The model file: `parasim validate … --fit-error-model FILE` writes it; simulate, plan and whatif
/// read the bundled one (scenarios/error_model.yaml). A bad file is an InputError.
ErrorModel load_error_model(const std::filesystem::path& file);
std::string error_model_yaml(const ErrorModel& model);

}  // namespace parasim::sim
