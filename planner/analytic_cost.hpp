#pragma once
// The analytical cost model that ranks candidates (Galvatron's and Megatron-LM's arithmetic, priced
// by the same CostModel and collective lowering as the simulator, without replaying events):
//   per micro-batch and layer: forward, input- and weight-gradient and recompute compute
//     (CostModel::ops_time of the layer's blocks), TP collectives around each block (all-reduce, or
//     all-gather + reduce-scatter with SP, plus SP's second all-gather before weight gradients unless
//     overlapped), Ulysses all-to-alls, ring-CP transfers beyond what the attention core hides,
//     MoE dispatch and combine all-to-alls;
//   per stage: its chunks' layers, the embedding on the first and the head on the last, pipeline
//     send/recv per chunk boundary;
//   pipeline: m · T_stage + (p − 1) · T_stage / v for 1F1B and interleaved, (p − 1)(T_F + T_B −
//     T_W)/v as bubble for ZB-H1 (the slowest stage sets the pace);
//   data parallel: gradient reduction in buckets (hidden behind the last micro-batch's backward when
//     overlapped, per micro-batch with ZeRO-2), the distributed optimizer's parameter all-gather
//     (hidden behind the first forward when overlapped), ZeRO-3's per-layer gathers hidden behind
//     each micro-batch's compute, the optimizer step.
// Collective times are the lowering's estimate alone (its latency, protocol and bus bandwidth with
// every concurrent twin group on the links), so TP inside an island and DP across NICs are priced
// by the topology, not by constants.
#include <array>
#include <climits>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "calibrate/cost_model.hpp"
#include "planner/cost_oracle.hpp"
#include "planner/pipeline_bubble.hpp"
#include "sim/collectives.hpp"
#include "topology/cluster.hpp"
#include "topology/routing.hpp"

namespace parasim::planner {

/// One layer for one micro-batch on one GPU, in seconds; what it keeps for backward in bytes.
struct LayerCost {
  double forward = 0, backward_input = 0, backward_weight = 0, recompute = 0;
  double comm_forward = 0;   ///< exposed TP / CP / EP communication of the forward
  double comm_backward = 0;  ///< and of backward (recompute's forward communication included)
  double tp = 0, cp = 0, ep = 0;  ///< the same communication, by dimension (forward + backward)
  double kept_bytes = 0;     ///< activations kept for backward under the layer's recompute
  double working_bytes = 0;  ///< everything the layer's forward produces (its recompute working set)
  double total() const { return forward + backward_input + backward_weight + recompute + comm_forward + comm_backward; }
};

class AnalyticCost final : public CostOracle {
 public:
  /// `router`: the cluster's, shared with the search's other oracles and simulations.
  AnalyticCost(const topology::Router& router, const workload::ModelSpec& model, const workload::TrainingSpec& training,
               const calibrate::CostModel& cost);
  Estimate estimate(const workload::Plan& plan) override;

  /// A layer under the plan's shape (tp, sp, cp, ep, micro-batch) with recompute `r`.
  const LayerCost& layer(const workload::Plan& plan, int layer, workload::Recompute r);
  /// Embedding (first chunk) and head (last chunk) per micro-batch, forward + backward.
  double embedding_time(const workload::Plan& plan);
  double head_time(const workload::Plan& plan);
  /// The communicators a plan forms (workload/layout.hpp).
  enum class Group { tp, data, sharding, replica, expert_data, ep, pp_pair, cp_pair, cp };
  /// Seconds of one collective of `bytes` over the plan's groups of a kind, alone with its twins.
  double collective(const workload::Plan& plan, workload::Collective kind, Group group, double bytes);
  /// Seconds of one activation transfer from pipeline stage `from` to `to` (with its twins): hops
  /// differ where stages share a node or not.
  double hop(const workload::Plan& plan, int from, int to, double bytes);

