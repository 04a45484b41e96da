#pragma once
// Plans the simulator cannot tell apart, and which of them to recommend. Two plans of one job share
// most of their errors, but not all: the error of the difference of their predicted times is
// measured on the published pairs of plans (sim::ErrorModel::difference). Plans closer than that
// are tied; among the launchable plans tied with the fastest launchable one the recommendation
// prefers, in this order: a memory margin of at least the memory model's error, then the simpler
// plan (no context parallelism, no interleaving, an even layer split, fewer model-parallel
// dimensions), then the faster.
#include <string>
#include <vector>

#include "workload/model.hpp"
#include "workload/plan.hpp"

namespace parasim::planner {

/// What makes a plan harder to run and to trust: context parallelism, interleaving, an uneven
/// layer split (each 1), and the model-parallel dimensions in use (tp, pp, cp, ep above 1).
int complexity(const workload::Plan& plan);
/// "cp, interleaving, uneven split, 3 model-parallel dimensions" (empty for a plain plan).
std::string complexity_text(const workload::Plan& plan);

/// Tie groups of times sorted fastest first: group 1 holds the fastest and every time within
/// e^difference of it, group 2 starts at the first time beyond, and so on.
std::vector<int> tie_groups(const std::vector<double>& sorted_seconds, double difference);

struct TieCandidate {
  double seconds = 0;
  double margin = 0;    ///< free memory per GPU at the peak, bytes
  int complexity = 0;
  bool eligible = false;  ///< fits and the framework launches it
};

struct Recommendation {
  int index = -1;    ///< the plan recommended; -1: none eligible
  int fastest = -1;  ///< the fastest eligible plan
  std::vector<int> tied;  ///< the eligible plans tied with the fastest eligible one, fastest first
};
/// Over candidates sorted fastest first.
Recommendation recommend(const std::vector<TieCandidate>& candidates, double difference, double wanted_margin);

}  // namespace parasim::planner
