#pragma once
// Where each (tp, cp, dp, pp) coordinate sits on the device axis. The plan's order lists the
// dimensions innermost first: with [tp, cp, dp, pp] (Megatron-LM's default) the TP ranks of a group
// are consecutive GPUs (inside an island), then context-parallel ranks, then data-parallel replicas,
// then pipeline stages outermost.
//
// Gradients are reduced over the dp·cp ranks of a stage (Megatron-LM's data-parallel group with
// context parallelism), so the groups that concern weights (data, sharding, replica, expert) index
// that combined axis by a *data rank* j = cp_rank + cp·dp_rank. Expert-parallel groups are ep
// consecutive data ranks of equal TP rank (Megatron-LM's expert rank generator puts ep right inside
// dp). Expert tensor parallelism splits each expert over etp consecutive TP ranks; with etp < tp
// Megatron-LM would fold the TP ranks etp leaves out into the EP group first, where we keep them in
// the expert-data-parallel group (the same bytes, over TP-rank links rather than data-rank ones).
#include <array>
#include <vector>

#include "workload/plan.hpp"

namespace parasim::workload {

class RankLayout {
 public:
  explicit RankLayout(const Plan& plan);

  int rank(int tp_rank, int cp_rank, int dp_rank, int stage) const;
  /// Rank of a data rank j = cp_rank + cp·dp_rank.
  int rank(int tp_rank, int data_rank, int stage) const;
  int size() const { return extent_[0] * extent_[1] * extent_[2] * extent_[3]; }
  int data_ranks() const { return cp() * extent_[static_cast<int>(ParallelDim::dp)]; }

  std::vector<int> tp_group(int data_rank, int stage) const;
  /// Every data rank of a stage: the group gradients are reduced over.
  std::vector<int> dp_group(int tp_rank, int stage) const;
  /// The context-parallel ranks of a data-parallel replica (ring order).
  std::vector<int> cp_group(int tp_rank, int dp_rank, int stage) const;
  /// The ZeRO sharding group that holds data_rank: zero_group consecutive data ranks.
  std::vector<int> sharding_group(int tp_rank, int data_rank, int stage) const;
  /// Hybrid sharding: ranks holding the same shard in the other sharding groups.
  std::vector<int> replica_group(int tp_rank, int data_rank, int stage) const;
  /// Expert parallelism: the ep consecutive data ranks that hold data_rank.
  std::vector<int> ep_group(int tp_rank, int data_rank, int stage, int ep) const;
  /// Ranks that hold the same expert shard (the expert-data-parallel group): data ranks equal
  /// modulo ep, and TP ranks equal modulo etp.
  std::vector<int> expert_dp_group(int tp_rank, int data_rank, int stage, int ep, int etp) const;
  /// The etp consecutive TP ranks that split the same experts (and gather their tokens).
  std::vector<int> etp_group(int tp_rank, int data_rank, int stage, int etp) const;
  /// The pipeline stages of one (tp, data rank) position.
  std::vector<int> pp_group(int tp_rank, int data_rank) const;

 private:
  int cp() const { return extent_[static_cast<int>(ParallelDim::cp)]; }
  std::array<int, 4> extent_{};  // by ParallelDim
  std::array<int, 4> stride_{};
  int zero_group_ = 1;
};

}  // namespace parasim::workload
