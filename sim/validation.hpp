#pragma once
// `parasim validate`: each published run rebuilt as a scenario and simulated, with one fill-in
// policy for every row (kFillPolicy), and the statistics that say how far the simulator is from
// reality: MAPE, median and worst error, Spearman of tokens/s per GPU, and the plan order (of rows
// of one job that differ in the plan they state, the share of pairs whose faster plan is also
// predicted faster; rows that state the same inputs are the same run measured twice, not a pair).
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sim/error_model.hpp"
#include "sim/measured_run.hpp"
#include "sim/result.hpp"
#include "sim/scenario.hpp"
#include "sim/software_stack.hpp"
#include "workload/memory.hpp"

namespace parasim::sim {

/// The policy, printed by `validate`.
extern const char* const kFillPolicy;

/// One plan the fill search evaluated: the field it was trying (or "given" for the starting plan).
struct SearchStep {
  std::string field;
  std::string plan;     ///< in a line
  bool fits = false;
  double peak_bytes = 0;  ///< most loaded stage, allowance included
  std::optional<double> seconds;  ///< absent: not simulated (it does not fit and a plan that fits is known)
  bool kept = false;    ///< the best so far after this step
};

struct RowResult {
  const MeasuredRun* run = nullptr;
  std::optional<std::string> skipped;  ///< why the row could not be simulated
  double predicted_s = 0;
  double error = 0;  ///< (predicted − measured) / measured
  double mfu = 0;    ///< the simulated model FLOP/s per GPU over its dense peak
  double exposed_comm_share = 0;  ///< of the iteration, on the stage that waits longest for communication
  /// The rule of thumb's (predicted − measured) / measured: one MFU for every row (sim/residuals.hpp).
  double rule_of_thumb_error = 0;
  std::vector<std::string> filled;  ///< "micro_batch=2 (searched)", "vocab=51200 (params)", …
  SoftwareStack stack = SoftwareStack::unknown;  ///< the stack the row's source names
  bool fits = true;
  std::string plan;  ///< the plan simulated, in a line
  workload::Plan chosen;  ///< the plan simulated
  ErrorFeatures features;            ///< what the error model reads off the simulated result
  /// The 80% prediction interval from the error model fitted without the row's family (out of sample).
  std::optional<Interval> interval;
  bool covered() const;  ///< the interval holds the measured time
  /// The chosen plan's most loaded stage: the device's whole use (allowance included), or where the
  /// source printed a peak, the figure of the kind it printed.
  double predicted_memory_bytes = 0;
  /// (predicted − published) / published peak memory, where the source printed one.
  std::optional<double> memory_error;
  PrintedMemory memory_kind = PrintedMemory::device;  ///< what the printed peak counts
  std::vector<SearchStep> search;     ///< every plan the fill search evaluated, in order
};

/// The memory model against the peaks sources printed (rows with a memory figure in `as_published`).
struct MemoryCheck {
  int rows = 0;
  double median = 0, worst = 0;  ///< |predicted − published| / published
  double bias = 0;               ///< mean signed error: negative = the model needs less than the source printed
};
/// The memory check over the rows among these that print a peak (RowResult::memory_error).
MemoryCheck check_memory(const std::vector<const RowResult*>& rows);
/// The most loaded stage's figure of that kind: every tensor (allocated), with the caching
/// allocator's fragmentation (reserved), with the CUDA context and communication buffers too (device).
double printed_peak(const workload::MemoryReport& memory, PrintedMemory kind);

struct Summary {
  int rows = 0, simulated = 0;
  double mape = 0, median = 0, worst = 0, spearman = 0;
  double rule_of_thumb_mape = 0;  ///< of the same rows, under the report's one fitted MFU
  int pairs = 0, ordered = 0;  ///< plan-order pairs and how many are predicted in the right order
  int intervals = 0, covered = 0;  ///< rows with an out-of-sample 80% interval, and those it covers
};

struct ValidationReport {
  std::vector<RowResult> rows;
  std::vector<std::string> file_of;  ///< per row
  double rule_of_thumb_mfu = 0;      ///< the one MFU fitted on the rows simulated
  Summary overall;
  std::map<std::string, Summary> families;
  std::map<std::string, Summary> files;
  MemoryCheck memory;
  std::map<std::string, MemoryCheck> memory_files, memory_families;  ///< where rows print a peak
  ErrorModel error_model;  ///< fitted on every simulated row (what --fit-error-model writes)
};

struct ValidateOptions {
  std::filesystem::path hardware_dir;  ///< bundled hardware files, <gpu>.yaml
  int threads = 1;
  std::function<void(std::size_t done, std::size_t total)> progress;
  /// Price every row with this profile instead of the bundled one of its GPU (calibrate fit).
  std::optional<calibrate::Profile> profile;
};

/// One row as validate simulates it, priced with `profile` (nullptr: the bundled profile of its GPU).
RowResult simulate_row(const MeasuredRun& run, const std::filesystem::path& hardware_dir, const calibrate::Profile* profile = nullptr);

/// Rows from several files; `file_of[i]` names the file of row i (for the per-file summary).
ValidationReport validate(const std::vector<MeasuredRun>& runs, const std::vector<std::string>& file_of, const ValidateOptions& options);

/// The scenario a row stands for, with the given choices for its unknown plan fields.
struct RowScenario {
  topology::ClusterSpec cluster;
  workload::ModelSpec model;
  workload::TrainingSpec training;
  std::vector<workload::Plan> candidates;  ///< the plan, once per combination of unknown fields
  std::vector<std::string> filled;         ///< model and cluster fields the policy filled
  SoftwareStack stack = SoftwareStack::unknown;  ///< the stack the row's source names
  /// The values the fill search tries for a field the row does not print; empty where the policy
  /// sets it instead (the stack's default) or the field does not apply.
  std::vector<int> vpp_choices, zero_choices;
  bool micro_batch_by_stack = false;  ///< the stack's default set the micro-batch (torchtitan's local batch)
};
/// Whether a plan fits as the fill policy counts it: published runs fit, so a plan fits when its
/// tensors and the fixed allowance (CUDA context, NCCL and cuBLAS workspaces) do, leaving out the
/// caching allocator's fragmentation estimate, which tuned runs keep small.
bool fits_published(const workload::MemoryReport& memory);

/// Layers per model chunk (pipeline order, pp x vpp entries) for a row at `vpp`, as the fill policy
/// splits them: the row's stage_layers, else nothing (an even split) where the chunks divide the
/// layers, else the split the row's stack uses. Empty: even.
std::vector<int> row_chunk_layers(const MeasuredRun& run, SoftwareStack stack, int vpp,
                                  workload::Schedule schedule = workload::Schedule::interleaved_1f1b);

/// Builds a row's scenario, or the reason it cannot be simulated.
std::variant<RowScenario, std::string> row_scenario(const MeasuredRun& run, const std::filesystem::path& hardware_dir);

/// Spearman's rank correlation, ties at their average rank (the Pearson correlation of the ranks).
double spearman(const std::vector<double>& a, const std::vector<double>& b);
Summary summarize(const std::vector<const RowResult*>& rows);

/// Where a row's predicted time goes (`validate --explain ID`): the chosen plan simulated again,
/// and the first stage's compute time by op kind over the iteration.
struct RowExplanation {
  RowResult row;
  Result result;
  double gemm_s = 0, attention_s = 0, memory_s = 0, launch_s = 0;  ///< stage 0, whole iteration
  int kernels = 0;                                                  ///< stage 0 kernels per iteration
  double gemm_flops = 0;                                            ///< stage 0 GEMM FLOPs per GPU
  std::vector<std::pair<std::string, double>> ops;                  ///< stage 0 seconds by op name, largest first
};
std::variant<RowExplanation, std::string> explain_row(const MeasuredRun& run, const std::filesystem::path& hardware_dir);

}  // namespace parasim::sim
