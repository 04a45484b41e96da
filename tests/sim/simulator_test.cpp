#include <doctest/doctest.h>

#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "calibrate/cost_model.hpp"
#include "sim/simulator.hpp"
#include "sim/trace.hpp"
#include "workload/chunk_placement.hpp"
#include "workload/memory.hpp"
#include "workload/moe_ops.hpp"
#include "workload/pass_times.hpp"
#include "workload/pipeline_replay.hpp"
#include "tests/topology/fixtures.hpp"
#include "tests/workload/fixtures.hpp"

using namespace parasim;
using namespace parasim::sim;
using workload::Collective;
using workload::CommDim;
using workload::Phase;
using workload::Task;
using workload::TaskGraph;
using workload::TaskKind;

namespace {

// A profile with round numbers so that expectations can be written by hand.
calibrate::Profile plain_profile() {
  auto p = calibrate::default_profile("generic");
  p.kernel_launch = Seconds(0);
  p.collective_launch = Seconds(10e-6);
  p.nvlink = {0.8, Seconds(1e-6), 0.1, Seconds(0.5e-6)};
  p.network = {0.9, Seconds(5e-6), 0.1, Seconds(2e-6)};
  p.nvls = false;
  p.nvls_latency = Seconds(0);
  return p;
}

// plain_profile without the overlap slowdowns: times that add up by hand.
calibrate::Profile exact_profile() {
  auto p = plain_profile();
  p.compute_slowdown = {};
  p.comm_slowdown = {};
  return p;
}

// A profile that makes communication free and compute launch-free (pipeline bubble tests).
calibrate::Profile free_comm_profile() {
  auto p = exact_profile();
  p.collective_launch = Seconds(0);
  p.nvlink.step_latency = p.pcie.step_latency = p.network.step_latency = Seconds(0);
  p.nvlink.ll_step_latency = p.pcie.ll_step_latency = p.network.ll_step_latency = Seconds(0);
  return p;
}

struct Fixture {
  topology::ClusterSpec spec;
  workload::ModelSpec model = test::small_gpt(4);
  workload::TrainingSpec training = test::training(1024);
  workload::Plan plan = test::plan(1, 1, 1, 1, 1);
};

Result run(const topology::Cluster& cluster, const Fixture& f, const TaskGraph& g, const calibrate::Profile& profile,
           SimOptions options = {}, Timeline* tl = nullptr) {
  const calibrate::CostModel cost(cluster.spec().node.gpu, profile);
  const SimInput in{&cluster, &f.model, &f.training, &f.plan, &g, &cost};
  return simulate(in, options, tl);
}

// One collective alone over `group` (its twins given), in a hand-made graph.
TaskGraph single_collective(Collective kind, std::vector<std::vector<int>> twins, double bytes) {
  TaskGraph g;
  Task t;
  t.kind = TaskKind::collective;
  t.collective = kind;
  t.dim = CommDim::dp;
  t.stream = workload::Stream::dp_comm;
  t.bytes = bytes;
  g.groups.push_back(twins.front());
  g.twins.emplace_back(twins);
  g.tasks.push_back(t);
  return g;
}

// One 8-GPU node whose links are a million times faster than any GPU: transfers cost ~nothing.
topology::ClusterSpec free_links_node() {
  auto spec = test::dgx_cluster(1);
  spec.node.gpu.nvlink->bidirectional = BytesPerSecond(1e18);
  spec.node.fabric_latency = Seconds(0);
  spec.node.pcie.latency = Seconds(0);
  spec.node.pcie.generation = 6;
  return spec;
}

// 16 equal layers whose embedding and head are negligible, no optimizer state: the pipeline tests'
// model, whose stage times add up by hand.
Fixture uniform_pipeline_fixture() {
  Fixture f;
  f.model = test::small_gpt(16);
  f.model.hidden = 2048;
  f.model.heads = 16;
  f.model.head_dim = 128;
  f.model.ffn_hidden = 8192;
  f.model.vocab = 128;
  f.model.tied_embeddings = false;
  f.training.optimizer_bytes_per_param = 0;
  f.training.fp32_grad_accumulation = false;
  return f;
}

// Per-micro-batch times of the passes a micro-batch runs on stage 1 (T_F, T_B input gradients, T_W)
// and the optimizer's, from the graph's own compute tasks.
struct StagePasses {
  double forward = 0, backward = 0, weight = 0, optimizer = 0;
};
StagePasses stage_passes(const TaskGraph& g, const calibrate::CostModel& cost, int stage) {
  StagePasses s;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::compute || t.stage != stage) continue;
    const double d = cost.ops_time(g.ops(t)).value();
    if (t.phase == Phase::optimizer) s.optimizer = d;
    else if (t.microbatch != 0) continue;
    else if (t.phase == Phase::forward) s.forward += d;
    else if (t.phase == Phase::backward_input || t.phase == Phase::recompute) s.backward += d;
    else s.weight += d;
  }
  return s;
}

// The pipeline tests' setting: the uniform fixture on links a million times faster than any GPU,
// with a profile that makes communication free.
struct FreePipeline {
  topology::ClusterSpec spec = free_links_node();
  topology::Cluster cluster{spec};
  Fixture f = uniform_pipeline_fixture();
  calibrate::Profile profile = free_comm_profile();
  calibrate::CostModel cost{spec.node.gpu, profile};
};

