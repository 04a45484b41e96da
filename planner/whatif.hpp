#pragma once
// What-if evaluation: a scenario (one variant of a study, or one perturbed for sensitivity) turned
// into the figures a study reports — the best plan (re-planned by planner::search with the
// scenario's own plan among the candidates, so re-planning is never slower than keeping the plan;
// or the scenario's plan simulated as given), its iteration time, tokens/s, MFU and where the time
// goes. Variants run in parallel; each one's result depends only on its scenario, so the output is
// the same for any thread count.
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "planner/hardware_knobs.hpp"
#include "planner/search.hpp"
#include "sim/scenario.hpp"
#include "workload/task_graph.hpp"

namespace parasim::planner {

struct WhatifOptions {
  bool fixed_plan = false;  ///< simulate the scenario's plan instead of re-planning
  int simulate_top = 32;    ///< planner::SearchOptions::simulate_top
  Constraints constraints;  ///< what every re-plan obeys (--fix, --max-pp, --framework)
  int threads = 1;          ///< simulations at once, shared out among the variants
  Headroom headroom;  ///< what every re-plan keeps free (plan's default: the memory model's median error)
  /// Called after each evaluation finishes, from the thread that ran it (serialized): done, total.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

/// One evaluated scenario. The breakdown is the mean over pipeline stages of each stage's parts, so
/// compute + exposed communication + bubble = the iteration time.
struct Outcome {
  std::string gpu;
  int gpus = 0;
  /// Why there is no result ("no plan fits in 72 GiB per GPU (...)"); the figures are then zero.
  std::optional<std::string> failure;
  /// The failure is a fault of parasim (the simulator or planner threw), not of the variant: the
  /// study goes on and reports it, and the command exits 1.
  bool internal_error = false;
  std::string plan;  ///< planner::plan_name of the plan evaluated
  int tp = 1, pp = 1, vpp = 1, dp = 1, cp = 1, ep = 1, zero = 0, micro_batch = 1;
  bool scenario_plan = false;  ///< the plan is the scenario's own (given, not found by the search)
  bool fits = true;            ///< the plan's memory fits the GPU
  double iteration_s = 0, tokens_per_s = 0, mfu = 0, model_tflops_per_gpu = 0;
  double compute_s = 0;  ///< forward + backward + recompute + optimizer
  std::array<double, workload::kCommDims> exposed_s{};  ///< by workload::CommDim
  double bubble_s = 0;
  double peak_memory_bytes = 0, capacity_bytes = 0;
  /// What the error model reads (sim/error_model.hpp): the most exposed stage's communication and
  /// the idlest stage's bubble, as shares of the iteration, and the format.
  double comm_share = 0, bubble_share = 0;
  bool fp8 = false;
  double interval_lo_s = 0, interval_hi_s = 0;  ///< the 80% prediction interval, where a model set it
  bool operator==(const Outcome&) const = default;
};

/// The global batch a study keeps fixed: the scenario plan's (also when the plan was dropped for
/// not suiting a variant). Throws InputError when the scenario has none.
int study_global_batch(const sim::Scenario& scenario);

/// Evaluates one scenario with `threads` simulations at once. Bad input (no model, no plan for
/// --fixed-plan, no peak for the training format) throws InputError; a variant where nothing fits
/// is an Outcome with `failure`.
Outcome evaluate(const sim::Scenario& scenario, bool fixed_plan, int simulate_top, int threads, const Constraints& constraints = {},
                 const Headroom& headroom = {});

/// A scenario to evaluate and how.
struct Job {
  sim::Scenario scenario;
  bool fixed_plan = false;
};

/// Evaluates every job, in parallel: min(threads, n) at once, the threads left over given to each
/// search. Results in input order; the first failing job's error (by index) is rethrown.
std::vector<Outcome> evaluate_jobs(const std::vector<Job>& jobs, const WhatifOptions& options);

/// The variants of a study as jobs, each with options.fixed_plan.
std::vector<Job> study_jobs(std::vector<sim::Scenario> variants, bool fixed_plan);

/// One hardware knob moved down and up by the study's fraction.
struct Sensitivity {
  const HardwareKnob* knob = nullptr;
  Outcome fixed_minus, fixed_plus;      ///< the scenario's plan, simulated
  Outcome replan_minus, replan_plus;    ///< re-planned (absent with fixed_plan)
  /// Largest relative change of the iteration time, over both directions, in the mode ranked by
  /// (re-planned unless fixed_plan); a re-planned variant where nothing fits counts as infinite.
  double swing = 0;
};

struct SensitivityReport {
  double fraction = 0.25;
  bool fixed_plan = false;
  Outcome fixed_base, replan_base;
  std::vector<Sensitivity> knobs;  ///< largest swing first (ties: registry order)
};

/// The jobs of a sensitivity study: the scenario, then each knob the scenario has at (1 - fraction)
/// and (1 + fraction); each on the scenario's plan, and re-planned unless fixed_plan.
struct SensitivityJobs {
  double fraction = 0.25;
  bool fixed_plan = false;
  std::vector<const HardwareKnob*> knobs;
  std::vector<Job> jobs;
};
SensitivityJobs sensitivity_jobs(const sim::Scenario& scenario, double fraction, bool fixed_plan);

/// Ranks the knobs from their jobs' outcomes (in job order).
SensitivityReport rank_sensitivity(const SensitivityJobs& jobs, const std::vector<Outcome>& outcomes);

/// sensitivity_jobs, evaluated here, ranked.
SensitivityReport sensitivity(const sim::Scenario& scenario, double fraction, const WhatifOptions& options);

}  // namespace parasim::planner
