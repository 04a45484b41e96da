#pragma once
// One simulation as `parasim simulate` runs and reports it, for the CLI and the Python module alike.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/scenario.hpp"
#include "sim/simulator.hpp"
#include "sim/trace.hpp"
#include "topology/cluster.hpp"
#include "workload/task_graph.hpp"

namespace parasim::cli {

/// One iteration simulated: the cluster graph, the task graph it ran on when a timeline was kept (a
/// trace needs both; otherwise empty), the result.
struct Simulation {
  topology::Cluster cluster;
  workload::TaskGraph graph;
  sim::Result result;
};

/// Simulates the scenario's plan (the scenario needs model, training and plan; `file` names it in
/// errors); a timeline, when given, records every task for a trace (and replays every micro-batch).
/// Throws InputError.
Simulation run_simulation(const sim::Scenario& scenario, const std::string& file, sim::SimOptions options = {}, sim::Timeline* timeline = nullptr);

/// The communication dimensions with exposed time on some stage, in CommDim order: the ones a
/// report gives a place.
std::vector<workload::CommDim> exposed_dimensions(const sim::Result& result);

/// `parasim simulate --json`: iteration, its 80% interval, throughput, MFU, memory, stages, critical path.
nlohmann::json simulate_json(const sim::Scenario& scenario, const sim::Result& result);

}  // namespace parasim::cli
