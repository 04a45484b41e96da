#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "tests/workload/fixtures.hpp"
#include "workload/memory.hpp"
#include "workload/moe_ops.hpp"
#include "workload/task_graph.hpp"

using namespace parasim;
using namespace parasim::workload;

namespace {
std::map<std::string, int> count_by(const TaskGraph& g) {
  std::map<std::string, int> c;
  for (const auto& t : g.tasks) {
    std::string key = t.kind == TaskKind::compute ? std::string(phase_name(t.phase))
                                                  : std::string(comm_dim_name(t.dim)) + "." + std::string(collective_name(t.collective));
    ++c[key];
  }
  return c;
}

// Every dependency points at an existing task and the graph has no cycle (Kahn's algorithm).
bool acyclic(const TaskGraph& g) {
  std::vector<int> indegree(g.tasks.size(), 0);
  std::vector<std::vector<std::uint32_t>> users(g.tasks.size());
  for (std::uint32_t i = 0; i < g.tasks.size(); ++i) {
    for (auto d : g.dependencies(i)) {
      if (d >= g.tasks.size()) return false;
      ++indegree[i];
      users[d].push_back(i);
    }
  }
  std::vector<std::uint32_t> ready;
  for (std::uint32_t i = 0; i < g.tasks.size(); ++i) {
    if (indegree[i] == 0) ready.push_back(i);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const auto t = ready.back();
    ready.pop_back();
    ++done;
    for (auto u : users[t]) {
      if (--indegree[u] == 0) ready.push_back(u);
    }
  }
  return done == g.tasks.size();
}
}  // namespace

TEST_CASE("task FLOPs equal Megatron's model-FLOPs formula, with and without full recompute") {
  // GPT-3 175B shapes on a small plan: 96 layers, TP 8, PP 8, 4 micro-batches of 1.
  const auto m = test::gpt175b();
  const auto tr = test::training(2048);
  auto p = test::plan(8, 8, 2, 1, 8);
  const auto g = build_tasks(m, tr, p);
  CHECK(acyclic(g));
  CHECK(g.total_flops() == doctest::Approx(megatron_flops(m, 8, 2048, 51200, false)).epsilon(0.01).scale(0));
  p.recompute = Recompute::full;
  const auto r = build_tasks(m, tr, p);
  CHECK(r.total_flops() == doctest::Approx(megatron_flops(m, 8, 2048, 51200, true)).epsilon(0.01).scale(0));
}

TEST_CASE("Llama shapes: 6N + 12·l·s·h per token within 2%") {
  const auto m = test::llama3_8b();
  const auto tr = test::training(8192);
  const auto g = build_tasks(m, tr, test::plan(2, 2, 2, 1, 4));
  const double tokens = 4.0 * 8192;
  const double N = count_parameters(m).in_matmuls();
  CHECK(g.total_flops() / tokens == doctest::Approx(6 * N + 12.0 * 32 * 8192 * 4096).epsilon(0.02).scale(0));
}

TEST_CASE("conservation: task FLOPs = model FLOPs x (1 + recomputed share) over models and plans") {
  const std::vector<ModelSpec> models{test::small_gpt(8), test::llama3_8b()};
  for (const auto& m : models) {
    for (auto [tp, pp, vpp] : {std::tuple{1, 1, 1}, {2, 2, 1}, {4, 2, 2}, {1, 4, 2}}) {
      for (auto rc : {Recompute::none, Recompute::selective, Recompute::full}) {
        for (bool sp : {false, true}) {
          CAPTURE(m.name);
          CAPTURE(tp);
          CAPTURE(pp);
          CAPTURE(vpp);
          auto p = test::plan(tp, pp, 2, 1, 16);
          p.vpp = vpp;
          p.schedule = vpp > 1 ? Schedule::interleaved_1f1b : Schedule::one_f_one_b;
          p.sp = sp && tp > 1;
          p.recompute = rc;
          const auto tr = test::training(1024);
          const auto g = build_tasks(m, tr, p);
          const double tokens = 16.0 * 1024;
          const double model = training_flops_per_token(m, 1024, tp) * tokens;
          // Recompute adds one forward of what it recomputes: the whole layer (full) or the
          // attention core (selective); never the embedding or the head.
          const double layer_fwd = (total_flops(attention_block(m, tr, {1, 1024, tp, p.sp, Recompute::none}).forward) +
                                    total_flops(mlp_block(m, tr, {1, 1024, tp, p.sp, Recompute::none}).forward)) *
                                   tp;
          const double core_fwd = 4.0 * 1024 * 1024 * m.q_width();
          const double extra = rc == Recompute::full ? layer_fwd * m.layers * 16 : rc == Recompute::selective ? core_fwd * m.layers * 16 : 0;
          CHECK(g.total_flops() == doctest::Approx(model + extra).epsilon(1e-9));
          CHECK(acyclic(g));
        }
      }
    }
  }
}