topology::ClusterSpec single_gpu() {
  auto c = test::dgx_cluster(1);
  c.node.gpus = 1;
  c.node.nics.affinity = {0};
  c.node.pcie.switches = 1;
  c.node.pcie.sockets = 1;
  return c;
}

}  // namespace

TEST_CASE("compute only, one GPU: the iteration is the sum of the op times") {
  Fixture f;
  f.plan = test::plan(1, 1, 1, 1, 4);
  const topology::Cluster cluster(single_gpu());
  const auto g = workload::build_tasks(f.model, f.training, f.plan);
  const auto profile = plain_profile();
  const calibrate::CostModel cost(cluster.spec().node.gpu, profile);
  double sum = 0;
  std::size_t compute = 0;
  for (const auto& t : g.tasks) {
    REQUIRE(t.kind == TaskKind::compute);  // one GPU: nothing to communicate
    sum += cost.ops_time(g.ops(t)).value();
    ++compute;
  }
  const auto r = run(cluster, f, g, profile);
  // Each task's time is rounded up to a whole picosecond.
  CHECK(r.iteration.value() == doctest::Approx(sum).epsilon(1e-9));
  CHECK(r.iteration.value() <= sum + compute * 1e-12);
  CHECK(r.stages[0].bubble.value() == doctest::Approx(0).epsilon(1e-9));
}

TEST_CASE("ring all-reduce over the 8 GPUs of one island: 2(n-1)/n·S/B plus latency") {
  Fixture f;
  const topology::Cluster cluster(test::dgx_cluster(1));
  const double S = 1073741824.0;  // 1 GiB
  const auto g = single_collective(Collective::all_reduce, {{0, 1, 2, 3, 4, 5, 6, 7}}, S);
  const auto r = run(cluster, f, g, plain_profile());
  // B = 450 GB/s NVLink per direction x 0.8 efficiency. 2(n-1) = 14 steps, each the NVLink route
  // latency (0.35 us x 2 hops) plus 1 us of protocol; plus a 10 us launch.
  const double B = 450e9 * 0.8;
  const double latency = 10e-6 + 14 * (0.7e-6 + 1e-6);
  CHECK(r.iteration.value() == doctest::Approx(latency + 2.0 * 7 / 8 * S / B).epsilon(1e-9));
}

TEST_CASE("NVLS is chosen in an NVSwitch island where the profile has it, and beats the ring") {
  Fixture f;
  const topology::Cluster cluster(test::dgx_cluster(1));
  const double S = 1073741824.0;
  auto p = plain_profile();
  p.nvls = true;
  p.nvls_efficiency = 0.6;
  const auto g = single_collective(Collective::all_reduce, {{0, 1, 2, 3, 4, 5, 6, 7}}, S);
  const auto r = run(cluster, f, g, p);
  // Each GPU pushes S into the switch and pulls S back, at 450 GB/s x 0.6: two steps over the wires
  // (0.7 us each), no per-step protocol cost (nvls_latency 0 here).
  CHECK(r.iteration.value() == doctest::Approx(10e-6 + 2 * 0.7e-6 + S / (450e9 * 0.6)).epsilon(1e-9));
  CHECK(r.iteration.value() < 2.0 * 7 / 8 * S / (450e9 * 0.8));
}

TEST_CASE("small messages take NCCL's LL protocol: less latency, a tenth of the bandwidth") {
  Fixture f;
  const topology::Cluster cluster(test::dgx_cluster(1));
  const double S = 65536;  // 64 KiB
  const auto r = run(cluster, f, single_collective(Collective::all_reduce, {{0, 1, 2, 3, 4, 5, 6, 7}}, S), plain_profile());
  // LL: 10 + 14 x (0.7 + 0.5) us + 1.75 x 64 KiB at 450 GB/s x 0.1 = 26.8 + 2.55 us;
  // Simple would be 10 + 14 x (0.7 + 1) + 0.32 = 34.1 us; tree: 10 + 6 x 1.2 + 2 x 64 KiB / 45 GB/s = 20.1 us.
  const double ll_ring = 10e-6 + 14 * 1.2e-6 + 1.75 * S / 45e9;
  const double ll_tree = 10e-6 + 6 * 1.2e-6 + 2 * S / 45e9;
  CHECK(r.iteration.value() == doctest::Approx(std::min(ll_ring, ll_tree)).epsilon(1e-9));
}

TEST_CASE("a DP all-reduce of 8 ranks per node: eight NICs against one") {
  // Groups {i, 8 + i} of a TP8 plan on 2 nodes, all eight at once (one stands for the others).
  std::vector<std::vector<int>> twins;
  for (int i = 0; i < 8; ++i) twins.push_back({i, 8 + i});
  const double S = 4294967296.0;  // 4 GiB
  Fixture f;
  auto time = [&](int nics) {
    const topology::Cluster cluster(test::dgx_cluster(2, 1.0, nics));
    const topology::Router router(cluster);
    const auto r = run(cluster, f, single_collective(Collective::all_reduce, twins, S), plain_profile());
    // Two ranks: 2(n-1)/n = 1, two steps, each as slow as the slowest twin's route plus 5 us.
    double route = 0;
    for (int i = 0; i < 8; ++i) route = std::max(route, router.route(i, 8 + i).latency.value());
    const double latency = 10e-6 + 2 * (route + 5e-6);
    return r.iteration.value() - latency;
  };
  const double eight = time(8), one = time(1);
  // Each group has its own 400 Gb/s NIC (x 0.9), or all eight share one.
  CHECK(eight == doctest::Approx(S / (50e9 * 0.9)).epsilon(1e-9));
  CHECK(one / eight == doctest::Approx(8.0).epsilon(1e-9));
}

