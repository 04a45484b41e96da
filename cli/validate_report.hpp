#pragma once
// `parasim validate` as a value: the rows of the measured-run files and the --json document of their
// validation, for the CLI and the Python module alike.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/validation.hpp"

namespace parasim::cli {

// Every row of every file; rows that cannot be read are errors, the others run.
struct LoadedRows {
  std::vector<sim::MeasuredRun> runs;
  std::vector<std::string> file_of;
  std::vector<sim::RowError> errors;
  std::vector<std::string> error_file;
};

LoadedRows load_rows(const std::vector<std::string>& files);

/// The project's bundled hardware files (scenarios/hardware), where validate finds the rows' GPUs.
std::string bundled_hardware_dir();

/// Rows the simulator could not run (a feature it does not model), counted.
int skipped_rows(const sim::ValidationReport& report);

/// The --by fields ("family,gpu"), each a row property; InputError naming the first that is not.
std::vector<std::string> residual_fields(const std::string& by);

nlohmann::json memory_json(const sim::MemoryCheck& memory);
nlohmann::json residuals_json(const sim::ValidationReport& report, const std::vector<std::string>& fields);

/// `parasim validate --json`: every row with its prediction, the skipped and unreadable ones, the
/// summaries per file and family, memory, the rule of thumb, and the groups of --by.
nlohmann::json validate_json(const LoadedRows& loaded, const sim::ValidationReport& report, const std::vector<std::string>& fields);

}  // namespace parasim::cli