TEST_CASE("task counts of a TP2 PP2 DP2 plan, by hand") {
  // 8 layers, 2 per... 4 per stage; 4 micro-batches per replica; no SP, no recompute.
  const auto m = test::small_gpt(8);
  auto p = test::plan(2, 2, 2, 1, 8);
  const auto g = build_tasks(m, test::training(1024), p);
  const auto c = count_by(g);
  // Forward compute: per micro-batch 8 layers x 2 blocks + embedding + head = 18; x 4.
  CHECK(c.at("forward") == 4 * 18);
  // Backward: input gradients for 16 blocks + head (the embedding has none); weights for all 18.
  CHECK(c.at("backward_input") == 4 * 17);
  CHECK(c.at("backward_weight") == 4 * 18);
  CHECK(c.at("optimizer") == 2);
  // TP all-reduces: forward 2 per layer + embedding + loss; backward 2 per layer + head: 8·2+2 + 8·2+1.
  CHECK(c.at("tp.all_reduce") == 4 * (18 + 17));
  // PP: one activation forward and one gradient back per micro-batch across the one boundary.
  CHECK(c.at("pp.send_recv") == 2 * 4);
  // DP: gradient all-reduce per stage in buckets (the small model fits one bucket), and the tied
  // embedding's all-reduce between the first and last stage.
  CHECK(c.at("dp.all_reduce") == 2);
  CHECK(c.at("pp.all_reduce") == 2);
}

TEST_CASE("ZeRO stages issue the collectives their sharding implies") {
  const auto m = test::small_gpt(4);
  auto p = test::plan(1, 1, 8, 1, 16);  // 2 micro-batches
  p.zero = 1;
  auto c = count_by(build_tasks(m, test::training(1024), p));
  CHECK(c.at("dp.reduce_scatter") == 1);
  CHECK(c.at("dp.all_gather") == 1);
  p.zero = 3;
  c = count_by(build_tasks(m, test::training(1024), p));
  // FSDP: per micro-batch and layer, gather before forward and backward, reduce-scatter after.
  CHECK(c.at("dp.all_gather") == 2 * 4 * 2);
  CHECK(c.at("dp.reduce_scatter") == 2 * 4);
  p.zero_group = 4;  // HSDP: plus an all-reduce of the shard across the two replicas
  c = count_by(build_tasks(m, test::training(1024), p));
  CHECK(c.at("dp.all_reduce") == 1);
}

TEST_CASE("FSDP under a pipeline gathers each layer once a step and reduce-scatters it after the last backward") {
  const auto m = test::small_gpt(4);
  auto p = test::plan(1, 2, 4, 1, 16);  // two stages of two layers, 4 micro-batches
  p.zero = 3;
  const auto g = build_tasks(m, test::training(1024), p);
  const auto c = count_by(g);
  CHECK(c.at("dp.all_gather") == 4);
  CHECK(c.at("dp.reduce_scatter") == 4);
  // The gathers belong to the first micro-batch's forward, the reduce-scatters to the last one's
  // backward, after its whole backward of the stage (the layer's gradient and the one below it).
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    const auto& task = g.tasks[t];
    if (task.kind != TaskKind::collective || task.dim != CommDim::dp) continue;
    CAPTURE(t);
    if (task.collective == Collective::all_gather) {
      CHECK(task.phase == Phase::forward);
      CHECK(task.microbatch == 0);
    } else {
      CHECK(task.microbatch == 3);
      for (auto d : g.dependencies(t)) {
        if (g.tasks[d].kind == TaskKind::compute) CHECK(g.tasks[d].layer == (task.stage == 0 ? -1 : 2));
      }
    }
  }
  // DeepSpeed's engine gathers per micro-batch still (and cannot pipeline; its count is the graph's).
  auto tr = test::training(1024);
  tr.zero3_engine = Zero3Engine::deepspeed;
  CHECK(count_by(build_tasks(m, tr, p)).at("dp.reduce_scatter") == 4 * 4);
  CHECK(acyclic(g));
}