TEST_CASE("DeepEP sends a token once per node: the dispatch moves nodes_per_token / top_k of the copies, by hand") {
  // 16 experts, top-4, in 2 routing groups of which a token uses 1: laid out a group a node (EP 16
  // over 2 nodes), a token reaches one node, against top-4 copies: a quarter of the bytes.
  Fixture f;
  f.model.experts = 16;
  f.model.top_k = 4;
  f.model.expert_ffn_hidden = f.model.ffn_hidden;
  f.model.routing_groups = 2;
  f.model.routing_groups_per_token = 1;
  CHECK(workload::nodes_per_token(f.model, 2) == 1.0);
  CHECK(workload::dispatch_network_share(f.model, f.training, 2) == 1.0);  // the alltoall dispatcher
  f.training.moe_dispatcher = workload::MoeDispatcher::deepep;
  CHECK(workload::dispatch_network_share(f.model, f.training, 2) == 0.25);
  CHECK(workload::dispatch_network_share(f.model, f.training, 1) == 1.0);  // inside one node nothing crosses
  // DeepSeek-V3: 8 groups, 4 a token, over 8 nodes: 4 nodes, half the copies; without the limit,
  // 8 draws over 8 nodes reach 8·(1 − (7/8)^8) = 5.25 of them.
  auto v3 = f.model;
  v3.experts = 256;
  v3.top_k = 8;
  v3.routing_groups = 8;
  v3.routing_groups_per_token = 4;
  CHECK(workload::nodes_per_token(v3, 8) == doctest::Approx(4.0));
  v3.routing_groups = v3.routing_groups_per_token = 0;
  CHECK(workload::nodes_per_token(v3, 8) == doctest::Approx(8 * (1 - std::pow(7.0 / 8, 8))));
  // In the simulator: one all-to-all over the 16 ranks of 2 nodes, bandwidth-bound.
  const topology::Cluster cluster(test::dgx_cluster(2));
  std::vector<int> ranks(16);
  for (int i = 0; i < 16; ++i) ranks[static_cast<std::size_t>(i)] = i;
  auto g = single_collective(Collective::all_to_all, {ranks}, 4294967296.0);
  g.tasks[0].dim = CommDim::ep;
  const auto deepep = run(cluster, f, g, exact_profile()).iteration.value();
  f.training.moe_dispatcher = workload::MoeDispatcher::alltoall;
  const auto alltoall = run(cluster, f, g, exact_profile()).iteration.value();
  CHECK(deepep / alltoall == doctest::Approx(0.25).epsilon(0.01));
}

TEST_CASE("the overlap slowdown applies exactly while the overlap lasts") {
  Fixture f;
  const topology::Cluster cluster(test::dgx_cluster(1));
  auto profile = plain_profile();
  profile.compute_slowdown[static_cast<std::size_t>(calibrate::ComputeKind::memory_bound)][0] = 0.25;
  profile.comm_slowdown[0] = 0.1;
  const calibrate::CostModel cost(cluster.spec().node.gpu, profile);
  // A memory-bound kernel of C seconds and, independently, a TP all-reduce over GPUs 0 and 1.
  TaskGraph g = single_collective(Collective::all_reduce, {{0, 1}}, 2e9);
  g.tasks[0].dim = CommDim::tp;
  workload::Block blk;
  workload::Op op;
  op.kind = workload::OpKind::memory_bound;
  op.bytes = 3.35e12 * 0.85 * 0.1;  // 0.1 s at the H100's HBM bandwidth x 0.85
  blk.forward.push_back(op);
  g.blocks.push_back(blk);
  Task c;
  c.kind = TaskKind::compute;
  c.phase = Phase::forward;
  c.block = 0;
  g.tasks.push_back(c);
  const double C = cost.op_time(op).value();
  CHECK(C == doctest::Approx(0.1).scale(0));
  // The all-reduce waits L (launch + 2 steps), then moves 2e9 bytes at 360 GB/s slowed by 1.1:
  // D' = 2e9 / 360e9 x 1.1. Meanwhile the kernel runs at 1/1.25: it loses D' x (1 - 1/1.25).
  const double L = 10e-6 + 2 * (0.7e-6 + 1e-6);
  const double D = 2e9 / (450e9 * 0.8) * 1.1;
  const auto r = run(cluster, f, g, profile);
  CHECK(r.iteration.value() == doctest::Approx(C + D * (1 - 1 / 1.25)).epsilon(1e-9));
  CHECK(L + D < C);
}

