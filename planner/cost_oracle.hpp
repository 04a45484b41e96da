#pragma once
// The narrow interface through which the search sees costs: a plan in, an estimated iteration and
// where its time goes out. The analytical oracle (planner/analytic_cost.hpp) ranks thousands of
// candidates; the simulator has the last word on the best few (planner/search.hpp); tests inject a
// table-backed fake.
#include "core/units.hpp"
#include "workload/plan.hpp"

namespace parasim::planner {

/// Where the slowest pipeline stage's iteration goes, estimated. The parts add up to `iteration`.
struct Estimate {
  Seconds iteration;
  Seconds compute;    ///< forward, backward and recompute of every micro-batch on the slowest stage
  Seconds recompute;  ///< the recompute part of compute
  Seconds tp, pp, cp, ep, dp;  ///< communication left exposed, by dimension
  Seconds bubble;     ///< pipeline warm-up and drain
  Seconds optimizer;
};

class CostOracle {
 public:
  virtual ~CostOracle() = default;
  virtual Estimate estimate(const workload::Plan& plan) = 0;
};

}  // namespace parasim::planner
