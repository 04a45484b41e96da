#pragma once
// What one simulated iteration gives: time, throughput, utilization, where each stage's time
// went, memory per stage, and the largest contributors on the critical path.
#include <array>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "workload/memory.hpp"
#include "workload/task_graph.hpp"

namespace parasim::sim {

/// Where one pipeline stage's iteration went. compute + recompute + optimizer + exposed + bubble
/// = the iteration time.
struct StageBreakdown {
  int stage = 0;
  Seconds forward, backward, recompute, optimizer;  ///< compute stream busy, by phase
  /// Communication the stage's compute waited for, by dimension (workload::CommDim: tp, dp, pp, cp,
  /// ep): before a compute task, the transfers on the chain of dependencies it started after (the
  /// stage's own collectives, the pipeline transfer that brought its input); after the stage's last
  /// compute, what is still open, split evenly where several dimensions are (sim/stage_breakdown).
  std::array<Seconds, workload::kCommDims> exposed{};
  Seconds bubble;  ///< idle waiting on other stages' compute (pipeline fill and drain, stragglers)
  Seconds compute() const { return forward + backward + recompute + optimizer; }
};

struct CriticalItem {
  std::string what;  ///< "attention backward_input", "tp all_reduce", …
  Seconds time;
};

struct Result {
  Seconds iteration;
  double samples_per_s = 0;
  double tokens_per_s = 0;
  double model_flops = 0;     ///< per iteration, without recompute
  double hardware_flops = 0;  ///< per iteration, as executed (with recompute)
  double model_tflops_per_gpu = 0;
  double mfu = 0;  ///< model FLOP/s per GPU over the dense peak of the training format
  double hfu = 0;
  int gpus = 0;
  std::vector<StageBreakdown> stages;
  workload::MemoryReport memory;
  std::vector<CriticalItem> critical_path;  ///< largest first
  std::size_t tasks = 0;
  std::size_t events = 0;  ///< engine steps
  std::size_t activities = 0;
  /// Steady pipeline rounds added by extrapolation, not replayed (0: every micro-batch replayed);
  /// tasks, events and activities then count what a whole replay would have.
  int extrapolated_rounds = 0;
};

}  // namespace parasim::sim