TEST_CASE("pipeline bubble with free communication: (p-1)/(m+p-1) for 1F1B, (p-1)/(v·m+p-1) interleaved") {
  // 8 GPUs on one NVSwitch with links a million times faster than any GPU: transfers cost ~nothing.
  auto spec = free_links_node();
  const topology::Cluster cluster(spec);
  Fixture f = uniform_pipeline_fixture();  // embedding and head negligible against 4 layers per stage
  const auto profile = free_comm_profile();
  const calibrate::CostModel cost(spec.node.gpu, profile);
  for (int v : {1, 2}) {
    CAPTURE(v);
    const int p = 4, m = 8;
    f.plan = test::plan(1, p, 2, 1, 2 * m);
    f.plan.vpp = v;
    f.plan.schedule = v > 1 ? workload::Schedule::interleaved_1f1b : workload::Schedule::one_f_one_b;
    const auto g = workload::build_tasks(f.model, f.training, f.plan);
    // Per micro-batch compute of a middle stage (stage 1): forward t_f and backward t_b.
    double tf = 0, tb = 0, opt = 0;
    for (const auto& t : g.tasks) {
      if (t.kind != TaskKind::compute || t.stage != 1) continue;
      const double d = cost.ops_time(g.ops(t)).value();
      if (t.phase == Phase::optimizer) opt = d;
      else if (t.microbatch == 0 && t.phase == Phase::forward) tf += d;
      else if (t.microbatch == 0) tb += d;
    }
    const auto r = run(cluster, f, g, profile);
    const double pipeline = (m * v + p - 1) * (tf + tb) / v;
    // 1F1B's transfers block (each send meets its receive): the first and last stages, heavier by
    // the embedding and the head, hold their neighbours at each exchange: +1.0% here. Interleaved
    // transfers run under the compute.
    CHECK(r.iteration.value() - opt == doctest::Approx(pipeline).epsilon(v == 1 ? 0.02 : 0.01).scale(0));
    // The bubble is the (p-1)/(v·m+p-1) part of it.
    CHECK((pipeline - m * (tf + tb)) / pipeline == doctest::Approx(double(p - 1) / (v * m + p - 1)).scale(0));
  }
}

TEST_CASE("a first chunk with the embedding alone and a last with the head alone (Megatron-Core's E| and |L) run as stages of their own") {
  // Free communication and a negligible embedding and head: layers {0, 8, 8, 0} over 4 stages is a
  // 2-stage 1F1B pipeline of the middle stages, (m + 1)(t_f + t_b), plus the ends' own small work.
  auto spec = free_links_node();
  const topology::Cluster cluster(spec);
  Fixture f = uniform_pipeline_fixture();
  const auto profile = free_comm_profile();
  const calibrate::CostModel cost(spec.node.gpu, profile);
  const int m = 8;
  f.plan = test::plan(1, 4, 2, 1, 2 * m);
  f.plan.chunk_layers = {0, 8, 8, 0};
  REQUIRE_FALSE(workload::find_plan_problem(f.plan, f.model, 8).has_value());
  const auto g = workload::build_tasks(f.model, f.training, f.plan);
  double tf = 0, tb = 0, opt = 0, ends = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::compute) continue;
    const double d = cost.ops_time(g.ops(t)).value();
    // The end stages compute the embedding and the head alone (layer -1).
    if (t.stage == 0 || t.stage == 3) {
      CHECK((t.layer == -1 || t.phase == Phase::optimizer));
      if (t.microbatch == 0 && t.phase != Phase::optimizer) ends += d;
      continue;
    }
    if (t.stage != 1) continue;
    if (t.phase == Phase::optimizer) opt = d;
    else if (t.microbatch == 0 && t.phase == Phase::forward) tf += d;
    else if (t.microbatch == 0) tb += d;
  }
  const auto r = run(cluster, f, g, profile);
  CHECK(ends < 0.02 * (tf + tb));
  CHECK(r.iteration.value() - opt == doctest::Approx((m + 1) * (tf + tb)).epsilon(0.03).scale(0));
}

TEST_CASE("scale by symmetry: replicas simulated once agree with every replica simulated") {
  Fixture f;
  f.model = test::small_gpt(8);
  f.plan = test::plan(4, 2, 2, 1, 8);
  f.plan.zero = 1;
  const topology::Cluster cluster(test::dgx_cluster(2));
  const auto g = workload::build_tasks(f.model, f.training, f.plan);
  const auto once = run(cluster, f, g, plain_profile());
  const auto full = run(cluster, f, g, plain_profile(), {true, false});
  CHECK(once.iteration.value() == doctest::Approx(full.iteration.value()).epsilon(0.01).scale(0));
}

TEST_CASE("same input, byte-identical result and trace") {
  Fixture f;
  f.model = test::small_gpt(8);
  f.plan = test::plan(2, 2, 4, 1, 16);
  const topology::Cluster cluster(test::dgx_cluster(2));
  const auto g = workload::build_tasks(f.model, f.training, f.plan);
  std::string traces[2];
  double times[2];
  for (int i = 0; i < 2; ++i) {
    Timeline tl;
    times[i] = run(cluster, f, g, plain_profile(), {false, true}, &tl).iteration.value();
    std::ostringstream out;
    write_chrome_trace(out, g, tl, cluster);
    traces[i] = out.str();
  }
  CHECK(times[0] == times[1]);
  CHECK(traces[0] == traces[1]);
  CHECK(traces[0].find("\"traceEvents\"") != std::string::npos);
}