TEST_CASE("collective groups follow the dimension order") {
  const auto m = test::small_gpt(4);
  auto p = test::plan(2, 2, 2, 1, 4);
  auto g = build_tasks(m, test::training(1024), p);
  std::set<std::vector<int>> tp_groups;
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::collective && t.dim == CommDim::tp) tp_groups.insert(g.groups[t.group]);
  }
  // [tp, dp, pp]: TP pairs are consecutive: stage 0 = {0, 1}, stage 1 = {4, 5}.
  CHECK(tp_groups == std::set<std::vector<int>>{{0, 1}, {4, 5}});
  p.order = {ParallelDim::dp, ParallelDim::tp, ParallelDim::pp};
  g = build_tasks(m, test::training(1024), p);
  tp_groups.clear();
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::collective && t.dim == CommDim::tp) tp_groups.insert(g.groups[t.group]);
  }
  CHECK(tp_groups == std::set<std::vector<int>>{{0, 2}, {4, 6}});
}

TEST_CASE("conservation over every bundled model: task FLOPs = model FLOPs x (1 + recomputed share)") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator("scenarios/models")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 17);
  int graphs = 0;
  for (const auto& f : files) {
    const auto m = parse_model(yaml::Record(yaml::load_file(f), kModelSchema));
    const auto tr = test::training(1024);
    for (auto [tp, pp] : {std::pair{1, 1}, {8, 1}, {4, 4}, {8, 8}}) {
      for (auto rc : {Recompute::none, Recompute::full}) {
        auto p = test::plan(tp, pp, 2, 1, 2 * pp);
        p.recompute = rc;
        p.sp = m.is_moe() && tp > 1;  // Megatron-LM's MoE with TP needs SP; dense models stay without
        if (find_plan_problem(p, m, tp * pp * 2)) continue;  // e.g. layers not divisible by pp
        CAPTURE(f.string());
        CAPTURE(tp);
        CAPTURE(pp);
        const auto g = build_tasks(m, tr, p);
        const double tokens = 2.0 * pp * 1024;
        const BlockShape shape{1, 1024, tp, p.sp, Recompute::none, 1, CpKind::ring, 1, tp};
        // A layer's forward on all TP ranks: attention and the MLP, or router, experts and shared experts.
        double recomputed = 0;
        for (int l = 0; l < m.layers && rc == Recompute::full; ++l) {
          double fwd = total_flops(attention_block(m, tr, shape).forward);
          if (m.moe_layer(l)) {
            fwd += total_flops(router_block(m, tr, shape).forward) + total_flops(experts_block(m, tr, shape).forward);
            if (m.shared_experts > 0) fwd += total_flops(shared_experts_block(m, tr, shape).forward);
          } else {
            fwd += total_flops(mlp_block(m, tr, shape).forward);
          }
          recomputed += fwd * tp * 2 * pp;
        }
        // BERT's masked-LM transform is a replicated layer: without SP every TP rank computes it on
        // all the tokens, 6·h² per token on each of tp ranks where the model counts one.
        double replicated = m.mlm_head && !p.sp ? (tp - 1) * 6.0 * m.hidden * m.hidden * tokens : 0.0;
        // MLA's down projections (to the query latent, and to the key/value latent with the rotary
        // key) are duplicated on every TP rank too, in the multi-token-prediction layers as well.
        if (m.is_mla()) {
          replicated += (tp - 1) * 6.0 * m.hidden * (m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * tokens * (m.layers + m.mtp_layers);
        }
        CHECK(g.total_flops() == doctest::Approx(training_flops_per_token(m, 1024, tp) * tokens + recomputed + replicated).epsilon(1e-9));
        ++graphs;
      }
    }
  }
  CHECK(graphs >= 60);
}

namespace {
// Collective tasks of a dimension and kind, by phase.
std::map<Phase, int> collectives_by_phase(const TaskGraph& g, CommDim dim, Collective kind, std::set<double>* bytes = nullptr) {
  std::map<Phase, int> c;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::collective || t.dim != dim || t.collective != kind) continue;
    ++c[t.phase];
    if (bytes) bytes->insert(t.bytes);
  }
  return c;
}
}  // namespace

