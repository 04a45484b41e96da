#include "workload/layout.hpp"

namespace parasim::workload {

RankLayout::RankLayout(const Plan& plan) : zero_group_(plan.sharding_group()) {
  extent_[static_cast<int>(ParallelDim::tp)] = plan.tp;
  extent_[static_cast<int>(ParallelDim::dp)] = plan.dp;
  extent_[static_cast<int>(ParallelDim::pp)] = plan.pp;
  extent_[static_cast<int>(ParallelDim::cp)] = plan.cp;
  int stride = 1;
  for (ParallelDim d : full_order(plan.order)) {
    stride_[static_cast<int>(d)] = stride;
    stride *= extent_[static_cast<int>(d)];
  }
}

int RankLayout::rank(int tp_rank, int cp_rank, int dp_rank, int stage) const {
  return tp_rank * stride_[static_cast<int>(ParallelDim::tp)] + cp_rank * stride_[static_cast<int>(ParallelDim::cp)] +
         dp_rank * stride_[static_cast<int>(ParallelDim::dp)] + stage * stride_[static_cast<int>(ParallelDim::pp)];
}

int RankLayout::rank(int tp_rank, int data_rank, int stage) const { return rank(tp_rank, data_rank % cp(), data_rank / cp(), stage); }

std::vector<int> RankLayout::tp_group(int data_rank, int stage) const {
  std::vector<int> g;
  for (int t = 0; t < extent_[static_cast<int>(ParallelDim::tp)]; ++t) g.push_back(rank(t, data_rank, stage));
  return g;
}

std::vector<int> RankLayout::dp_group(int tp_rank, int stage) const {
  std::vector<int> g;
  for (int j = 0; j < data_ranks(); ++j) g.push_back(rank(tp_rank, j, stage));
  return g;
}

std::vector<int> RankLayout::cp_group(int tp_rank, int dp_rank, int stage) const {
  std::vector<int> g;
  for (int c = 0; c < cp(); ++c) g.push_back(rank(tp_rank, c, dp_rank, stage));
  return g;
}

std::vector<int> RankLayout::sharding_group(int tp_rank, int data_rank, int stage) const {
  std::vector<int> g;
  const int first = data_rank / zero_group_ * zero_group_;
  for (int j = first; j < first + zero_group_; ++j) g.push_back(rank(tp_rank, j, stage));
  return g;
}

std::vector<int> RankLayout::replica_group(int tp_rank, int data_rank, int stage) const {
  std::vector<int> g;
  for (int j = data_rank % zero_group_; j < data_ranks(); j += zero_group_) g.push_back(rank(tp_rank, j, stage));
  return g;
}

std::vector<int> RankLayout::ep_group(int tp_rank, int data_rank, int stage, int ep) const {
  std::vector<int> g;
  const int first = data_rank / ep * ep;
  for (int j = first; j < first + ep; ++j) g.push_back(rank(tp_rank, j, stage));
  return g;
}

std::vector<int> RankLayout::expert_dp_group(int tp_rank, int data_rank, int stage, int ep, int etp) const {
  std::vector<int> g;
  for (int j = data_rank % ep; j < data_ranks(); j += ep) {
    for (int t = tp_rank % etp; t < extent_[static_cast<int>(ParallelDim::tp)]; t += etp) g.push_back(rank(t, j, stage));
  }
  return g;
}

std::vector<int> RankLayout::etp_group(int tp_rank, int data_rank, int stage, int etp) const {
  std::vector<int> g;
  const int first = tp_rank / etp * etp;
  for (int t = first; t < first + etp; ++t) g.push_back(rank(t, data_rank, stage));
  return g;
}

std::vector<int> RankLayout::pp_group(int tp_rank, int data_rank) const {
  std::vector<int> g;
  for (int s = 0; s < extent_[static_cast<int>(ParallelDim::pp)]; ++s) g.push_back(rank(tp_rank, data_rank, s));
  return g;
}

}  // namespace parasim::workload
