// Multi-head latent attention, local (sliding-window and chunked) attention, q/k norms and
// multi-token prediction, each against a hand computation.
#include <doctest/doctest.h>

#include "calibrate/cost_model.hpp"
#include "tests/topology/fixtures.hpp"
#include "tests/workload/fixtures.hpp"
#include "workload/hf_config.hpp"
#include "workload/memory.hpp"
#include "workload/moe_ops.hpp"
#include "workload/task_graph.hpp"

using namespace parasim;
using namespace parasim::workload;

namespace {

using test::deepseek_v3;

double sum_flops(const std::vector<Op>& ops, std::string_view name) {
  double f = 0;
  for (const auto& op : ops) f += op.name == name ? op.flops : 0.0;
  return f;
}

}  // namespace

TEST_CASE("MLA parameters by hand: DeepSeek-V3's 187.1M a layer and 671B in all, MTP apart") {
  const auto m = deepseek_v3();
  // q_a 7168 x 1536, its norm, q_b 1536 x 128·192; kv_a 7168 x (512 + 64), its norm, kv_b 512 x
  // 128·(128 + 128); o 128·128 x 7168.
  const double attention = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;
  const auto p = count_parameters(m);
  CHECK(p.attention == attention);
  CHECK(attention == 187107328.0);
  // The report's 671B, 37B activated.
  CHECK(p.total() / 1e9 == doctest::Approx(671.0).epsilon(0.005));
  CHECK(p.active() / 1e9 == doctest::Approx(37.0).epsilon(0.02));
  // One MTP module: the two input norms, the 2h x h projection, a MoE layer like the last, the
  // shared head's norm; not in the total.
  CHECK(p.mtp == 3 * 7168.0 + 2.0 * 7168 * 7168 + p.attention + p.layer_norms + p.moe_mlp());
  // On a TP rank of the last stage (tp 1, ep 1): the same.
  auto plan = test::plan(1, 1, 1, 1, 1);
  CHECK(mtp_parameters(m, plan) == doctest::Approx(p.mtp));
}

TEST_CASE("MLA FLOPs by hand: the latent projections, and a core of d_qk = 192 against d_v = 128") {
  const auto m = deepseek_v3();
  const auto tr = test::training(4096);
  const BlockShape shape{1, 4096, 1, false, Recompute::none};
  const auto b = attention_block(m, tr, shape);
  const double T = 4096, h = 7168, n = 128;
  CHECK(sum_flops(b.forward, "q_down") == 2 * T * h * 1536);
  CHECK(sum_flops(b.forward, "q_up") == 2 * T * 1536 * n * 192);
  CHECK(sum_flops(b.forward, "kv_down") == 2 * T * h * 576);
  CHECK(sum_flops(b.forward, "kv_up") == 2 * T * 512 * n * 256);
  CHECK(sum_flops(b.forward, "proj") == 2 * T * n * 128 * h);
  // QK^T over 192 and AV over 128: 2·s²·n·(192 + 128) forward (the square, as 4·s²·n·d for MHA).
  CHECK(sum_flops(b.forward, "attention") == 2 * T * T * n * (192 + 128));
  CHECK(sum_flops(b.backward_input, "attention_grad") == 4 * T * T * n * (192 + 128));
  // Training FLOPs per token: 6 x the weights a token meets + 6·s·n·(192 + 128) a layer (and the MTP
  // module's layer, projection and head).
  const double per_token = training_flops_per_token(m, 4096, 1);
  double weights = 0;
  for (int l = 0; l < m.layers; ++l) weights += layer_active_matmul_weights(m, l);
  const double head = h * padded_vocab(m, 1);
  const double mtp = 2 * h * h + layer_active_matmul_weights(m, 60) + head;
  CHECK(per_token == doctest::Approx(6 * (weights + head + mtp) + 62 * 6.0 * 4096 * n * 320).epsilon(1e-12));
}