TEST_CASE("ring context parallelism: 2·(cp-1) KV chunk transfers per attention layer forward, twice that backward") {
  // Small GPT, 4 layers, h = 1024 (16 heads of 64), s = 1024, cp = 4, two micro-batches of 1.
  const auto m = test::small_gpt(4);
  auto p = test::plan(1, 1, 1, 1, 2);
  p.cp = 4;
  const auto g = build_tasks(m, test::training(1024), p);
  CHECK(acyclic(g));
  std::set<double> bytes;
  const auto c = collectives_by_phase(g, CommDim::cp, Collective::send_recv, &bytes);
  // Forward: 2 x 3 per layer x 4 layers x 2 micro-batches; backward: K+V and dK+dV, 2 x 2 x 3 each.
  CHECK(c.at(Phase::forward) == 2 * 3 * 4 * 2);
  CHECK(c.at(Phase::backward_input) == 4 * 3 * 4 * 2);
  // A chunk is s/(2·cp) = 128 tokens of K and V: 2 x 128 x 1024 x 2 bytes.
  CHECK(bytes == std::set<double>{2.0 * 128 * 1024 * 2});
  // Every hop of the ring: the group is a neighbour pair; its twins are the other three hops.
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::collective || t.dim != CommDim::cp) continue;
    CHECK(g.groups[t.group] == std::vector<int>{0, 1});
    CHECK(g.twins[t.group].groups() == std::vector<std::vector<int>>{{0, 1}, {1, 2}, {2, 3}, {3, 0}});
    break;
  }
  // The attention forward waits only for the first step (two chunks); the block after it (the MLP)
  // also waits for the last step.
  for (std::uint32_t i = 0; i < g.tasks.size(); ++i) {
    const auto& t = g.tasks[i];
    if (t.kind != TaskKind::compute || t.phase != Phase::forward || g.blocks[t.block].kind != BlockKind::mlp || t.layer != 0 || t.microbatch != 0) {
      continue;
    }
    int cp_deps = 0;
    for (auto d : g.dependencies(i)) cp_deps += g.tasks[d].kind == TaskKind::collective && g.tasks[d].dim == CommDim::cp;
    CHECK(cp_deps == 2);
  }
  // Gradients are reduced over dp·cp = 4 ranks; FLOPs are conserved.
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::collective && t.dim == CommDim::dp) CHECK(g.groups[t.group].size() == 4u);
  }
  CHECK(g.total_flops() == doctest::Approx(training_flops_per_token(m, 1024) * 2 * 1024).epsilon(1e-9));
}

TEST_CASE("Ulysses: 4 all-to-alls per attention layer forward (q, k, v, out) and 4 backward") {
  // Llama-3-8B shapes on 2 layers' worth: s = 8192, cp = 4, one micro-batch; a rank holds 2048 tokens.
  auto m = test::llama3_8b();
  m.layers = 2;
  auto p = test::plan(1, 1, 1, 1, 1);
  p.cp = 4;
  p.cp_kind = CpKind::ulysses;
  const auto g = build_tasks(m, test::training(8192), p);
  CHECK(acyclic(g));
  std::set<double> bytes;
  const auto c = collectives_by_phase(g, CommDim::cp, Collective::all_to_all, &bytes);
  CHECK(c.at(Phase::forward) == 4 * 2);
  CHECK(c.at(Phase::backward_input) == 4 * 2);
  // q and out: 2048 x 4096 x 2 bytes = 16 MiB; k and v: 2048 x 1024 x 2 = 4 MiB.
  CHECK(bytes == std::set<double>{2048.0 * 4096 * 2, 2048.0 * 1024 * 2});
  CHECK(g.total_flops() == doctest::Approx(training_flops_per_token(m, 8192) * 8192).epsilon(1e-9));
  // Selective recompute reruns the core attention and its exchange.
  p.recompute = Recompute::selective;
  const auto r = collectives_by_phase(build_tasks(m, test::training(8192), p), CommDim::cp, Collective::all_to_all);
  CHECK(r.at(Phase::recompute) == 4 * 2);
}

