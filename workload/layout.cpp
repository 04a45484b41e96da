#include "workload/layout.hpp"

namespace parasim::workload {

RankLayout::RankLayout(const Plan& plan) : zero_group_(plan.sharding_group()) {
  extent_[static_cast<int>(ParallelDim::tp)] = plan.tp;
  extent_[static_cast<int>(ParallelDim::dp)] = plan.dp;
  extent_[static_cast<int>(ParallelDim::pp)] = plan.pp;
  int stride = 1;
  for (ParallelDim d : plan.order) {
    stride_[static_cast<int>(d)] = stride;
    stride *= extent_[static_cast<int>(d)];
  }
}

int RankLayout::rank(int tp_rank, int dp_rank, int stage) const {
  return tp_rank * stride_[static_cast<int>(ParallelDim::tp)] + dp_rank * stride_[static_cast<int>(ParallelDim::dp)] +
         stage * stride_[static_cast<int>(ParallelDim::pp)];
}

std::vector<int> RankLayout::tp_group(int dp_rank, int stage) const {
  std::vector<int> g;
  for (int t = 0; t < extent_[static_cast<int>(ParallelDim::tp)]; ++t) g.push_back(rank(t, dp_rank, stage));
  return g;
}

std::vector<int> RankLayout::dp_group(int tp_rank, int stage) const {
  std::vector<int> g;
  for (int d = 0; d < extent_[static_cast<int>(ParallelDim::dp)]; ++d) g.push_back(rank(tp_rank, d, stage));
  return g;
}

std::vector<int> RankLayout::sharding_group(int tp_rank, int dp_rank, int stage) const {
  std::vector<int> g;
  const int first = dp_rank / zero_group_ * zero_group_;
  for (int d = first; d < first + zero_group_; ++d) g.push_back(rank(tp_rank, d, stage));
  return g;
}

std::vector<int> RankLayout::replica_group(int tp_rank, int dp_rank, int stage) const {
  std::vector<int> g;
  for (int d = dp_rank % zero_group_; d < extent_[static_cast<int>(ParallelDim::dp)]; d += zero_group_) g.push_back(rank(tp_rank, d, stage));
  return g;
}

std::vector<int> RankLayout::pp_group(int tp_rank, int dp_rank) const {
  std::vector<int> g;
  for (int s = 0; s < extent_[static_cast<int>(ParallelDim::pp)]; ++s) g.push_back(rank(tp_rank, dp_rank, s));
  return g;
}

}  // namespace parasim::workload
