#pragma once
// Where each (tp, dp, pp) coordinate sits on the device axis. The plan's order lists the dimensions
// innermost first: with [tp, dp, pp] (Megatron-LM's default) the TP ranks of a group are
// consecutive GPUs (inside an island), then data-parallel replicas, then pipeline stages outermost.
#include <array>
#include <vector>

#include "workload/plan.hpp"

namespace parasim::workload {

class RankLayout {
 public:
  explicit RankLayout(const Plan& plan);

  int rank(int tp_rank, int dp_rank, int stage) const;
  int size() const { return extent_[0] * extent_[1] * extent_[2]; }

  std::vector<int> tp_group(int dp_rank, int stage) const;
  std::vector<int> dp_group(int tp_rank, int stage) const;
  /// The ZeRO sharding group that holds dp_rank: zero_group consecutive data-parallel ranks.
  std::vector<int> sharding_group(int tp_rank, int dp_rank, int stage) const;
  /// Hybrid sharding: ranks holding the same shard in the other sharding groups.
  std::vector<int> replica_group(int tp_rank, int dp_rank, int stage) const;
  /// The pipeline stages of one (tp, dp) position.
  std::vector<int> pp_group(int tp_rank, int dp_rank) const;

 private:
  std::array<int, 3> extent_{};  // by ParallelDim
  std::array<int, 3> stride_{};
  int zero_group_ = 1;
};

}  // namespace parasim::workload