TEST_CASE("ZB-H1 builds the same tasks as 1F1B in another order: weight gradients in their own steps") {
  // TP2 (SP) PP2 DP2 with ring CP2, ZeRO-1 with overlapped reduction; a dense GPT and a small Mixtral.
  auto mixtral = test::mixtral_8x7b();
  mixtral.layers = 4;
  for (const auto& m : {test::small_gpt(4), mixtral}) {
    for (auto rc : {Recompute::none, Recompute::full}) {
      CAPTURE(m.name);
      auto p = test::plan(2, 2, 2, 1, 8);
      p.sp = true;
      p.cp = 2;
      p.zero = 1;
      p.recompute = rc;
      p.overlap.grad_reduce = true;
      if (m.is_moe()) p.ep = 2;
      const auto one = build_tasks(m, test::training(1024), p);
      p.schedule = Schedule::zb_h1;
      REQUIRE_FALSE(find_plan_problem(p, m, 16, 1024).has_value());
      const auto zb = build_tasks(m, test::training(1024), p);
      CHECK(acyclic(zb));
      CHECK(count_by(zb) == count_by(one));
      CHECK(zb.total_flops() == doctest::Approx(one.total_flops()).epsilon(1e-12));
    }
  }
}

TEST_CASE("overlapped parameter gathers run one after another in bucket order, as NCCL issues them") {
  const auto m = test::small_gpt(4);
  auto p = test::plan(1, 1, 8, 1, 16);
  p.zero = 1;
  p.overlap.param_gather = true;
  p.bucket_params = 1;  // a bucket per layer (plus the embedding and head first)
  const auto g = build_tasks(m, test::training(1024), p);
  std::vector<std::uint32_t> gathers;
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    if (g.tasks[t].kind == TaskKind::collective && g.tasks[t].dim == CommDim::dp && g.tasks[t].collective == Collective::all_gather) gathers.push_back(t);
  }
  REQUIRE(gathers.size() >= 4);
  // The first waits for nothing (it starts the iteration); each later one waits for the one before.
  CHECK(g.dependencies(gathers[0]).empty());
  for (std::size_t i = 1; i < gathers.size(); ++i) {
    const auto deps = g.dependencies(gathers[i]);
    CHECK(std::find(deps.begin(), deps.end(), gathers[i - 1]) != deps.end());
  }
  CHECK(acyclic(g));
}

TEST_CASE("ZeRO-3 prefetches one layer ahead: a layer's gather is issued when the layer before it starts") {
  const auto m = test::small_gpt(4);
  auto p = test::plan(1, 1, 8, 1, 8);  // one micro-batch
  p.zero = 3;
  const auto g = build_tasks(m, test::training(1024), p);
  // Forward gathers in layer order; the first needs nothing, gather l waits for a compute task of
  // layer l - 1 (its first), never for one of layer l or later.
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    const auto& task = g.tasks[t];
    if (task.kind != TaskKind::collective || task.collective != Collective::all_gather || task.phase != Phase::forward) continue;
    bool waits_on_previous_layer = false;
    for (auto d : g.dependencies(t)) {
      if (g.tasks[d].kind == TaskKind::compute) {
        CHECK(g.tasks[d].layer == task.layer - 1);
        waits_on_previous_layer = true;
      }
    }
    CHECK(waits_on_previous_layer == (task.layer > 0));
  }
  CHECK(acyclic(g));
}

TEST_CASE("with SP a block's input is gathered again for its weight gradients ahead of the input-gradient reduce-scatter") {
  // Megatron-LM's linear layers with sequence parallelism launch the all-gather of the input before
  // the input-gradient GEMM (it runs under it) and the reduce-scatter of the input gradient after it
  // (it runs under the weight-gradient GEMM). On the one TP stream the re-gather therefore precedes
  // the reduce-scatter, and the weight gradients never wait for the reduce-scatter.
  auto p = test::plan(2, 2, 2, 1, 8);
  p.sp = true;
  for (auto rc : {Recompute::none, Recompute::full}) {
    p.recompute = rc;
    const auto g = build_tasks(test::small_gpt(4), test::training(1024), p);
    CHECK(acyclic(g));
    int regathers = 0;
    for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
      const auto& task = g.tasks[t];
      if (task.kind != TaskKind::collective || task.dim != CommDim::tp || task.phase != Phase::backward_weight) continue;
      REQUIRE(task.collective == Collective::all_gather);
      ++regathers;
      for (auto d : g.dependencies(t)) {
        const auto& dep = g.tasks[d];
        CHECK_FALSE((dep.kind == TaskKind::collective && dep.collective == Collective::reduce_scatter));
        CHECK_FALSE((dep.kind == TaskKind::compute && dep.phase == Phase::backward_input));
      }
    }
    CHECK(regathers > 0);
    for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
      // (The embedding's weight gradient is the gradient reaching it, reduce-scattered out of layer 0.)
      if (g.tasks[t].kind != TaskKind::compute || g.tasks[t].phase != Phase::backward_weight || g.tasks[t].layer < 0) continue;
      for (auto d : g.dependencies(t)) CHECK_FALSE((g.tasks[d].kind == TaskKind::collective && g.tasks[d].collective == Collective::reduce_scatter));
    }
  }
}

