#pragma once
// The fill policy's search over the plan fields a published run's source did not print. Published
// runs were tuned and ran, so they fit: the search looks at the fields together, over plans that
// fit only, and keeps the fastest it reaches. It starts from the given plan (every field at its
// first value) when that fits, else from the first plan that fits in an order that tries less
// recompute first; then it moves one field at a time to the fastest value that fits, over every
// field again after any move, until a whole pass changes nothing. A value under which nothing fits
// is never kept; where no combination fits, the one needing the least memory is reported (as out
// of memory). Pure over its evaluator: the memory probe and the simulation are passed in.
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sim/error_model.hpp"
#include "workload/plan.hpp"

namespace parasim::sim {

/// A field the source left out: its name and the values tried, each a change to the plan. The
/// first value is the given plan's own.
struct FillField {
  std::string name;
  std::vector<std::function<void(workload::Plan&)>> values;
};

/// What the memory model says of a plan (cheap; every combination may be probed).
struct FillProbe {
  bool valid = false;  ///< a plan the stack can run at all (workload::find_plan_problem)
  bool fits = false;
  double peak = 0;     ///< bytes on the most loaded stage
};

/// What the simulator says of a plan (expensive; only plans that fit, or the least-memory one).
struct FillRun {
  double time = std::numeric_limits<double>::infinity();
  double mfu = 0;
  double comm_share = 0;
  ErrorFeatures features;  ///< what the error model reads off the result
};

struct FillEvaluator {
  std::function<void(workload::Plan&)> complete;  ///< settles what follows from the fields (the layer split)
  std::function<FillProbe(const workload::Plan&)> probe;
  std::function<FillRun(const workload::Plan&)> run;
};

/// One plan the search looked at, in order: "given", "start", "least memory" or the field it moved.
struct FillStep {
  std::string field;
  workload::Plan plan;
  FillProbe probe;
  std::optional<FillRun> run;  ///< absent: not simulated (it does not fit)
  bool kept = false;           ///< the best so far after this step
};

struct FillOutcome {
  workload::Plan plan;  ///< the plan kept
  FillProbe probe;
  FillRun run;          ///< time infinite when no combination is a valid plan
  std::vector<FillStep> steps;
};

FillOutcome joint_fill_search(const workload::Plan& given, const std::vector<FillField>& fields, const FillEvaluator& evaluator);

}  // namespace parasim::sim