TEST_CASE("IB SHARP halves a cross-node all-reduce's traffic when the network has it") {
  // GPU 0 of 8 nodes: the ring moves 2(n-1)/n·S = 1.75·S through each NIC; SHARP sends S up to the
  // leaf and takes S back, so its data time is S / (50 GB/s x 0.9).
  const double S = 4294967296.0;
  std::vector<int> group;
  for (int n = 0; n < 8; ++n) group.push_back(8 * n);
  Fixture f;
  auto spec = test::dgx_cluster(8);
  spec.network.sharp = true;
  const topology::Cluster cluster(spec);
  const auto r = run(cluster, f, single_collective(Collective::all_reduce, {group}, S), plain_profile());
  CHECK(r.iteration.value() == doctest::Approx(S / (50e9 * 0.9)).epsilon(0.001).scale(0));
  const topology::Cluster plain(test::dgx_cluster(8));
  const auto ring = run(plain, f, single_collective(Collective::all_reduce, {group}, S), plain_profile());
  CHECK(ring.iteration.value() == doctest::Approx(1.75 * S / (50e9 * 0.9)).epsilon(0.001).scale(0));
}

TEST_CASE("pairwise all-to-all over 8 GPUs of one island: (n-1)/n·S/B in n-1 steps") {
  Fixture f;
  const topology::Cluster cluster(test::dgx_cluster(1));
  const double S = 1073741824.0;
  const auto r = run(cluster, f, single_collective(Collective::all_to_all, {{0, 1, 2, 3, 4, 5, 6, 7}}, S), plain_profile());
  // Each GPU sends 7/8·S out of its 450 GB/s NVLink (x 0.8) and receives as much; 7 steps.
  CHECK(r.iteration.value() == doctest::Approx(10e-6 + 7 * (0.7e-6 + 1e-6) + 7.0 / 8 * S / (450e9 * 0.8)).epsilon(1e-9));
}

TEST_CASE("context parallelism is reported as exposed CP: Ulysses' forward all-to-alls, ring's first step") {
  // Four GPUs of one island, cp = 4, nothing else parallel: the only other communication is the
  // gradient all-reduce over dp·cp = 4 ranks at the end (exposed DP).
  Fixture f;
  f.model = test::small_gpt(4);
  f.training = test::training(4096);
  auto c = test::dgx_cluster(1);
  c.node.gpus = 4;
  c.node.nics.count = 4;
  c.node.nics.affinity = {0, 1, 2, 3};
  c.node.pcie.switches = 2;
  c.node.pcie.sockets = 1;
  const topology::Cluster cluster(c);
  for (auto kind : {workload::CpKind::ulysses, workload::CpKind::ring}) {
    CAPTURE(static_cast<int>(kind));
    f.plan = test::plan(1, 1, 1, 1, 2);
    f.plan.cp = 4;
    f.plan.cp_kind = kind;
    const auto g = workload::build_tasks(f.model, f.training, f.plan);
    Timeline tl;
    const auto r = run(cluster, f, g, plain_profile(), {false, true}, &tl);
    // Seconds of task t during which a compute task of block kind `block` (any, when nullopt) ran.
    auto overlap = [&](std::uint32_t t, std::optional<workload::BlockKind> block) {
      double o = 0;
      for (std::uint32_t u = 0; u < g.tasks.size(); ++u) {
        if (g.tasks[u].kind != TaskKind::compute || (block && g.blocks[g.tasks[u].block].kind != *block)) continue;
        const auto lo = std::max(tl.start_ps[t], tl.start_ps[u]), hi = std::min(tl.finish_ps[t], tl.finish_ps[u]);
        if (hi > lo) o += static_cast<double>(hi - lo) * 1e-12;
      }
      return o;
    };
    // Transfers an attention compute task waits for: ring's first step.
    std::set<std::uint32_t> awaited;
    for (std::uint32_t u = 0; u < g.tasks.size(); ++u) {
      if (g.tasks[u].kind != TaskKind::compute || g.blocks[g.tasks[u].block].kind != workload::BlockKind::attention) continue;
      for (auto d : g.dependencies(u)) awaited.insert(d);
    }
    double all = 0, forward_alone = 0, hidden_in_attention = 0;
    for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
      const auto& task = g.tasks[t];
      if (task.kind != TaskKind::collective || task.dim != CommDim::cp) continue;
      const double d = static_cast<double>(tl.finish_ps[t] - tl.start_ps[t]) * 1e-12;
      all += d;
      const bool first_step = kind == workload::CpKind::ring && awaited.count(t);
      if (task.phase == Phase::forward && (kind == workload::CpKind::ulysses || first_step)) {
        // Ulysses' all-to-alls and ring's first step: the compute stream waits for them.
        CHECK(overlap(t, std::nullopt) == 0);
        forward_alone += d;
      }
      hidden_in_attention += overlap(t, workload::BlockKind::attention);
    }
    const auto& b = r.stages[0];
    const double exposed = b.exposed[static_cast<std::size_t>(CommDim::cp)].value();
    CHECK(forward_alone > 0);
    CHECK(exposed >= forward_alone * (1 - 1e-9));
    CHECK(exposed <= all * (1 + 1e-9));
    // Ring's later steps run while the attention computes; Ulysses never runs beside attention.
    if (kind == workload::CpKind::ring) CHECK(hidden_in_attention > 0);
    else CHECK(hidden_in_attention == 0);
    // The breakdown still adds up to the iteration.
    double total = b.compute().value() + b.bubble.value();
    for (const auto& e : b.exposed) total += e.value();
    CHECK(total == doctest::Approx(r.iteration.value()).epsilon(1e-9));
  }
}