 private:
  struct Stage {
    double forward = 0, backward = 0, weight = 0, recompute = 0, tp = 0, cp = 0, ep = 0, pp = 0;
    double p2p = 0;  ///< the slower of the stage's transfers in and out (not in total(): pp holds what is exposed)
    double total() const { return forward + backward + weight + tp + cp + ep + pp; }
  };
  /// hops[s]: one activation transfer from stage s to s + 1 (the last: back to stage 0).
  Stage stage_time(const workload::Plan& plan, int stage, const std::vector<workload::Recompute>& recompute,
                   const std::vector<int>& sizes, const std::vector<int>& first, const std::vector<double>& hops);
  std::vector<double> hops(const workload::Plan& plan);
  /// A layer's exposed TP, CP and EP communication added to its cost.
  void add_tp_comm(LayerCost& cost, const workload::Plan& plan, double activation, const std::array<double, 2>& block_weight, double reruns);
  void add_cp_comm(LayerCost& cost, const workload::Plan& plan, double tokens, double attention_forward, double attention_backward,
                   bool recomputes_forward);
  void add_ep_comm(LayerCost& cost, const workload::Plan& plan, const workload::BlockShape& shape, bool rerun);
  /// The pipeline's bubble under the plan's schedule paced by the slowest stage, and the pace a
  /// micro-batch then takes (overlapped expert all-to-alls hide under paired steps).
  struct StagePace {
    double bubble = 0, pace = 0;
  };
  StagePace stage_pace(const workload::Plan& plan, const Stage& slowest, double pace);
  /// Seconds of `parameters` reduced or gathered through the plan's gradient buckets, and the buckets.
  std::pair<double, double> bucketed(const workload::Plan& plan, workload::Collective kind, Group group, double parameters,
                                     double bytes_per_param);
  /// Exposed data-parallel seconds of a stage's dense parameters (ZeRO 0-2), of its ZeRO-3 layers,
  /// and of its routed experts over their own data-parallel group.
  double dense_data_parallel(const workload::Plan& plan, double dense, const Stage& stage);
  double zero3_data_parallel(const workload::Plan& plan, int stage, double dense, const Stage& st, const std::vector<workload::Recompute>& recompute,
                             const std::vector<int>& sizes, const std::vector<int>& first);
  double expert_data_parallel(const workload::Plan& plan, double expert, const Stage& stage);
  /// A collective over the groups `groups()` builds, cached by `signature` (plus the plan's order).
  double lower(const workload::Plan& plan, workload::Collective kind, std::initializer_list<int> signature, double bytes,
               const std::function<std::vector<std::vector<int>>()>& groups);
  std::vector<std::vector<int>> twins(const workload::Plan& plan, Group group) const;

  const topology::Cluster* cluster_;
  const workload::ModelSpec* model_;
  const workload::TrainingSpec* training_;
  const calibrate::CostModel* cost_;
  std::unique_ptr<sim::CollectiveLowering> lowering_;
  std::vector<double> zero3_shares_;  // of a dense layer's parameters, one per ZeRO-3 gather (workload/zero3.hpp)
  // tp, sp, cp, cp kind, ep, etp, micro-batch, recompute (with its modules), moe, the layout (order and degrees: where the groups sit)
  using ShapeKey = std::tuple<int, int, int, int, int, int, int, int, int, int>;
  std::map<ShapeKey, LayerCost> layers_;
  std::map<ShapeKey, double> ends_;
  PipelineBubbles bubbles_;
  // Communicator sets by (group kind, tp, cp, dp, pp, ep, etp, zero_group, order), padded with
  // INT_MIN: the lowering's cache key, numbered as first met.
  using GroupKey = std::array<int, 16>;
  struct GroupKeyHash {
    std::size_t operator()(const GroupKey& k) const {
      std::uint64_t h = 0xcbf29ce484222325ULL;
      for (int v : k) h = (h ^ static_cast<std::uint32_t>(v)) * 0x100000001b3ULL;
      return static_cast<std::size_t>(h);
    }
  };
  std::unordered_map<GroupKey, std::pair<std::uint64_t, workload::Twins>, GroupKeyHash> groups_;
};

}  // namespace parasim::planner
