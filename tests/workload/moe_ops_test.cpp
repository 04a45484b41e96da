#include <doctest/doctest.h>
#include <set>

#include "tests/workload/fixtures.hpp"
#include "workload/moe_ops.hpp"
#include "workload/task_graph.hpp"

using namespace parasim;
using namespace parasim::workload;

namespace {
const Op& find(const std::vector<Op>& ops, std::string_view name) {
  for (const auto& o : ops) {
    if (o.name == name) return o;
  }
  FAIL("no op " << name);
  return ops.front();
}
}  // namespace

TEST_CASE("dispatch bytes: tokens x top_k x hidden x bytes per element, (ep-1)/ep of it per direction") {
  // Mixtral-8x7B, b = 1, s = 4096, tp 2 with SP, ep 8: a rank routes 4096 / 2 = 2048 tokens, two
  // copies each: 2048 x 2 x 4096 x 2 bytes = 33,554,432 bytes; pairwise it keeps 1/8 and sends 7/8.
  const auto m = test::mixtral_8x7b();
  const BlockShape shape{1, 4096, 2, true, Recompute::none, 1, CpKind::ring, 8, 2};
  CHECK(routed_tokens(m, shape) == 4096.0);
  CHECK(dispatch_bytes(m, test::training(4096), shape) == 33'554'432.0);
  CHECK(dispatch_bytes(m, test::training(4096), shape) * 7 / 8 == 29'360'128.0);
  // The task graph carries that buffer on each dispatch and combine all-to-all over the EP group.
  auto small = m;
  small.layers = 2;
  auto p = test::plan(2, 1, 8, 1, 8);
  p.sp = true;
  p.ep = 8;
  const auto g = build_tasks(small, test::training(4096), p);
  int forward = 0, backward = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::collective || t.dim != CommDim::ep) continue;
    CHECK(t.collective == Collective::all_to_all);
    CHECK(t.bytes == 33'554'432.0);
    CHECK(g.groups[t.group].size() == 8u);
    (t.phase == Phase::forward ? forward : backward) += 1;
  }
  // Per MoE layer and micro-batch: dispatch and combine forward, their gradients backward.
  CHECK(forward == 2 * 2 * 1);
  CHECK(backward == 2 * 2 * 1);
}

TEST_CASE("expert GEMMs: local experts grouped, etp ranks gather their tokens") {
  // Mixtral-8x7B, b = 1, s = 4096, tp 2 (SP), ep 8, etp 2: one local expert; the two etp ranks
  // gather 2 x 2048 x 2 = 8192 token copies and split the expert's 14336 columns: 7168 each.
  const auto m = test::mixtral_8x7b();
  const auto tr = test::training(4096);
  const BlockShape shape{1, 4096, 2, true, Recompute::none, 1, CpKind::ring, 8, 2};
  const auto e = experts_block(m, tr, shape);
  const Op& fc1 = find(e.forward, "experts_fc1");
  CHECK(fc1.m == 8192);
  CHECK(fc1.n == 2 * 7168);
  CHECK(fc1.k == 4096);
  CHECK(fc1.batch == 1);
  CHECK(find(e.forward, "experts_fc2").k == 7168);
  // ep 2: four local experts of 8192 / 4 = 2048 copies each, one grouped GEMM of the same FLOPs.
  const BlockShape ep2{1, 4096, 2, true, Recompute::none, 1, CpKind::ring, 2, 2};
  const auto e2 = experts_block(m, tr, ep2);  // kept: find() returns a reference into it
  const Op& grouped = find(e2.forward, "experts_fc1");
  CHECK(grouped.m == 2048);
  CHECK(grouped.batch == 4);
  CHECK(grouped.flops == doctest::Approx(fc1.flops).scale(0));
  CHECK(fc1.flops == doctest::Approx(2.0 * 8192 * 2 * 7168 * 4096).scale(0));
  // Router: the rank's 2048 tokens x 8 experts x 4096.
  CHECK(find(router_block(m, tr, shape).forward, "router").flops == doctest::Approx(2.0 * 2048 * 8 * 4096).scale(0));
}

