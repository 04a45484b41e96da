#pragma once
// The variants of a what-if study, read and evaluated the same way by `parasim whatif` and the Python
// module: the study (a study file or a scenario, with --vary axes and --set overrides), every variant
// loaded before any is evaluated, and each outcome's 80% prediction interval.
#include <string>
#include <vector>

#include "planner/whatif.hpp"
#include "planner/whatif_study.hpp"
#include "sim/scenario.hpp"

namespace parasim::cli {

struct StudyRequest {
  std::string scenario;            ///< a scenario or a study file
  std::vector<std::string> vary;   ///< KEY=V1,V2,... axes added to the study's
  std::vector<std::string> set;    ///< overrides added to every variant
  bool fixed_plan = false;
};

/// The study: the file's, or a one-scenario study named after it, with the request's axes and
/// overrides. An axis varied twice is an InputError naming --vary.
planner::Study read_study(const StudyRequest& request);

/// Every variant loaded before any is evaluated: a bad key or value fails at once, naming the key
/// where the study gave it (--vary, or the study file's line), or the variant it does not suit.
std::vector<sim::Scenario> load_variants(const planner::Study& study, const std::vector<planner::Variant>& grid);

/// Each evaluated outcome's 80% prediction interval, from the bundled error model.
void attach_intervals(std::vector<planner::Outcome>& outcomes);

}  // namespace parasim::cli
