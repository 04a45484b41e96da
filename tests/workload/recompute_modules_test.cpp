// Selective recompute by Megatron-Core's modules (workload/recompute_modules.hpp): what each keeps
// and reruns, checked by hand on DeepSeek-V3, Llama 3 8B and Mixtral shapes (bf16, one GPU's
// micro-batch of 4096 tokens, no dropout).
#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>
#include <string>

#include "tests/workload/fixtures.hpp"
#include "workload/memory.hpp"
#include "workload/moe_ops.hpp"
#include "workload/task_graph.hpp"

using namespace parasim;
using namespace parasim::workload;

namespace {

using M = RecomputeModule;

BlockShape selective(std::initializer_list<RecomputeModule> modules, int tp = 1) {
  BlockShape shape{1, 4096, tp, tp > 1, Recompute::selective};
  shape.modules = RecomputeModules::of(modules);
  return shape;
}

std::string names(const std::vector<Op>& ops) {
  std::string out;
  for (const auto& op : ops) out += fmt::format("{}{}", out.empty() ? "" : " ", op.name);
  return out;
}

constexpr double T = 4096, e = 2;

}  // namespace

TEST_CASE("mla_up_proj frees Q, K, V and the up projections' inputs, and reruns the up projections and RoPE") {
  const auto m = test::deepseek_v3();
  const auto tr = test::training(4096);
  const auto kept = attention_block(m, tr, selective({})).stored_activation_bytes;
  const auto b = attention_block(m, tr, selective({M::mla_up_proj}));
  // Q and K of 192 and V of 128 for each of 128 heads; the two latents (1536 + 512) as the up
  // projections' inputs.
  const double freed = T * e * 128 * (192 + 192 + 128) + T * (1536 + 512) * e;
  CHECK(kept - b.stored_activation_bytes == doctest::Approx(freed).epsilon(1e-12));
  CHECK(names(b.recompute) == "q_norm q_up kv_norm kv_up rope");
  // q_up: 1536 -> 128 x 192; kv_up: 512 -> 128 x (128 + 128).
  CHECK(total_flops(b.recompute) == doctest::Approx(2 * T * (1536.0 * 128 * 192 + 512.0 * 128 * 256)).epsilon(1e-12));
}

TEST_CASE("without core_attn the attention core keeps what it saves; with it, its statistics are rerun") {
  const auto m = test::deepseek_v3();
  const auto tr = test::training(4096);
  const auto none = attention_block(m, tr, BlockShape{1, 4096, 1, false, Recompute::none});
  CHECK(attention_block(m, tr, selective({})).stored_activation_bytes == none.full_activation_bytes);
  CHECK(attention_block(m, tr, selective({})).recompute.empty());
  // FlashAttention's fp32 softmax statistics, one a head and query.
  const auto core = attention_block(m, tr, selective({M::core_attn}));
  CHECK(none.full_activation_bytes - core.stored_activation_bytes == doctest::Approx(4.0 * 128 * T));
  CHECK(names(core.recompute) == "attention");
  // layernorm: MLA's input norm stands alone; its output (the down projections' input) is freed.
  const auto norm = attention_block(m, tr, selective({M::layernorm}));
  CHECK(none.full_activation_bytes - norm.stored_activation_bytes == T * 7168 * e);
  CHECK(names(norm.recompute) == "norm1");
  // A norm fused into its QKV projection (every other attention) is no module of its own.
  const auto llama = test::llama3_8b();
  CHECK(attention_block(llama, tr, selective({M::layernorm})).recompute.empty());
}

TEST_CASE("the mlp module keeps the MLP's input alone and reruns all of it, its TP collectives included") {
  const auto m = test::llama3_8b();
  const auto tr = test::training(4096);
  const auto b = mlp_block(m, tr, selective({M::mlp}));
  CHECK(b.stored_activation_bytes == T * 4096 * e);
  CHECK(names(b.recompute) == "norm2 fc1 swiglu fc2");
  CHECK(total_flops(b.recompute) == total_flops(b.forward));
  // Under TP with SP the rerun gathers the input and reduce-scatters the output again: two TP
  // collectives a layer and micro-batch in the recompute phase, none with the default modules.
  auto small = m;
  small.layers = 2;
  auto p = test::plan(2, 1, 1, 1, 2);
  p.sp = true;
  p.recompute = Recompute::selective;
  auto recompute_tp = [&](const Plan& plan) {
    const auto g = build_tasks(small, tr, plan);
    return std::count_if(g.tasks.begin(), g.tasks.end(), [](const Task& t) { return t.phase == Phase::recompute && t.dim == CommDim::tp && t.kind == TaskKind::collective; });
  };
  CHECK(recompute_tp(p) == 0);
  p.recompute_modules = RecomputeModules::of({M::mlp});
  CHECK(recompute_tp(p) == 2 * 2 * 2);
}

