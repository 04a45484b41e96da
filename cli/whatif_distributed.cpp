#include "cli/whatif_distributed.hpp"

namespace parasim::cli {

bool is_root_process() { return true; }

std::vector<planner::Outcome> evaluate_distributed(const std::vector<planner::Job>& jobs, const planner::WhatifOptions& options) {
  return planner::evaluate_jobs(jobs, options);
}

}  // namespace parasim::cli
