#pragma once
// The 80% prediction interval every predicted iteration time carries in the CLI's output, from the
// bundled error model (scenarios/error_model.yaml, fitted by `parasim validate --fit-error-model`).
#include <nlohmann/json.hpp>
#include <string>

#include "sim/error_model.hpp"

namespace parasim::cli {

/// The bundled model; an InputError naming the file when it is unreadable.
sim::ErrorModel bundled_error_model();
/// The interval of a simulated iteration under `model`.
sim::Interval interval_of(const sim::ErrorModel& model, const sim::Result& result, Precision precision);
/// "3.1 s - 3.9 s".
std::string interval_text(const sim::Interval& interval);
/// {"lo": seconds, "hi": seconds}.
nlohmann::json interval_json(const sim::Interval& interval);

}  // namespace parasim::cli
