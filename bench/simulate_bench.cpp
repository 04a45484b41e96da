// Benchmarks of one simulated iteration (Google Benchmark). Figures: wall time per iteration,
// engine events per second, and the process's peak resident memory (getrusage) after the runs.
//   build/bench/parasim_bench                       # all
//   build/bench/parasim_bench --benchmark_filter=Llama
// Targets (simulator issue): GPT-3 175B on 1024 A100 <= 100 ms, Llama-3 405B on 16,384 H100 <= 1 s,
// (speed issue: 50 ms and 0.5 s on one core, and the 16K simulation < 2x the same job on 1K GPUs),
// each under 1 GiB; its trace written compressed under 300 MB (traces issue). Run each alone (a
// filter) for its own peak memory.
#include <benchmark/benchmark.h>

#include "bench/peak_rss.hpp"
#include "calibrate/cost_model.hpp"
#include "sim/scenario.hpp"
#include "core/output_file.hpp"
#include "sim/simulator.hpp"
#include "sim/trace.hpp"
#include "topology/routing.hpp"

#include <optional>

namespace {

using namespace parasim;

using bench::peak_rss_mib;

// `shared_router`: the simulations share one router, as the plans a search simulates do
// (planner/search.cpp): the cluster's routing index is built once and the routes between leaf
// classes are walked by the first simulation. Without it each simulation builds its own, as one
// `parasim simulate` does.
void run(benchmark::State& state, const std::string& scenario, const std::vector<std::string>& overrides, bool shared_router = false) {
  const auto s = sim::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/" + scenario, overrides);
  const topology::Cluster cluster(s.cluster);
  std::optional<topology::Router> router;
  if (shared_router) router.emplace(cluster);
  const auto& gpu = s.cluster.node.gpu;
  const calibrate::CostModel cost(gpu, calibrate::default_profile(gpu.name));
  std::size_t events = 0, tasks = 0;
  double iteration = 0;
  for (auto _ : state) {
    // The whole job a user waits for: the task graph and its replay.
    const auto graph = workload::build_tasks(*s.model, *s.training, *s.plan);
    const sim::SimInput in{&cluster, &*s.model, &*s.training, &*s.plan, &graph, &cost, router ? &*router : nullptr};
    const auto r = sim::simulate(in);
    events += r.events;
    tasks = r.tasks;
    iteration = r.iteration.value();
    benchmark::DoNotOptimize(r);
  }
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["simulated_iteration_s"] = iteration;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

// GPT-3 175B on 1024 A100: TP8 PP8 DP16, global batch 1536, seq 2048, interleaved with vpp 2.
void BM_Gpt3_175B_1024_A100(benchmark::State& state) {
  run(state, "scenarios/jobs/gpt3-175b-1024-a100.yaml", {"plan.vpp=2"});
}
BENCHMARK(BM_Gpt3_175B_1024_A100)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Llama-3 405B on the 16,384-GPU H100 cluster: TP8 PP16 DP128, seq 8192, global batch 2048,
// stages of 8 layers with the first and last one fewer.
void BM_Llama3_405B_16K_H100(benchmark::State& state) {
  run(state, "scenarios/jobs/llama3-405b-16k-h100.yaml", {});
}
BENCHMARK(BM_Llama3_405B_16K_H100)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The same model and plan shape on 1/16 of the cluster (128 nodes, one pod; DP 8, global batch 128:
// the same 16 micro-batches per pipeline): the speed issue asks the 16K simulation to cost < 2x this.
void BM_Llama3_405B_1K_H100(benchmark::State& state) {
  run(state, "scenarios/jobs/llama3-405b-16k-h100.yaml", {"cluster.nodes=128", "plan.dp=8", "plan.global_batch=128"});
}
BENCHMARK(BM_Llama3_405B_1K_H100)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The same two jobs as a search pays for each plan it simulates: one router for all of them.
void BM_Llama3_405B_16K_H100_InSearch(benchmark::State& state) {
  run(state, "scenarios/jobs/llama3-405b-16k-h100.yaml", {}, true);
}
BENCHMARK(BM_Llama3_405B_16K_H100_InSearch)->Unit(benchmark::kMillisecond)->MinTime(2.0);
void BM_Llama3_405B_1K_H100_InSearch(benchmark::State& state) {
  run(state, "scenarios/jobs/llama3-405b-16k-h100.yaml", {"cluster.nodes=128", "plan.dp=8", "plan.global_batch=128"}, true);
}
BENCHMARK(BM_Llama3_405B_1K_H100_InSearch)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// What a simulation without a shared router pays first: the router's index of the 16K cluster's
// network (its switches' links, the NICs' cables, the leaf classes, the node's distances). The
// difference between the two 16K benchmarks above is this and the walks between leaf classes.
void BM_Router_Llama3_16K_H100(benchmark::State& state) {
  const auto s = sim::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/scenarios/jobs/llama3-405b-16k-h100.yaml", {});
  const topology::Cluster cluster(s.cluster);
  for (auto _ : state) {
    const topology::Router router(cluster);
    benchmark::DoNotOptimize(&router);
  }
}
BENCHMARK(BM_Router_Llama3_16K_H100)->Unit(benchmark::kMillisecond)->MinTime(1.0);

// GPT-3 175B on 16,384 A100: the bundled two-tier HDR fabric grown to 2048 nodes, every leaf cabled
// to every spine (a 336k-link mesh). DP 256, 6 micro-batches per pipeline.
void BM_Gpt3_175B_16K_A100_TwoTier(benchmark::State& state) {
  run(state, "scenarios/jobs/gpt3-175b-1024-a100.yaml", {"cluster.nodes=2048", "plan.dp=256"});
}
BENCHMARK(BM_Gpt3_175B_16K_A100_TwoTier)->Unit(benchmark::kMillisecond)->Iterations(1);

// Llama-3 405B on 256 H100 (32 nodes: TP 8, PP 16, DP 2) at global batch 2048: 1,024 micro-batches per
// pipeline, as `parasim simulate` runs it (the steady state replayed three times and extrapolated;
// speed issue: <= 1 s on one core), and replayed whole for comparison.
void run_plan(benchmark::State& state, const std::vector<std::string>& overrides, bool full_replay) {
  const auto s = sim::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/scenarios/jobs/llama3-405b-16k-h100.yaml", overrides);
  const topology::Cluster cluster(s.cluster);
  const calibrate::CostModel cost(s.cluster.node.gpu, calibrate::default_profile(s.cluster.node.gpu.name));
  sim::SimOptions options;
  options.full_replay = full_replay;
  double iteration = 0;
  int rounds = 0;
  for (auto _ : state) {
    const auto r = sim::simulate_plan({&cluster, &*s.model, &*s.training, &*s.plan, nullptr, &cost}, options);
    iteration = r.iteration.value();
    rounds = r.extrapolated_rounds;
    benchmark::DoNotOptimize(r);
  }
  state.counters["simulated_iteration_s"] = iteration;
  state.counters["extrapolated_rounds"] = rounds;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
void BM_Llama3_405B_256_H100_GB2048(benchmark::State& state) { run_plan(state, {"cluster.nodes=32", "plan.dp=2"}, false); }
BENCHMARK(BM_Llama3_405B_256_H100_GB2048)->Unit(benchmark::kMillisecond)->MinTime(2.0);
void BM_Llama3_405B_256_H100_GB2048_FullReplay(benchmark::State& state) { run_plan(state, {"cluster.nodes=32", "plan.dp=2"}, true); }
BENCHMARK(BM_Llama3_405B_256_H100_GB2048_FullReplay)->Unit(benchmark::kMillisecond)->Iterations(1);

// GPT-3 175B's iteration simulated with its timeline kept and written as a gzip-compressed trace.
void BM_Gpt3_175B_Trace(benchmark::State& state) {
  const auto s = sim::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/scenarios/jobs/gpt3-175b-1024-a100.yaml", {});
  const topology::Cluster cluster(s.cluster);
  const auto& gpu = s.cluster.node.gpu;
  const calibrate::CostModel cost(gpu, calibrate::default_profile(gpu.name));
  double bytes = 0, events = 0;
  for (auto _ : state) {
    const auto graph = workload::build_tasks(*s.model, *s.training, *s.plan);
    const sim::SimInput in{&cluster, &*s.model, &*s.training, &*s.plan, &graph, &cost};
    sim::Timeline timeline;
    sim::simulate(in, {false, true}, &timeline);
    OutputFile file("/tmp/parasim_bench_trace.json.gz", "--trace", "the trace file");
    events = static_cast<double>(sim::write_chrome_trace(file.stream(), graph, timeline, cluster).events);
    file.close();
    bytes = static_cast<double>(file.size());
  }
  state.counters["trace_MB"] = bytes / 1e6;
  state.counters["events"] = events;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_Gpt3_175B_Trace)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