TEST_CASE("without TP overlap the compute stream waits for each TP collective before its next kernel, at a chunk's end too") {
  // PyTorch makes the current stream wait for a synchronous NCCL call: after the all-reduce that ends
  // a chunk's forward the next kernel (another micro-batch's) waits as well, though it needs no data
  // from it. The backward's input-gradient all-reduce is the exception: it runs under the weight
  // gradients, and the kernel after them waits.
  const auto m = test::small_gpt(4);
  auto p = test::plan(2, 2, 2, 1, 8);
  auto next_kernel_waits = [](const TaskGraph& g, std::uint32_t c) {
    const auto stage = g.tasks[c].stage;
    int kernels = 0;
    for (std::uint32_t t = c + 1; t < g.tasks.size(); ++t) {
      if (g.tasks[t].kind != TaskKind::compute || g.tasks[t].stage != stage) continue;
      const auto deps = g.dependencies(t);
      if (std::find(deps.begin(), deps.end(), c) != deps.end()) return kernels;
      if (++kernels > 1) break;
    }
    return -1;  // not waited for by either of the next two kernels
  };
  for (bool overlap : {false, true}) {
    CAPTURE(overlap);
    p.overlap.tp_comm = overlap;
    const auto g = build_tasks(m, test::training(1024), p);
    CHECK(acyclic(g));
    int chunk_ends = 0;
    for (std::uint32_t c = 0; c < g.tasks.size(); ++c) {
      const auto& t = g.tasks[c];
      if (t.kind != TaskKind::collective || t.dim != CommDim::tp || t.collective != Collective::all_reduce || t.layer < 0) continue;
      const int wait = next_kernel_waits(g, c);
      std::uint32_t next = c + 1;
      while (next < g.tasks.size() && (g.tasks[next].kind != TaskKind::compute || g.tasks[next].stage != t.stage)) ++next;
      if (t.phase == Phase::forward && next < g.tasks.size() && g.tasks[next].microbatch != t.microbatch) {  // a chunk's last
        ++chunk_ends;
        if (overlap) CHECK(wait != 0);
        else CHECK(wait == 0);
      }
      if (!overlap && t.phase == Phase::backward_input) CHECK(wait == 1);
    }
    CHECK(chunk_ends == 4);  // stage 0, four micro-batches (stage 1 goes on to the head)
  }
}

TEST_CASE("ZeRO-1 engines: Megatron-LM reduce-scatters the gradients, DeepSpeed all-reduces them in full; both gather the parameters") {
  // DeepSpeed's stage 1 does not partition gradients: its pipeline engine all-reduces the bf16
  // optimizer's fp32 gradients over the data-parallel group after the last micro-batch, then each
  // rank steps its partition and the parameters are all-gathered, as under Megatron-LM's
  // distributed optimizer. Same buffers, so the same bytes per collective; an all-reduce moves
  // twice a reduce-scatter's over the links.
  const auto m = test::small_gpt(4);
  auto p = test::plan(2, 2, 2, 1, 8);
  p.zero = 1;
  auto tr = test::training(1024);
  auto dp_bytes = [](const TaskGraph& g, Collective c) {
    double bytes = 0;
    for (const auto& t : g.tasks) {
      if (t.kind == TaskKind::collective && t.dim == CommDim::dp && t.collective == c) bytes += t.bytes;
    }
    return bytes;
  };
  const auto megatron = build_tasks(m, tr, p);
  tr.zero1_engine = Zero1Engine::deepspeed;
  const auto deepspeed = build_tasks(m, tr, p);
  CHECK(dp_bytes(megatron, Collective::all_reduce) == 0);
  CHECK(dp_bytes(megatron, Collective::reduce_scatter) > 0);
  CHECK(dp_bytes(deepspeed, Collective::reduce_scatter) == 0);
  CHECK(dp_bytes(deepspeed, Collective::all_reduce) == doctest::Approx(dp_bytes(megatron, Collective::reduce_scatter)).scale(0));
  CHECK(dp_bytes(deepspeed, Collective::all_gather) == doctest::Approx(dp_bytes(megatron, Collective::all_gather)).scale(0));
  CHECK(dp_bytes(deepspeed, Collective::all_gather) > 0);
  // Without sharding, or with ZeRO-2 (gradients partitioned), the engine changes nothing.
  for (int zero : {0, 2}) {
    p.zero = zero;
    tr.zero1_engine = Zero1Engine::megatron;
    const auto a = count_by(build_tasks(m, tr, p));
    tr.zero1_engine = Zero1Engine::deepspeed;
    CHECK(count_by(build_tasks(m, tr, p)) == a);
  }
}

