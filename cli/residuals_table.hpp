#pragma once
// `validate --by`'s text: each group of rows with its step-time error beside the rule of thumb's, and
// the peak-memory error of the groups whose rows print a peak, as tables within 120 columns.
#include <string>
#include <vector>

#include "sim/validation.hpp"

namespace parasim::cli {

// In both tables, key columns that would take the table past 120 columns are written under their row
// ("stack NeMo · release 24.03"), the leading ones staying columns.

/// Each group's rows, MAPE, signed bias, the rule of thumb's MAPE and the 80% interval's coverage.
std::string residuals_text(const sim::ValidationReport& report, const std::vector<std::string>& fields);

/// The groups with rows printing a peak: how many, the median, worst and signed memory error; empty
/// when no row prints one.
std::string memory_residuals_text(const sim::ValidationReport& report, const std::vector<std::string>& fields);

}  // namespace parasim::cli
