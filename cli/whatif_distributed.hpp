#pragma once
// What-if jobs spread over the processes of an MPI run (`mpirun -np N parasim whatif ...`): job i
// runs on rank i mod N, each rank evaluates its share with its own threads, and rank 0 gathers the
// outcomes in job order and alone prints and writes; so the output is the one a single process
// gives. Built with MPI only where Open MPI is installed (PARASIM_WITH_MPI); a process not started by
// mpirun, or a build without MPI, is one rank.
#include <vector>

#include "planner/whatif.hpp"

namespace parasim::cli {

/// False on the ranks of an MPI run other than 0 (they evaluate but print nothing).
bool is_root_process();

/// The outcomes of every job, in job order, on rank 0; empty on the other ranks.
std::vector<planner::Outcome> evaluate_distributed(const std::vector<planner::Job>& jobs, const planner::WhatifOptions& options);

}  // namespace parasim::cli
