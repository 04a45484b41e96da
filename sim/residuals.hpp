#pragma once
// Where validate's errors sit, and what a rule of thumb would have scored on the same rows.
//   Rule of thumb: every row's step time as model FLOPs / (GPUs x the dense peak of its format x c),
//   one constant c for all rows, the one that minimizes their MAPE (fitted in hindsight on the rows
//   validated: a fit, not a model). A row's measured MFU is a = model FLOPs / (GPUs x peak x measured
//   time), so the rule's error is a / c − 1; the MAPE-minimizing c is the median of a weighted by 1/a.
//   Residual groups: the rows split by any of their properties (validate --by), each group's count,
//   MAPE, signed bias and the rule of thumb's MAPE on the same rows.
#include <string>
#include <string_view>
#include <vector>

#include "sim/validation.hpp"

namespace parasim::sim {

/// The one MFU that minimizes the rule of thumb's MAPE over the simulated rows; 0 when none is.
double fit_rule_of_thumb(const std::vector<RowResult>& rows);

/// Sets each simulated row's rule_of_thumb_error under `mfu`.
void apply_rule_of_thumb(std::vector<RowResult>& rows, double mfu);

/// The properties rows can be grouped by, in the order `validate --help` lists them.
inline constexpr std::string_view kResidualFields[] = {"file", "family", "stack", "release", "gpu", "precision", "attention", "arch", "tp",
                                                       "pp",   "cp",     "ep",    "zero",    "schedule", "seq",    "gpus",      "comm"};
bool is_residual_field(std::string_view field);

/// The software release a row's source names, for grouping errors by it (the stacks changed their
/// kernels release by release): NVIDIA's YY.MM releases ("release 25.04.02", "NeMo 24.03.01" →
/// 25.04, 24.03), Megatron-Core's ("Megatron-Core r0.8.0" → r0.8); else the year the source or the
/// notes date the run in ("Dec 2024", "2022-02-21" → 2024, 2022); else "unstated".
std::string release_of(const MeasuredRun& run);

/// A row's value of a property: its file, family, the stack its source names and its release, GPU, precision,
/// attention kernel, architecture; the simulated plan's tp (1, 2-8, >8), pp, cp, ep (1 or >1), ZeRO
/// stage and schedule; sequence length (<=2K, 4K, 8K, 16-32K, >32K), GPU count (<=64, 65-512,
/// 513-4096, >4096) and exposed-communication share of the iteration (<10%, 10-25%, 25-50%, >=50%).
std::string row_property(const RowResult& row, const std::string& file, std::string_view field);

struct ResidualGroup {
  std::vector<std::string> key;  ///< one value per field
  int rows = 0;                  ///< simulated rows in the group
  double mape = 0;
  double bias = 0;               ///< mean signed error: negative = predicted too fast
  double rule_of_thumb_mape = 0;
  MemoryCheck memory;            ///< over the group's rows that print a peak
  int intervals = 0, covered = 0;  ///< rows with an out-of-sample 80% interval, and those it covers
};

/// The simulated rows grouped by the fields' values, in the order of the keys.
std::vector<ResidualGroup> group_residuals(const ValidationReport& report, const std::vector<std::string>& fields);

}  // namespace parasim::sim
