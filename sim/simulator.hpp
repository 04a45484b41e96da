#pragma once
// The discrete-event replay of one training iteration (FlexFlow-style task replay over a fluid
// network). A task starts when its dependencies are done (stream order is a dependency too);
// compute runs at the rate the overlap slowdown leaves it; a collective waits out its latency steps,
// then moves its traffic as a fluid activity sharing links max-min fairly with every other transfer
// (and, by symmetry, with its twins in the other replicas). Integer picosecond time; ties resolved by
// task id, so two runs give identical results.
#include <cstdint>
#include <vector>

#include "calibrate/cost_model.hpp"
#include "core/error.hpp"
#include "sim/collectives.hpp"
#include "sim/result.hpp"
#include "topology/cluster.hpp"
#include "workload/task_graph.hpp"

namespace parasim::sim {

/// The iteration would run past the simulator's clock (100 days of 64-bit picoseconds): the
/// scenario's values are out of proportion. An input error without a file; the caller names it.
class ClockOverflow : public InputError {
 public:
  using InputError::InputError;
};

struct SimInput {
  const topology::Cluster* cluster = nullptr;
  const workload::ModelSpec* model = nullptr;
  const workload::TrainingSpec* training = nullptr;
  const workload::Plan* plan = nullptr;
  const workload::TaskGraph* graph = nullptr;
  const calibrate::CostModel* cost = nullptr;
  /// Routes over `cluster` already walked, shared by the simulations of one search (thread-safe);
  /// null: the simulation walks its own.
  const topology::Router* router = nullptr;
};

struct SimOptions {
  /// Simulate every twin group's traffic as its own activity instead of folding twins into the
  /// representative's link weights.
  bool full = false;
  /// Keep per-task times and per-transfer link usage for a trace.
  bool keep_timeline = false;
  /// simulate_plan: replay every micro-batch even where the steady state could be extrapolated.
  bool full_replay = false;
};

/// When each task ran; and each transfer phase, for link tracks.
struct Timeline {
  std::vector<std::int64_t> start_ps, finish_ps;  ///< per task
  struct Transfer {
    std::uint32_t task;
    std::int64_t start_ps, finish_ps;
    std::vector<FluidModel::Usage> usage;  ///< links crossed (directed link ids) and their load
  };
  std::vector<Transfer> transfers;
};

Result simulate(const SimInput& input, const SimOptions& options = {}, Timeline* timeline = nullptr);

/// A plan's iteration with no task graph at hand (`input.graph` is not read): the graph is built here
/// and, where the pipeline is long, only its warm-up, three verified steady rounds and cool-down are
/// replayed and the other rounds added (sim/steady_state.hpp); under `full`, a timeline or
/// `full_replay`, every micro-batch.
Result simulate_plan(const SimInput& input, const SimOptions& options = {});

/// Throughput, model and hardware FLOP/s and MFU of a result from its iteration time, GPU count and
/// hardware FLOPs.
void derive_rates(Result& r, const workload::ModelSpec& model, const workload::TrainingSpec& training, const workload::Plan& plan,
                  const calibrate::CostModel& cost);

}  // namespace parasim::sim