TEST_CASE("ZB-H1 with free communication: bubble (p-1)(T_F + T_B - T_W), 2(p-1)·T_W less than 1F1B, same peak memory") {
  // The fixture of "pipeline bubble with free communication": 4 uniform stages of 4 layers, links a
  // million times faster than any GPU, embedding and head negligible.
  FreePipeline fp;
  auto& f = fp.f;
  const int p = 4, m = 8;
  double bubble[2], stage0[2];
  int in_flight[2];
  double tf = 0, tb = 0, tw = 0;
  for (auto schedule : {workload::Schedule::one_f_one_b, workload::Schedule::zb_h1}) {
    const int i = schedule == workload::Schedule::zb_h1;
    f.plan = test::plan(1, p, 2, 1, 2 * m);
    f.plan.schedule = schedule;
    const auto g = workload::build_tasks(f.model, f.training, f.plan);
    // Per micro-batch on a middle stage: forward T_F, input gradients T_B, weight gradients T_W.
    const auto st = stage_passes(g, fp.cost, 1);
    tf = st.forward, tb = st.backward, tw = st.weight;
    const auto r = run(fp.cluster, f, g, fp.profile);
    bubble[i] = r.iteration.value() - st.optimizer - m * (tf + tb + tw);
    stage0[i] = r.memory.stages[0].activations.value();
    in_flight[i] = 0;
    for (const auto& s : r.memory.stages) in_flight[i] = std::max(in_flight[i], s.chunks_in_flight);
  }
  // 1F1B (each backward's W right behind its B, the gradient sent after both): (p-1)(T_F + T_B + T_W),
  // +3.7% here from its blocking transfers (see the bubble test above); ZB-H1's run under the compute.
  CHECK(bubble[0] == doctest::Approx((p - 1) * (tf + tb + tw)).epsilon(0.05).scale(0));
  // ZB-H1: (p-1)(T_F + T_B - T_W), the paper's figure, within 5% (4.7% over here, where 1F1B lands
  // within 0.3% of its own figure: the first and last stages' embedding and head are not in T_F, T_B, T_W).
  CHECK(bubble[1] == doctest::Approx((p - 1) * (tf + tb - tw)).epsilon(0.05).scale(0));
  CHECK(bubble[0] - bubble[1] == doctest::Approx(2 * (p - 1) * tw).epsilon(0.05).scale(0));
  // Peak activations: p micro-batches at most on any stage under both (stage 0 in 1F1B, every stage
  // in ZB-H1, whose later stages keep theirs until the deferred W's); stage 0 holds the same bytes.
  CHECK(in_flight[0] == p);
  CHECK(in_flight[1] == p);
  CHECK(stage0[1] == doctest::Approx(stage0[0]).scale(0));
}

TEST_CASE("the 2021 stacks' synchronous TP all-reduce: each input-gradient all-reduce adds its whole time, by hand") {
  // TP2 x DP4 on one NVSwitch node, one micro-batch of 4096 tokens at hidden 4096: each block's
  // input-gradient all-reduce (S = 2 B x 4096 x 4096) takes, alone with its twins, 10 us of launch,
  // two ring steps of 0.7 + 1 us and 2(n-1)/n·S = S at 450 GB/s x 0.8. Asynchronous (the default)
  // it runs under the block's weight-gradient GEMMs (hundreds of us here) and costs nothing; after
  // them (training.async_tp_allreduce false) all of it shows: 4 layers x 2 blocks of it.
  const topology::Cluster cluster(test::dgx_cluster(1));
  Fixture f;
  f.model = test::small_gpt(4);
  f.model.hidden = 4096;
  f.model.heads = 32;
  f.model.kv_heads = 32;
  f.model.head_dim = 128;
  f.model.ffn_hidden = 16384;
  f.training = test::training(4096);
  f.plan = test::plan(2, 1, 4, 1, 4);
  const auto profile = exact_profile();
  auto iteration = [&](bool async) {
    f.training.async_tp_allreduce = async;
    return run(cluster, f, workload::build_tasks(f.model, f.training, f.plan), profile).iteration.value();
  };
  const double S = 2.0 * 4096 * 4096;
  const double all_reduce = 10e-6 + 2 * (0.7e-6 + 1e-6) + S / (450e9 * 0.8);
  CHECK(iteration(false) - iteration(true) == doctest::Approx(8 * all_reduce).epsilon(1e-6).scale(0));
}

