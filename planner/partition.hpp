#pragma once
// Layers into pipeline stages, balanced by cost rather than by count: the first stage also runs the
// embedding and the last the LM head (a large vocabulary makes it several layers' worth), so they
// may take fewer layers. The split stays launchable with Megatron-LM: a first-stage and a
// last-stage count (--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers), every
// other stage the same, each stage's layers spread as evenly as possible over its vpp chunks.
#include <map>
#include <tuple>
#include <vector>

namespace parasim::planner {

/// Stage times of a split: the layers of each stage in order, plus the extras of the ends.
std::vector<double> stage_times(const std::vector<int>& stage_layers, const std::vector<double>& layer_time, double first_extra, double last_extra);

/// Layers per chunk (pp·vpp entries, pipeline order: chunk c on stage c mod pp) minimizing the
/// slowest stage; empty when the even split (layers divisible by pp·vpp) is within `tolerance` of
/// it, so that plans stay plain where balancing buys nothing. Every chunk gets at least one layer;
/// empty too when no split gives every chunk one.
std::vector<int> balanced_chunks(const std::vector<double>& layer_time, int pp, int vpp, double first_extra, double last_extra,
                                 double tolerance = 0.005);

/// balanced_chunks kept by its arguments, for the planner's scan: candidates that differ only in what
/// leaves layer costs alone (ZeRO stage, schedule, recompute) split their layers alike. A value: each
/// search thread owns one.
class ChunkCache {
 public:
  const std::vector<int>& get(const std::vector<double>& layer_time, int pp, int vpp, double first_extra, double last_extra);

 private:
  std::map<std::tuple<int, int, double, double, std::vector<double>>, std::vector<int>> built_;
};

}  // namespace parasim::planner
