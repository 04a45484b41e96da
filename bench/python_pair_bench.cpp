// The C++ side of the Python module's benchmark pair (Python issue): the default job simulated as
// `parasim.simulate(scenario)` does it (cli::run_simulation: cluster graph, cost model, task graph,
// replay), the scenario loaded once outside the loop. bench/python_vs_cpp.py times the same 100
// simulations from Python and compares (target: Python within 1.2x).
#include <benchmark/benchmark.h>

#include "cli/simulate_report.hpp"
#include "sim/scenario.hpp"

namespace {

void BM_Default_Simulation(benchmark::State& state) {
  const std::string file = std::string(PARASIM_SOURCE_DIR) + "/scenarios/default.yaml";
  const auto scenario = parasim::sim::load_scenario(file, {});
  for (auto _ : state) {
    const auto result = parasim::cli::run_simulation(scenario, file).result;
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_Default_Simulation)->Unit(benchmark::kMillisecond)->Iterations(100);

}  // namespace

BENCHMARK_MAIN();