TEST_CASE("moe_act frees the experts' activation output; moe keeps the MoE part's input and reruns it, all-to-alls included") {
  const auto m = test::deepseek_v3();
  const auto tr = test::training(4096);
  const auto none = BlockShape{1, 4096, 1, false, Recompute::none};
  // 4096 tokens x top 8 routed copies on one GPU holding every expert; the activation's output is
  // fc2's input, 2048 wide.
  const auto act = experts_block(m, tr, selective({M::moe_act}));
  CHECK(experts_block(m, tr, none).stored_activation_bytes - act.stored_activation_bytes == T * 8 * 2048 * e);
  CHECK(names(act.recompute) == "experts_swiglu");
  const auto router = router_block(m, tr, selective({M::moe}));
  CHECK(router.stored_activation_bytes == 2 * e * T * 7168);  // the norm's input and output: the MoE part's input
  CHECK(names(router.recompute) == "router routing permute");
  const auto experts = experts_block(m, tr, selective({M::moe}));
  CHECK(experts.stored_activation_bytes == 0);
  CHECK(names(experts.recompute) == "experts_fc1 experts_swiglu experts_fc2 unpermute");
  CHECK(shared_experts_block(m, tr, selective({M::moe})).stored_activation_bytes == 0);
  CHECK(shared_experts_block(m, tr, selective({M::shared_experts})).stored_activation_bytes == 0);
  CHECK(router_block(m, tr, selective({M::layernorm})).stored_activation_bytes == router_block(m, tr, none).stored_activation_bytes - e * T * 7168);

  // The task graph reruns the dispatch and the combine of each MoE layer.
  auto small = test::mixtral_8x7b();
  small.layers = 2;
  auto p = test::plan(1, 1, 8, 1, 8);
  p.ep = 8;
  p.recompute = Recompute::selective;
  auto recompute_a2a = [&](const Plan& plan) {
    const auto g = build_tasks(small, tr, plan);
    return std::count_if(g.tasks.begin(), g.tasks.end(), [](const Task& t) { return t.phase == Phase::recompute && t.dim == CommDim::ep; });
  };
  CHECK(recompute_a2a(p) == 0);
  p.recompute_modules = RecomputeModules::of({M::moe_act});
  CHECK(recompute_a2a(p) == 0);
  p.recompute_modules = RecomputeModules::of({M::moe});
  CHECK(recompute_a2a(p) == 2 * 2);
}

TEST_CASE("torchtitan's op-level policy reruns its MLP part too, and takes no modules") {
  auto tr = test::training(4096);
  tr.selective_recompute = SelectiveRecompute::ops;
  auto m = test::llama3_8b();
  CHECK(mlp_block(m, tr, selective({M::mlp})) == mlp_block(m, tr, BlockShape{1, 4096, 1, false, Recompute::selective}));
  m.layers = 2;
  auto p = test::plan(1, 1, 1, 1, 1);
  p.recompute = Recompute::selective;
  const auto g = build_tasks(m, tr, p);
  // Per layer: the attention part (norm, k, RoPE, the output projection) and the MLP part (norm, w3, SwiGLU).
  CHECK(std::count_if(g.tasks.begin(), g.tasks.end(), [](const Task& t) { return t.phase == Phase::recompute; }) == 2 * 2);
}

TEST_CASE("a layer's selective recompute makes again what it did not keep: the stage's working set") {
  const auto m = test::llama3_8b();
  const auto tr = test::training(4096);
  // Two stages: the first holds no loss, whose logits would be the larger working set.
  auto p = test::plan(1, 2, 1, 1, 2);
  p.recompute = Recompute::selective;
  p.recompute_modules = RecomputeModules::of({M::mlp});
  const auto report = memory_per_stage(m, tr, p, Bytes(80.0 * (1LL << 30)));
  const auto none = mlp_block(m, tr, BlockShape{1, 4096, 1, false, Recompute::none});
  const auto kept = mlp_block(m, tr, selective({M::mlp}));
  // ...beside the gradients of its backward (workload/memory.hpp's LayerActivations).
  const double gradients = layer_activations(m, tr, BlockShape{1, 4096, 1, false, Recompute::none}, 0).backward_transient;
  CHECK(report.stages.front().backward_transient.value() == doctest::Approx(gradients));
  CHECK(report.stages.front().recompute_working.value() == doctest::Approx(none.full_activation_bytes - kept.stored_activation_bytes + gradients));
}

TEST_CASE("the ladder a search climbs: cheap outputs, then whole MLPs, then the MoE part") {
  auto joined = [](const std::vector<RecomputeModules>& ladder) {
    std::string out;
    for (const auto& m : ladder) out += (out.empty() ? "" : " | ") + m.joined();
    return out;
  };
  CHECK(joined(recompute_module_ladder(test::deepseek_v3())) ==
        "moe_act,layernorm | moe_act,layernorm,mla_up_proj | mlp,moe_act,shared_experts,layernorm,mla_up_proj | "
        "mlp,moe,moe_act,shared_experts,layernorm,mla_up_proj");
  CHECK(joined(recompute_module_ladder(test::llama3_8b())) == "mlp");
  CHECK(joined(recompute_module_ladder(test::mixtral_8x7b())) == "moe_act,layernorm | moe,moe_act,layernorm");
  CHECK(RecomputeModules().is_default());
  CHECK(RecomputeModules().joined() == "core_attn");
  CHECK(recompute_module_from_name("mla_up_proj") == M::mla_up_proj);
  CHECK_FALSE(recompute_module_from_name("attention"));
  CHECK(recompute_modules_problem(RecomputeModules::of({M::mla_up_proj}), test::llama3_8b()));
  CHECK_FALSE(recompute_modules_problem(RecomputeModules::of({M::mla_up_proj}), test::deepseek_v3()));
}