TEST_CASE("load imbalance: the busiest expert's share prices the expert GEMMs, capped by the capacity") {
  auto m = test::mixtral_8x7b();
  const auto tr = test::training(4096);
  const BlockShape shape{1, 4096, 1, false, Recompute::none, 1, CpKind::ring, 8, 1};
  const double balanced = find(experts_block(m, tr, shape).forward, "experts_fc1").flops;
  m.expert_load_imbalance = 1.3;
  CHECK(find(experts_block(m, tr, shape).forward, "experts_fc1").flops == doctest::Approx(1.3 * balanced).scale(0));
  // A capacity of 1.25 x the balanced share drops what exceeds it.
  m.capacity_factor = 1.25;
  CHECK(busiest_expert_factor(m) == 1.25);
  CHECK(find(experts_block(m, tr, shape).forward, "experts_fc1").flops == doctest::Approx(1.25 * balanced).scale(0));
  // Model FLOPs do not change: they count what each token asks for.
  auto balanced_model = m;
  balanced_model.expert_load_imbalance = 1;
  CHECK(training_flops_per_token(m, 4096) == training_flops_per_token(balanced_model, 4096));
}

TEST_CASE("MoE FLOPs per token: 6·N_active + 12·l·s·h within 2%, and the task graph counts them") {
  // Mixtral-8x7B at s = 4096: N_active in matrix multiplies 12,879,925,248 - 32000·4096 (the
  // embedding lookup) = 12,748,853,248; 6 N = 76.49 G; 12·32·4096·4096 = 6.44 G.
  const auto m = test::mixtral_8x7b();
  const double N = count_parameters(m).active_in_matmuls();
  CHECK(N == 12'748'853'248.0);
  const double formula = 6 * N + 12.0 * 32 * 4096 * 4096;
  CHECK(training_flops_per_token(m, 4096) == doctest::Approx(formula).epsilon(0.02).scale(0));
  // A small Mixtral on TP2 EP4 PP2: the tasks add up to the model FLOPs exactly.
  auto small = m;
  small.layers = 4;
  auto p = test::plan(2, 2, 4, 1, 8);
  p.sp = true;
  p.ep = 4;
  const auto g = build_tasks(small, test::training(4096), p);
  CHECK(g.total_flops() == doctest::Approx(training_flops_per_token(small, 4096, 2) * 8 * 4096).epsilon(1e-9));
}

TEST_CASE("a fine-grained MoE with shared experts and interleaved dense layers") {
  // Two dense layers first, then every second layer MoE: layers 2, 4 of 0..5.
  auto m = test::mixtral_8x7b();
  m.layers = 6;
  m.first_dense_layers = 2;
  m.moe_layer_frequency = 2;
  m.shared_experts = 2;
  m.shared_expert_ffn_hidden = 1024;
  CHECK(m.moe_layers() == 2);
  CHECK_FALSE(m.moe_layer(3));
  CHECK(m.moe_layer(4));
  auto p = test::plan(1, 1, 4, 1, 4);
  p.ep = 2;
  const auto g = build_tasks(m, test::training(1024), p);
  int routers = 0, mlps = 0, shared = 0;
  for (const auto& t : g.tasks) {
    if (t.kind != TaskKind::compute || t.phase != Phase::forward) continue;
    const auto kind = g.blocks[t.block].kind;
    routers += kind == BlockKind::router;
    mlps += kind == BlockKind::mlp;
    shared += kind == BlockKind::shared_experts;
  }
  // One micro-batch: 2 MoE layers with router and shared experts, 4 dense MLPs.
  CHECK(routers == 2);
  CHECK(shared == 2);
  CHECK(mlps == 4);
  CHECK(g.total_flops() == doctest::Approx(training_flops_per_token(m, 1024) * 4 * 1024).epsilon(1e-9));
  // Expert gradients go over the expert-data-parallel group: dp 4 / ep 2 = 2 ranks; dense ones over 4.
  std::set<std::size_t> sizes;
  for (const auto& t : g.tasks) {
    if (t.kind == TaskKind::collective && t.dim == CommDim::dp) sizes.insert(g.groups[t.group].size());
  }
  CHECK(sizes == std::set<std::size_t>{2, 4});
}
