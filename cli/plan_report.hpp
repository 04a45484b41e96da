#pragma once
// What `parasim plan --json` prints (and plans.json keeps): the search's figures, every simulated plan
// with its interval, tie group and memory margin, and the launch chosen. One document for the CLI and
// the Python module, so both give the same bytes.
#include <nlohmann/json.hpp>

#include "cli/launch_files.hpp"
#include "cli/plan_search.hpp"
#include "sim/error_model.hpp"

namespace parasim::cli {

/// One simulated plan (1-based `rank` among the simulated) as the document lists it.
nlohmann::json ranked_plan_json(const planner::RankedPlan& plan, const planner::SearchReport& report, int rank, const sim::ErrorModel& errors,
                                Precision precision, const LaunchChoice& choice);

/// The whole document of a search and its launch choice.
nlohmann::json plan_document(const PlanSearch& searched, const LaunchChoice& choice, const sim::ErrorModel& errors);

}  // namespace parasim::cli
