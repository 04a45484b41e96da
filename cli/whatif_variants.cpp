#include "cli/whatif_variants.hpp"

#include <fmt/format.h>
#include <filesystem>

#include "cli/prediction_interval.hpp"
#include "core/error.hpp"

namespace parasim::cli {

planner::Study read_study(const StudyRequest& o) {
  planner::Study study;
  if (planner::is_study_file(o.scenario)) {
    study = planner::load_study(o.scenario);
  } else {
    study.name = std::filesystem::path(o.scenario).stem().string();
    study.scenario = o.scenario;
  }
  study.set.insert(study.set.end(), o.set.begin(), o.set.end());
  for (const auto& text : o.vary) {
    auto axis = planner::parse_vary(text);
    for (const auto& other : study.axes) {
      if (other.key == axis.key) throw InputError({"--vary", 0, 0}, axis.key, "varied twice");
    }
    study.axes.push_back(std::move(axis));
  }
  study.fixed_plan = study.fixed_plan || o.fixed_plan;
  return study;
}

std::vector<sim::Scenario> load_variants(const planner::Study& study, const std::vector<planner::Variant>& grid) {
  std::vector<sim::Scenario> out;
  const auto check = study.fixed_plan ? sim::PlanCheck::strict : sim::PlanCheck::drop_unsuitable;
  for (const auto& v : grid) {
    try {
      out.push_back(sim::load_scenario(study.scenario, study.overrides(v), check));
    } catch (const InputError& e) {
      for (const auto& axis : study.axes) {
        if (e.where().file == "--set" && e.key_path() == axis.key) throw InputError(axis.origin, e.key_path(), e.message());
      }
      // Valid values that do not go together with the rest of the scenario: say which variant.
      std::string variant;
      for (std::size_t i = 0; i < study.axes.size(); ++i) variant += fmt::format("{}{}={}", i ? ", " : "", study.axes[i].key, v.values[i]);
      throw InputError(e.where(), e.key_path(), fmt::format("{} (variant {})", e.message(), variant));
    }
  }
  return out;
}

void attach_intervals(std::vector<planner::Outcome>& outcomes) {
  const auto model = bundled_error_model();
  for (auto& o : outcomes) {
    if (o.failure) continue;
    sim::ErrorFeatures x;
    x.comm_share = o.comm_share;
    x.bubble_share = o.bubble_share;
    x.gpus = o.gpus;
    x.fp8 = o.fp8;
    const auto i = sim::prediction_interval(model, x, Seconds(o.iteration_s));
    o.interval_lo_s = i.lo.value();
    o.interval_hi_s = i.hi.value();
  }
}

}  // namespace parasim::cli