TEST_CASE("1F1B and GPipe transfers block: each meets its receive, and the sender's next kernel waits for it") {
  // Megatron-LM outside the interleaved schedule (batched p2p, waited) and DeepSpeed's pipeline
  // engine: a send completes when the receiver has posted its receive, after the kernel it runs
  // before the chunk that needs the data; the sender goes on only when the send is done. The graph
  // stays acyclic for every shape (a cycle would be a deadlock).
  const auto m = test::small_gpt(8);
  for (auto schedule : {Schedule::one_f_one_b, Schedule::gpipe, Schedule::interleaved_1f1b}) {
    for (int pp : {2, 4, 8}) {
      for (int micro : {1, 3, 8, 16}) {
        CAPTURE(static_cast<int>(schedule));
        CAPTURE(pp);
        CAPTURE(micro);
        auto p = test::plan(1, pp, 1, 1, micro);
        p.schedule = schedule;
        if (schedule == Schedule::interleaved_1f1b) {
          if (micro % pp != 0 || 8 % (pp * 2) != 0) continue;  // Megatron-LM's interleaving needs both
          p.vpp = 2;
        }
        if (find_plan_problem(p, m, pp, 1024)) continue;
        const auto g = build_tasks(m, test::training(1024), p);
        REQUIRE(acyclic(g));
        int transfers = 0, held = 0;
        std::vector<int> waiting(g.tasks.size(), 0);  // compute tasks waiting on each transfer
        for (std::uint32_t u = 0; u < g.tasks.size(); ++u) {
          if (g.tasks[u].kind != TaskKind::compute) continue;
          for (auto d : g.dependencies(u)) {
            if (g.tasks[d].kind == TaskKind::collective && g.tasks[d].collective == Collective::send_recv) ++waiting[d];
          }
        }
        for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
          if (g.tasks[t].kind != TaskKind::collective || g.tasks[t].collective != Collective::send_recv) continue;
          ++transfers;
          held += waiting[t];
        }
        CHECK(transfers == 2 * (p.chunks() - 1) * micro);
        // Every transfer is needed by the receiver's chunk; a blocking one also holds the sender's next kernel.
        if (p.blocks_on_p2p()) CHECK(held > transfers);
        else CHECK(held == transfers);
      }
    }
  }
}

TEST_CASE("without the asynchronous TP all-reduce the input-gradient reduction follows the weight gradients and holds the next kernel") {
  // Megatron-LM's 2021 linear layers: autograd computes the input and weight gradients, then reaches
  // the all-reduce (the backward of the region's copy): nothing runs under it. Since late 2021 it
  // runs under the weight-gradient GEMMs. With SP the reduce-scatter is always issued that way.
  const auto m = test::small_gpt(4);
  auto p = test::plan(2, 2, 2, 1, 8);
  auto tr = test::training(1024);
  auto reductions_after_weights = [&](const TaskGraph& g) {
    int after = 0, total = 0;
    for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
      const auto& c = g.tasks[t];
      if (c.kind != TaskKind::collective || c.dim != CommDim::tp || c.phase != Phase::backward_input || c.collective == Collective::all_gather) continue;
      if (c.layer < 0) continue;
      ++total;
      for (auto d : g.dependencies(t)) after += g.tasks[d].kind == TaskKind::compute && g.tasks[d].phase == Phase::backward_weight;
    }
    return std::pair{after, total};
  };
  for (bool sp : {false, true}) {
    CAPTURE(sp);
    p.sp = sp;
    tr.async_tp_allreduce = true;
    const auto async = build_tasks(m, tr, p);
    tr.async_tp_allreduce = false;
    const auto sync = build_tasks(m, tr, p);
    CHECK(acyclic(sync));
    CHECK(count_by(sync) == count_by(async));
    CHECK(reductions_after_weights(async).first == 0);
    const auto [after, total] = reductions_after_weights(sync);
    CHECK(total > 0);
    CHECK(after == (sp ? 0 : total));
  }
}

