#pragma once
// The search `parasim plan` and `parasim confirm` both run: the scenario read with its --set
// overrides, the plans given (--include, --from-megatron-args) added, the space constrained
// (--fix, --framework, …), and every fitting candidate ranked by the simulator.
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "cli/constraint_options.hpp"
#include "planner/search.hpp"
#include "sim/scenario.hpp"

namespace parasim::cli {

struct PlanSearchOptions {
  std::string command = "plan";  ///< the subcommand, as messages name it
  std::string scenario;
  std::vector<std::string> set;
  int simulate_top = 32;
  int global_batch = 0;
  std::string headroom = "auto";  ///< "auto": the memory model's median error on published peaks, of the capacity
  bool power_of_two = false;
  std::vector<int> micro_batches;
  std::vector<std::string> include;
  std::vector<std::string> megatron_args;
  bool ignore_unknown_flags = false;
  int threads = 0;
  double time_limit = 0;
  ConstraintOptions constraints;
  /// Where the search reports its progress instead of the terminal's bar (the Python module's callback):
  /// the phase ("analytical", "simulate"), done and total; calls are serialized.
  std::function<void(const char* phase, std::size_t done, std::size_t total)> on_progress;
  bool quiet = false;  ///< no summary line on stderr

  /// Registers the scenario argument and the search's options on `cmd`.
  void add_to(CLI::App* cmd);
};

struct PlanSearch {
  sim::Scenario scenario;
  int global_batch = 0;
  planner::SearchOptions options;
  planner::SearchReport report;  ///< at least one plan, the first of which fits
};

/// --headroom's value: "auto" (the memory model's median error on published peaks, as a share of the
/// GPU's memory) or an amount with its unit; an InputError naming --headroom otherwise.
planner::Headroom parse_headroom(const std::string& text);

/// Runs the search; `progress` draws a bar per phase on the terminal. Throws InputError for a scenario
/// without model or training, a batch not given, no candidate (naming the pin that removed the last),
/// or no candidate that fits (with the smallest footprint found).
PlanSearch run_plan_search(const PlanSearchOptions& o, bool progress);
/// The same on a scenario already read (`o.scenario` names its file in messages; `o.set` is not applied again).
PlanSearch run_plan_search(const PlanSearchOptions& o, sim::Scenario scenario, bool progress);

}  // namespace parasim::cli