TEST_CASE("sliding windows by hand: FLOPs at the window, time a band of it, global layers as they were") {
  // Mistral 7B at 32K tokens with its 4096-token window on every layer.
  auto m = test::llama3_8b();
  m.vocab = 32000;
  const int s = 32768, w = 4096;
  const double full = training_flops_per_token(m, s, 1);
  m.sliding_window = w;
  // Attention: 6·s_eff·heads·(d + d) a layer, s_eff = 4096 for 32768.
  CHECK(full - training_flops_per_token(m, s, 1) == doctest::Approx(32 * 6.0 * (s - w) * 32 * 256).epsilon(1e-12));
  const auto tr = test::training(s);
  BlockShape shape{1, s, 1, false, Recompute::none};
  const auto global = attention_block(m, tr, shape);
  shape.local = true;
  const auto local = attention_block(m, tr, shape);
  CHECK(sum_flops(local.forward, "attention") * 8 == sum_flops(global.forward, "attention"));
  // Time: the band computes s·w − w²/2 of the s·w counted, 2(1 − w/2s) of causal's half, with
  // kFlashBlock-wide edges at the window, and the kernel's fill at 4096 keys.
  const calibrate::CostModel cost(test::h100(), calibrate::default_profile("H100"));
  const auto core = [](const Block& b) {
    for (const auto& op : b.forward) {
      if (op.kind == OpKind::attention) return op;
    }
    return Op{};
  };
  const Op g = core(global), l = core(local);
  CHECK(l.window == w);
  const double launch = cost.profile().kernel_launch.value();
  const double diag = (1 + calibrate::kFlashBlock / w) / (1 + calibrate::kFlashBlock / s);
  const double band = 2 * (1 - double(w) / (2 * s));
  const double fill = (double(w) / (w + 240)) / (double(s) / (s + 240));
  const double exp_dim = cost.profile().attention_exp_head_dim;
  // The efficiency's fill term sits inside the head-dim law: 1/eff = 1/rest + E/d.
  const double quoted = cost.profile().attention_forward_efficiency;
  const double rest = 1 / (1 / quoted - exp_dim / calibrate::kAttentionReferenceHeadDim);
  const auto eff = [&](double f) { return 1 / (1 / (rest * f) + exp_dim / 128); };
  const double ratio = (cost.op_time(l).value() - launch) / (cost.op_time(g).value() - launch);
  const double seq_fill_s = (double(s) / (s + 240)) / (16384.0 / (16384 + 240));
  CHECK(ratio == doctest::Approx((1.0 / 8) * band * diag * eff(seq_fill_s) / eff(seq_fill_s * fill)).epsilon(1e-9));
  // Gemma-2's pattern: every second layer global.
  m.global_every = 2;
  CHECK(m.local_attention_layer(0));
  CHECK_FALSE(m.local_attention_layer(1));
  CHECK(m.attended_keys(0, s) == w);
  CHECK(m.attended_keys(1, s) == s);
}

TEST_CASE("chunked attention by hand: a causal square per chunk") {
  // Llama-4's 8192-token chunks at 32K tokens: a query meets the keys of its chunk, c/2 on average,
  // the causal half of an s = c square: no band correction.
  auto m = test::llama3_8b();
  m.attention_chunk = 8192;
  const auto tr = test::training(32768);
  BlockShape shape{1, 32768, 1, false, Recompute::none};
  shape.local = true;
  const auto b = attention_block(m, tr, shape);
  for (const auto& op : b.forward) {
    if (op.kind != OpKind::attention) continue;
    CHECK(op.window == 8192);
    CHECK(op.chunked);
    CHECK(op.flops == 4.0 * 32768 * 8192 * 32 * 128);
  }
}

TEST_CASE("q/k norms: 2·head_dim weights a layer and a pass over the queries and keys") {
  auto m = test::llama3_8b();
  const double before = count_parameters(m).attention;
  m.qk_norm = true;
  CHECK(count_parameters(m).attention - before == 2 * 128);
  const auto b = attention_block(m, test::training(4096), BlockShape{1, 4096, 1, false, Recompute::none});
  double bytes = 0;
  for (const auto& op : b.forward) bytes += op.name == "qk_norm" ? op.bytes : 0.0;
  CHECK(bytes == 2.0 * 2 * 4096 * (4096 + 1024));
}

