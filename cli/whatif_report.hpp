#pragma once
// What `parasim whatif` prints and writes: the study as a table, CSV, JSON and a gnuplot script for
// the chart; the same for a sensitivity study. Every number is written in shortest round-trip form
// and nothing depends on time or thread count, so the same inputs give byte-identical files.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "planner/whatif.hpp"
#include "planner/whatif_study.hpp"

namespace parasim::cli {

struct StudyResult {
  planner::Study study;
  std::string scenario;  ///< the scenario file as shown
  std::vector<planner::Variant> variants;
  std::vector<planner::Outcome> outcomes;  ///< one per variant
};

std::string study_table(const StudyResult& r);
nlohmann::json study_json(const StudyResult& r);
std::string study_csv(const StudyResult& r);
/// A gnuplot script drawing throughput (bars, speed-up on top) and the time breakdown (stacked) per
/// variant into `output` (a file name in the script's folder) with the terminal ("svg", "pngcairo").
std::string study_chart(const StudyResult& r, const std::string& terminal, const std::string& output);

struct SensitivityResult {
  std::string scenario;
  planner::SensitivityReport report;
};

std::string sensitivity_table(const SensitivityResult& r);
nlohmann::json sensitivity_json(const SensitivityResult& r);
std::string sensitivity_csv(const SensitivityResult& r);
/// A gnuplot script drawing each parameter's change of iteration time at -x% and +x%.
std::string sensitivity_chart(const SensitivityResult& r, const std::string& terminal, const std::string& output);

/// An outcome as JSON and back (the MPI ranks send their outcomes to rank 0 this way); exact for doubles.
nlohmann::json outcome_json(const planner::Outcome& o);
planner::Outcome outcome_from_json(const nlohmann::json& j);

}  // namespace parasim::cli