TEST_CASE("DeepSpeed's ZeRO-1 all-reduces what Megatron-LM's distributed optimizer reduce-scatters: one all-gather more per bucket, by hand") {
  // DP8 on one NVSwitch node, ZeRO-1, no overlap: after the backward each gradient bucket of B bytes
  // is reduce-scattered (7 ring steps, 7/8·B at 450 GB/s x 0.8) or all-reduced (14 steps, twice the
  // bytes); the optimizer waits for it, the parameter gather after it is the same in both.
  const topology::Cluster cluster(test::dgx_cluster(1));
  Fixture f;
  f.plan = test::plan(1, 1, 8, 1, 8);
  f.plan.zero = 1;
  const auto profile = exact_profile();
  auto graph = [&](workload::Zero1Engine engine) {
    f.training.zero1_engine = engine;
    return workload::build_tasks(f.model, f.training, f.plan);
  };
  const auto megatron = graph(workload::Zero1Engine::megatron), deepspeed = graph(workload::Zero1Engine::deepspeed);
  double extra = 0;
  for (const auto& t : megatron.tasks) {
    if (t.kind == TaskKind::collective && t.dim == CommDim::dp && t.collective == Collective::reduce_scatter) extra += 7 * (0.7e-6 + 1e-6) + 7.0 / 8 * t.bytes / (450e9 * 0.8);
  }
  REQUIRE(extra > 0);
  f.training.zero1_engine = workload::Zero1Engine::megatron;
  const double a = run(cluster, f, megatron, profile).iteration.value();
  f.training.zero1_engine = workload::Zero1Engine::deepspeed;
  const double b = run(cluster, f, deepspeed, profile).iteration.value();
  CHECK(b - a == doctest::Approx(extra).epsilon(1e-6).scale(0));
}

TEST_CASE("FSDP backward prefetch by hand: none exposes each layer's reduce-scatter and gather, post the gather, pre neither") {
  // DP8 ZeRO-3 on one NVSwitch node, one micro-batch of 8192 tokens: a layer's backward (milliseconds)
  // outlasts its collectives (tens of microseconds). Without prefetch the gather of layer l-1 queues
  // behind layer l's reduce-scatter, which starts when layer l's gradients are done: both are exposed
  // between layers. BACKWARD_POST issues the gather first: the reduce-scatter runs under layer l-1,
  // the gather is exposed. BACKWARD_PRE issues it as layer l starts: it runs under layer l. Each
  // collective alone: 10 us launch, 7 ring steps of 0.7 + 1 us, 7/8 of its bytes at 450 GB/s x 0.8.
  const topology::Cluster cluster(test::dgx_cluster(1));
  Fixture f;
  f.training = test::training(8192);
  f.plan = test::plan(1, 1, 8, 1, 8);
  f.plan.zero = 3;
  const auto profile = exact_profile();
  auto iteration = [&](workload::Zero3Prefetch prefetch) {
    f.training.zero3_backward_prefetch = prefetch;
    return run(cluster, f, workload::build_tasks(f.model, f.training, f.plan), profile).iteration.value();
  };
  const auto g = workload::build_tasks(f.model, f.training, f.plan);
  auto alone = [](double bytes) { return 10e-6 + 7 * (0.7e-6 + 1e-6) + 7.0 / 8 * bytes / (450e9 * 0.8); };
  double gathers = 0, reduces = 0;  // between layers: gathers of layers 0-2, reduce-scatters of layers 1-3
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::collective || t.dim != CommDim::dp || t.phase == Phase::forward || t.layer < 0) continue;
    if (t.collective == Collective::all_gather && t.layer <= 2) gathers += alone(t.bytes);
    if (t.collective == Collective::reduce_scatter && t.layer >= 1) reduces += alone(t.bytes);
  }
  REQUIRE(gathers > 0);
  REQUIRE(reduces > 0);
  const double none = iteration(workload::Zero3Prefetch::none), post = iteration(workload::Zero3Prefetch::post),
               pre = iteration(workload::Zero3Prefetch::pre);
  CHECK(none - post == doctest::Approx(reduces).epsilon(1e-6).scale(0));
  CHECK(post - pre == doctest::Approx(gathers).epsilon(1e-6).scale(0));
}