TEST_CASE("FSDP backward prefetch: the next layer's gather queued behind this layer's reduce-scatter (none) or ahead of it (post, pre)") {
  // All of a stage's collectives share the data-parallel stream, so the order in which they are
  // issued is the order in which they run.
  const auto m = test::small_gpt(4);
  auto p = test::plan(1, 1, 8, 1, 8);  // one micro-batch
  p.zero = 3;
  for (auto prefetch : {Zero3Prefetch::none, Zero3Prefetch::post, Zero3Prefetch::pre}) {
    CAPTURE(zero3_prefetch_name(prefetch));
    auto tr = test::training(1024);
    tr.zero3_backward_prefetch = prefetch;
    const auto g = build_tasks(m, tr, p);
    CHECK(acyclic(g));
    auto backward_collective = [&](Collective c, int layer) {
      for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
        const auto& task = g.tasks[t];
        if (task.kind == TaskKind::collective && task.dim == CommDim::dp && task.collective == c && task.layer == layer && task.phase != Phase::forward) return t;
      }
      FAIL("no backward collective for layer " << layer);
      return std::uint32_t{0};
    };
    for (int l = 3; l >= 1; --l) {
      CAPTURE(l);
      const auto gather = backward_collective(Collective::all_gather, l - 1), reduce = backward_collective(Collective::reduce_scatter, l);
      CHECK((gather < reduce) == (prefetch != Zero3Prefetch::none));
      // What the gather waits for: the start of layer l's backward (pre), its weight gradients
      // (post), the start of layer l's backward and, through the stream, the reduce-scatter (none).
      bool after_gradients = false, after_start = false;
      for (auto d : g.dependencies(gather)) {
        const auto& dep = g.tasks[d];
        if (dep.kind != TaskKind::compute || dep.layer != l) continue;
        if (dep.phase == Phase::backward_weight) after_gradients = true;
        else after_start = true;
      }
      CHECK(after_gradients == (prefetch == Zero3Prefetch::post));
      CHECK(after_start == (prefetch != Zero3Prefetch::post));
    }
  }
}

TEST_CASE("DualPipe: each stage sums its two chunks' gradients with its mirror stage's copies, by hand") {
  // 8 layers over pp 4, dp 2, ZeRO 0: stage s holds chunks s and 3 - s (2 layers each) and, on both
  // ends, the embedding and the head. After the backward each stage all-reduces all of its gradients
  // (stage_parameters x gradient bytes) with the stage that holds the same two chunks, and nothing
  // else goes between pipeline stages (the tied embedding's copies are on one stage).
  const auto m = test::small_gpt(8);
  auto p = test::plan(1, 4, 2, 1, 16);
  p.schedule = Schedule::dualpipe;
  const auto tr = test::training(1024);
  const auto g = build_tasks(m, tr, p);
  CHECK(acyclic(g));
  int sums = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::collective || t.dim != CommDim::pp || t.collective != Collective::all_reduce) continue;
    ++sums;
    // Four layers; on the ends one tied embedding (the head uses it on the same stage), 2048 learned
    // positions and the final LayerNorm (2h).
    const double ends = static_cast<double>(padded_vocab(m, 1)) * m.hidden + 2048.0 * m.hidden + 2.0 * m.hidden;
    const double params = 4 * layer_parameters(m, p, 0).total() + (t.stage == 0 || t.stage == 3 ? ends : 0.0);
    CHECK(t.bytes == doctest::Approx(stage_parameters(m, p, t.stage) * tr.gradient_bytes()));
    CHECK(stage_parameters(m, p, t.stage) == doctest::Approx(params));
    const auto& ranks = g.groups[t.group];
    REQUIRE(ranks.size() == 2u);
    // Ranks are laid out tp, dp, pp: stage s starts at rank 2s.
    CHECK(std::set<int>(ranks.begin(), ranks.end()) == std::set<int>{2 * std::min(t.stage, 3 - t.stage), 2 * std::max(t.stage, 3 - t.stage)});
  }
  CHECK(sums == 4);
}
