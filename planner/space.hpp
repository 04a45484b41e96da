#pragma once
// Galvatron's decision-tree search space (Miao et al., VLDB 2023), literally: for each pipeline
// degree p (a power of two dividing the GPUs), the GPUs split evenly and consecutively into p groups;
// within a group a tree whose levels each apply one method — DP (data parallel), SDP (sharded data
// parallel: ZeRO-3 / FSDP) or TP (tensor parallel) — at most once, with power-of-two degrees > 1
// whose product is the group size. The level order is the order on the device axis: the first
// level is innermost (its ranks are neighbouring GPUs). Galvatron's pruning rule "no DP and SDP in
// the same tree" shrinks 8 GPUs' 34 per-layer candidates to 22.
#include <string>
#include <vector>

namespace parasim::planner {

enum class Method { dp, sdp, tp };
std::string_view method_name(Method m);

struct Level {
  Method method = Method::dp;
  int degree = 1;
  bool operator==(const Level&) const = default;
};

/// One per-layer strategy of the space: a pipeline degree and the tree's levels, innermost first.
struct LayerStrategy {
  int pp = 1;
  std::vector<Level> levels;
  bool operator==(const LayerStrategy&) const = default;
  int degree(Method m) const;
};

/// "pp2 · tp2×dp2 (tp inner)", "pp8 · (one GPU)".
std::string strategy_name(const LayerStrategy& s);

/// Every strategy for `gpus` GPUs (a power of two), pipeline degree ascending; with
/// `allow_dp_with_sdp` false, Galvatron's pruning of trees that mix DP and SDP.
std::vector<LayerStrategy> galvatron_space(int gpus, bool allow_dp_with_sdp);

}  // namespace parasim::planner