TEST_CASE("the schedules of today in the simulator, free communication: each one's bubble is its schedule's, replayed by hand") {
  // The uniform pipeline fixture (4 stages, 16 equal layers, negligible embedding and head): the
  // task graph runs the very steps pipeline_schedule() builds, so the simulated idle time must be
  // the replay's with the graph's own pass times: (pp-1)(T_F+T_B-T_W) for ZB-1P,
  // (PP/2-1)(F&B+B-3W) for DualPipe, and the others' replayed figures.
  FreePipeline fp;
  auto& f = fp.f;
  const auto& cluster = fp.cluster;
  const auto& profile = fp.profile;
  const auto& cost = fp.cost;
  const int p = 4, m = 8;
  using workload::Schedule;
  for (auto schedule : {Schedule::zb_1p, Schedule::zb_2p, Schedule::zb_v, Schedule::dualpipe, Schedule::dualpipe_v}) {
    CAPTURE(workload::schedule_name(schedule));
    f.plan = test::plan(1, p, 2, 1, 2 * m);
    f.plan.schedule = schedule;
    f.plan.vpp = workload::is_v_shaped(schedule) ? 2 : 1;
    REQUIRE_FALSE(workload::find_plan_problem(f.plan, f.model, 8).has_value());
    const auto g = workload::build_tasks(f.model, f.training, f.plan);
    const auto st = stage_passes(g, cost, 1);
    const auto r = run(cluster, f, g, profile);
    const double bubble = r.iteration.value() - st.optimizer - m * (st.forward + st.backward + st.weight);
    // A micro-batch passes two of a V's chunks on each stage, one of DualPipe's two copies.
    const double chunks = f.plan.vpp;
    auto shape = workload::planned_shape(f.model, f.training, f.plan);
    shape.times = {st.forward / chunks, st.backward / chunks, st.weight / chunks, 0};
    const auto replayed = workload::replay_pipeline(shape, workload::pipeline_schedule(workload::planned_shape(f.model, f.training, f.plan)));
    const double expected = replayed.makespan - m * (st.forward + st.backward + st.weight);
    // Within 10% of a stage's work per micro-batch: the ends' embedding and head are not in the
    // times (ZB: 6%, DualPipe-V, whose first stage holds both: 8%).
    CHECK(std::abs(bubble - expected) <= 0.1 * (st.forward + st.backward + st.weight));
    if (schedule == Schedule::zb_1p) CHECK(bubble == doctest::Approx((p - 1) * (st.forward + st.backward - st.weight)).epsilon(0.05));
    if (schedule == Schedule::dualpipe) {
      const double b_full = st.backward + st.weight;
      CHECK(bubble == doctest::Approx((p / 2 - 1) * ((st.forward + b_full) + b_full - 3 * st.weight)).epsilon(0.06));
      // Two copies of the parameters on every stage, PP + 1 micro-batches' activations at the peak.
      CHECK(r.memory.stages[1].parameters == doctest::Approx(2 * workload::layer_parameters(f.model, f.plan, 0).total() * 4));
      int peak = 0;
      for (const auto& s : r.memory.stages) peak = std::max(peak, s.chunks_in_flight);
      CHECK(peak == p + 1);
    }
    if (schedule == Schedule::zb_2p || schedule == Schedule::zb_v) {
      // Under 1F1B's idle (p-1)(T_F+T_B+T_W) by most of it.
      CHECK(bubble < 0.5 * (p - 1) * (st.forward + st.backward + st.weight));
    }
  }
}

TEST_CASE("F&B steps: one micro-batch's expert all-to-alls run under another's compute, the same tasks in another order") {
  // A small mixture of experts on 4 DGX nodes (pp 2 x dp 16), EP 16 over two nodes: the all-to-alls
  // cross the network. Interleaved 1F1B over pp 2 with and without the overlap (Megatron-LM's
  // --overlap-moe-expert-parallel-comm); then DualPipe with its F&B steps.
  const topology::Cluster cluster(test::dgx_cluster(4));
  Fixture f;
  f.model = test::small_gpt(8);
  f.model.experts = 16;
  f.model.top_k = 4;
  f.model.expert_ffn_hidden = 2048;
  const auto profile = exact_profile();
  auto iteration = [&](workload::Plan plan, double* exposed_ep = nullptr) {
    f.plan = plan;
    REQUIRE_FALSE(workload::find_plan_problem(plan, f.model, 32).has_value());
    const auto g = workload::build_tasks(f.model, f.training, plan);
    const auto r = run(cluster, f, g, profile);
    if (exposed_ep) *exposed_ep = r.stages[0].exposed[static_cast<std::size_t>(CommDim::ep)].value();
    return std::pair{r.iteration.value(), g.tasks.size()};
  };
  auto plan = test::plan(1, 2, 16, 1, 256);
  plan.ep = 16;
  plan.vpp = 2;
  plan.schedule = workload::Schedule::interleaved_1f1b;
  double exposed_off = 0, exposed_on = 0;
  const auto [off, tasks_off] = iteration(plan, &exposed_off);
  plan.overlap.ep_comm = true;
  const auto [on, tasks_on] = iteration(plan, &exposed_on);
  CHECK(tasks_on == tasks_off);
  CHECK(exposed_off > 0.2 * off);
  // 27 of the 32 forwards a stage runs are paired (one more warm-up forward, then steady pairs): about
  // half of the exposed all-to-all time goes under the other micro-batch's compute here.
  CHECK(exposed_on < 0.6 * exposed_off);
  CHECK(on < off - 0.5 * (exposed_off - exposed_on));
  // DualPipe pairs its steps with the same effect.
  plan.schedule = workload::Schedule::dualpipe;
  plan.vpp = 1;
  plan.overlap.ep_comm = false;
  double dp_off_ep = 0, dp_on_ep = 0;
  const auto dp_off = iteration(plan, &dp_off_ep).first;
  plan.overlap.ep_comm = true;
  const auto dp_on = iteration(plan, &dp_on_ep).first;
  CHECK(dp_on_ep < 0.6 * dp_off_ep);
  CHECK(dp_on < dp_off);
  // Compute that runs beside the all-to-alls is slowed by them (the profile's overlap slowdown): the
  // same kernels take longer on the stage with the overlap.
  auto compute_time = [&](bool overlap) {
    plan.overlap.ep_comm = overlap;
    f.plan = plan;
    const auto g = workload::build_tasks(f.model, f.training, plan);
    const auto r = run(cluster, f, g, plain_profile());
    return r.stages[1].forward.value() + r.stages[1].backward.value();
  };
  CHECK(compute_time(true) > compute_time(false) * 1.005);
}
