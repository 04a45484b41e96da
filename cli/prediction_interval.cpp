#include "cli/prediction_interval.hpp"

#include <fmt/format.h>

#include "core/units.hpp"

namespace parasim::cli {

sim::ErrorModel bundled_error_model() { return sim::load_error_model(std::string(PARASIM_SOURCE_DIR) + "/scenarios/error_model.yaml"); }

sim::Interval interval_of(const sim::ErrorModel& model, const sim::Result& result, Precision precision) {
  return sim::prediction_interval(model, sim::error_features(result, precision), result.iteration);
}

std::string interval_text(const sim::Interval& interval) { return fmt::format("{} - {}", format_duration(interval.lo), format_duration(interval.hi)); }

nlohmann::json interval_json(const sim::Interval& interval) { return {{"lo", interval.lo.value()}, {"hi", interval.hi.value()}}; }

}  // namespace parasim::cli
