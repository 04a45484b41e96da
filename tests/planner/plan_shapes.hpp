#pragma once
// Plans of given degrees for the launch writers' and rules' tests: 1F1B, sequence parallelism with
// TP, global batch 64.
#include "workload/plan.hpp"

namespace parasim::test {

inline workload::Plan plan_of(int tp, int pp, int dp, int zero, int micro_batch = 1) {
  workload::Plan p;
  p.tp = tp;
  p.sp = tp > 1;
  p.pp = pp;
  p.dp = dp;
  p.zero = zero;
  p.micro_batch = micro_batch;
  p.global_batch = 64;
  p.schedule = workload::Schedule::one_f_one_b;
  return p;
}

}  // namespace parasim::test