TEST_CASE("multi-token prediction runs on the last stage: one more layer and head a micro-batch") {
  auto m = test::small_gpt(4);
  auto p = test::plan(1, 2, 1, 1, 2);
  const auto tr = test::training(1024);
  const auto without = build_tasks(m, tr, p);
  m.mtp_layers = 1;
  const auto with = build_tasks(m, tr, p);
  const BlockShape shape{1, 1024, 1, false, Recompute::none};
  // Per micro-batch (2 of them): the entry projection, a layer, the head; forward and backward.
  const auto pass = [](const Block& b) { return total_flops(b.forward) + total_flops(b.backward_input) + total_flops(b.backward_weight); };
  const double extra = 2 * (pass(mtp_projection_block(m, tr, shape)) + pass(attention_block(m, tr, shape)) + pass(mlp_block(m, tr, shape)) +
                            pass(head_block(m, tr, shape)));
  CHECK(with.total_flops() - without.total_flops() == doctest::Approx(extra).epsilon(1e-12));
  // All of it on the last stage.
  double first_stage_with = 0, first_stage_without = 0;
  for (const auto& t : with.tasks) first_stage_with += t.kind == TaskKind::compute && t.stage == 0 ? total_flops(with.ops(t)) : 0.0;
  for (const auto& t : without.tasks) first_stage_without += t.kind == TaskKind::compute && t.stage == 0 ? total_flops(without.ops(t)) : 0.0;
  CHECK(first_stage_with == first_stage_without);
  // Its parameters and activations too.
  const auto mem = memory_per_stage(m, tr, p, Bytes(80e9));
  m.mtp_layers = 0;
  const auto mem0 = memory_per_stage(m, tr, p, Bytes(80e9));
  CHECK(mem.stages[0].parameters == mem0.stages[0].parameters);
  CHECK(mem.stages[1].parameters > mem0.stages[1].parameters);
  CHECK(mem.stages[1].activations.value() > mem0.stages[1].activations.value());
}

TEST_CASE("Mistral 7B's config at 32K tokens: attention FLOPs at its 4096-token window") {
  const auto m = import_hf_config("tests/data/hf/mistral-7b/config.json");
  REQUIRE(m.sliding_window == 4096);
  // 6N (the weights a token meets, and the head) + 6·s_eff·heads·(d + d) on each of 32 layers,
  // s_eff = 4096 of the 32768 keys: about half the 12·l·s·h the full square would count.
  double weights = 0;
  for (int l = 0; l < m.layers; ++l) weights += layer_active_matmul_weights(m, l);
  const double n = weights + double(m.hidden) * padded_vocab(m, 1);
  CHECK(training_flops_per_token(m, 32768, 1) == doctest::Approx(6 * n + 32 * 6.0 * 4096 * 32 * 256).epsilon(1e-12));
  CHECK(training_flops_per_token(m, 32768, 1) < 0.55 * (6 * n + 12.0 * 32 * 32768 * 4096));
}

TEST_CASE("MLA stored activations by hand: the latents, the rotary key, Q, K and V of 192/192/128") {
  const auto m = deepseek_v3();
  const BlockShape shape{1, 4096, 1, false, Recompute::none};
  const auto b = attention_block(m, test::training(4096), shape);
  const double T = 4096, h = 7168, n = 128, e = 2;
  // Norm input and the down projections' input (h each); the two latents' norm and up-projection
  // inputs ((1536 + 512) twice); the shared rotary key (64); Q and K of 192 and V of 128 a head; the
  // output projection's input (128 a head); fp32 softmax statistics per head.
  const double kept = T * h * e + T * h * e + T * (1536 + 512) * 2 * e + T * 64 * e + T * e * n * (192 + 192 + 128) + T * e * n * 128;
  CHECK(b.full_activation_bytes == doctest::Approx(kept + 4.0 * n * T).epsilon(1e-12));
}
