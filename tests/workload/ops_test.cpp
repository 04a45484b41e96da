#include <doctest/doctest.h>

#include <algorithm>

#include "tests/workload/fixtures.hpp"
#include "workload/ops.hpp"

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

TEST_CASE("GEMM shapes of a GPT layer under tensor parallelism") {
  // GPT-3 175B, b = 1, s = 2048, t = 8: T = 2048 tokens, h = 12288.
  const auto m = test::gpt175b();
  const auto a = attention_block(m, test::training(2048), {1, 2048, 8, false, Recompute::none});
  const Op& qkv = find(a.forward, "qkv");
  CHECK(qkv.m == 2048);
  CHECK(qkv.k == 12288);
  CHECK(qkv.n == 3 * 12288 / 8);
  CHECK(qkv.flops == doctest::Approx(2.0 * 2048 * 12288 * 3 * 12288 / 8).scale(0));
  const Op& proj = find(a.forward, "proj");
  CHECK(proj.k == 12288 / 8);
  CHECK(proj.n == 12288);
  // Backward: dgrad and wgrad each cost what the forward GEMM costs.
  CHECK(find(a.backward_input, "qkv_dgrad").flops == doctest::Approx(qkv.flops).scale(0));
  CHECK(find(a.backward_weight, "qkv_wgrad").flops == doctest::Approx(qkv.flops).scale(0));
  CHECK(find(a.backward_weight, "qkv_wgrad").k == 2048);
  // Attention core: QK^T and AV, 4·b·s²·h/t forward, twice that backward.
  CHECK(find(a.forward, "attention").flops == doctest::Approx(4.0 * 2048 * 2048 * 12288 / 8).scale(0));
  CHECK(find(a.backward_input, "attention_grad").flops == doctest::Approx(8.0 * 2048 * 2048 * 12288 / 8).scale(0));
  CHECK(find(a.forward, "attention").heads == 12);
  const auto mlp = mlp_block(m, test::training(2048), {1, 2048, 8, false, Recompute::none});
  CHECK(find(mlp.forward, "fc1").n == 4 * 12288 / 8);
  CHECK(find(mlp.forward, "fc2").k == 4 * 12288 / 8);
}

TEST_CASE("a layer's forward FLOPs are 24·b·s·h² + 4·b·s²·h, split over TP ranks") {
  const auto m = test::gpt175b();
  const double b = 2, s = 2048, h = 12288, t = 4;
  const BlockShape shape{2, 2048, 4, false, Recompute::none};
  const auto tr = test::training(2048);
  const double fwd = total_flops(attention_block(m, tr, shape).forward) + total_flops(mlp_block(m, tr, shape).forward);
  CHECK(fwd == doctest::Approx((24 * b * s * h * h + 4 * b * s * s * h) / t).scale(0));
  // Eager attention does the same products as batched GEMMs.
  const double eager = total_flops(attention_block(m, test::training(2048, AttentionKernel::eager), shape).forward) +
                       total_flops(mlp_block(m, tr, shape).forward);
  CHECK(eager == doctest::Approx(fwd).scale(0));
}

TEST_CASE("SwiGLU and GQA shapes (Llama-3-8B)") {
  const auto m = test::llama3_8b();
  const BlockShape shape{1, 8192, 2, false, Recompute::none};
  const auto tr = test::training(8192);
  const auto a = attention_block(m, tr, shape);
  // QKV width per GPU: (32 + 2 x 8) heads x 128 / 2 = 3072.
  CHECK(find(a.forward, "qkv").n == 3072);
  CHECK(find(a.forward, "attention").kv_heads == 4);
  const auto mlp = mlp_block(m, tr, shape);
  // fc1 produces gate and up: 2 x 14336 / 2.
  CHECK(find(mlp.forward, "fc1").n == 14336);
  CHECK(find(mlp.forward, "fc2").k == 7168);
}

TEST_CASE("FLOPs per token: Megatron's GPT formula and 6N + 12·l·s·h") {
  // 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h)) per iteration of B samples is 3x the forward FLOPs.
  const auto m = test::gpt175b();
  const double per_token = training_flops_per_token(m, 2048, 8);
  CHECK(per_token * 2048 == doctest::Approx(megatron_flops(m, 1, 2048, 51200, false)).epsilon(1e-9));
  // Llama-3-8B: N counts the parameters in matrix multiplies (everything but the input embedding).
  const auto l = test::llama3_8b();
  const double N = count_parameters(l).in_matmuls();
  const double formula = 6 * N + 12.0 * 32 * 8192 * 4096;
  CHECK(training_flops_per_token(l, 8192, 1) == doctest::Approx(formula).epsilon(0.02).scale(0));
}

TEST_CASE("memory-bound ops move the bytes they touch") {
  // GELU on b·s·f/t elements: read and write, 2 bytes each: 2 x 2 x 1 x 2048 x 49152 / 8.
  const auto mlp = mlp_block(test::gpt175b(), test::training(2048), {1, 2048, 8, false, Recompute::none});
  CHECK(find(mlp.forward, "gelu").bytes == doctest::Approx(2.0 * 2 * 2048 * 49152 / 8).scale(0));
  // Norm without SP works on the full s·b·h on every TP rank; with SP on 1/t of it.
  const auto a = attention_block(test::gpt175b(), test::training(2048), {1, 2048, 8, false, Recompute::none});
  const auto a_sp = attention_block(test::gpt175b(), test::training(2048), {1, 2048, 8, true, Recompute::none});
  CHECK(find(a.forward, "norm1").bytes == doctest::Approx(2.0 * 2 * 2048 * 12288).scale(0));
  CHECK(find(a_sp.forward, "norm1").bytes == doctest::Approx(2.0 * 2 * 2048 * 12288 / 8).scale(0));
  // Adam: 2 x 12 (state read and written) + 4 (fp32 gradient) + 2 (bf16 weight) = 30 bytes/param.
  CHECK(total_bytes(optimizer_block(1e9, test::training(2048)).forward) == doctest::Approx(30e9).scale(0));
}

TEST_CASE("context parallelism: each rank does 1/cp of the attention and its tokens' GEMMs") {
  // Llama-3-8B, s = 8192, b = 1, t = 2, cp = 4: a rank holds 2048 tokens.
  const auto m = test::llama3_8b();
  const auto tr = test::training(8192);
  BlockShape ring{1, 8192, 2, false, Recompute::none, 4, CpKind::ring};
  const auto a = attention_block(m, tr, ring);
  CHECK(find(a.forward, "qkv").m == 2048);
  // Ring: 2048 queries against all 8192 keys, 16 heads per TP rank, causal (the cost model halves
  // it): 4·b·(s/cp)·s·(a/t)·hd = 4 x 2048 x 8192 x 16 x 128 = 1/4 of the rank's share without CP.
  const Op& core = find(a.forward, "attention");
  CHECK(core.seq_q == 2048);
  CHECK(core.seq_kv == 8192);
  CHECK(core.heads == 16);
  CHECK(core.causal);
  CHECK(core.flops == doctest::Approx(4.0 * 2048 * 8192 * 16 * 128).scale(0));
  const auto plain = attention_block(m, tr, {1, 8192, 2, false, Recompute::none});
  CHECK(core.flops * 4 == doctest::Approx(find(plain.forward, "attention").flops).scale(0));
  // Ulysses: the whole sequence for 16 / 4 = 4 heads (and 4 / 4 = 1 key/value head).
  BlockShape ulysses = ring;
  ulysses.cp_kind = CpKind::ulysses;
  const auto ulysses_block = attention_block(m, tr, ulysses);  // kept: find() returns a reference into it
  const Op& u = find(ulysses_block.forward, "attention");
  CHECK(u.seq_q == 8192);
  CHECK(u.seq_kv == 8192);
  CHECK(u.heads == 4);
  CHECK(u.kv_heads == 1);
  CHECK(u.flops == doctest::Approx(core.flops).scale(0));
  // The MLP's GEMMs see the rank's 2048 tokens: fc1 2 x 2048 x 4096 x 14336 / 2 x 2.
  CHECK(find(mlp_block(m, tr, ring).forward, "fc1").flops == doctest::Approx(2.0 * 2048 * 4096 * 14336).scale(0));
}

TEST_CASE("encoders: bidirectional attention and BERT's masked-LM head") {
  // BERT-Large shapes: h 1024, 16 heads, s 512, b 1, t 1.
  ModelSpec m = test::small_gpt(24);
  m.heads = m.kv_heads = 16;
  m.causal = false;
  m.post_norm = true;
  m.mlm_head = true;
  m.token_types = 2;
  const auto tr = test::training(512);
  const BlockShape shape{1, 512, 1, false, Recompute::none};
  // The core attends both ways: the cost model prices all of s², not the causal half.
  CHECK_FALSE(find(attention_block(m, tr, shape).forward, "attention").causal);
  // Head: the 512 x 1024 x 1024 transform, forward, input and weight gradients; no final norm.
  const auto head = head_block(m, tr, shape);
  CHECK(find(head.forward, "mlm_transform").flops == doctest::Approx(2.0 * 512 * 1024 * 1024).scale(0));
  CHECK(find(head.backward_weight, "mlm_transform_wgrad").flops == doctest::Approx(2.0 * 512 * 1024 * 1024).scale(0));
  for (const auto& op : head.forward) CHECK(op.name != "final_norm");
  // Embedding: segment embeddings added and post-LN's norm, whose input (2 bytes x 512 x 1024) is kept
  // with the dropout mask (1 byte each).
  const auto emb = embedding_block(m, tr, shape);
  CHECK(find(emb.forward, "embedding_norm").bytes == doctest::Approx(2.0 * 2 * 512 * 1024).scale(0));
  CHECK(emb.stored_activation_bytes == doctest::Approx(512.0 * 1024 * (1 + 2)).scale(0));
  // Per token: 6 x the transform's h² on top of the decoder's.
  CHECK(training_flops_per_token(m, 512) - training_flops_per_token(test::small_gpt(24), 512) == doctest::Approx(6.0 * 1024 * 1024).scale(0));
}

TEST_CASE("eager attention: each pass over the s² scores moves its own bytes") {
  auto model = test::gpt175b();
  model.dropout = 0.1;
  auto tr = test::training(2048);
  tr.attention = AttentionKernel::eager;
  const auto a = attention_block(model, tr, {1, 2048, 8, false, Recompute::none});
  // 96 heads / 8 TP ranks x 2048² scores of 2 bytes. Softmax reads the scores, writes the
  // probabilities: 2 x 2; dropout reads them, writes its output and a byte mask: 2 x 2 + 1.
  const double scores = 12.0 * 2048 * 2048;
  CHECK(find(a.forward, "softmax").bytes == doctest::Approx(scores * 4).scale(0));
  CHECK(find(a.forward, "attention_dropout").bytes == doctest::Approx(scores * 5).scale(0));
  // Backward: dropout's gradient reads dP and the mask, writes 2 + 1 + 2; the softmax gradient reads
  // that and the probabilities and writes dS: 3 x 2.
  CHECK(find(a.backward_input, "attention_dropout_grad").bytes == doctest::Approx(scores * 5).scale(0));
  CHECK(find(a.backward_input, "softmax_grad").bytes == doctest::Approx(scores * 6).scale(0));
  // Without dropout there is no dropout kernel.
  model.dropout = 0;
  const auto plain = attention_block(model, tr, {1, 2048, 8, false, Recompute::none});
  for (const auto& op : plain.forward) CHECK(op.name != "attention_dropout");
}

TEST_CASE("BigScience's 2021-22 fused softmax ran where b x np causal score matrices filled blocks sized by the heads") {
  // The kernel's block: 2 x 128 / min(p, 32) matrices, p = np rounded up to a power of two, 8 from 32
  // heads on a rank up to 128, then 4; and b x np a multiple of 4.
  const auto fused = [](double b, double np) { return eager_softmax_fused(EagerSoftmax::fused_by_head_count, b, np, true); };
  CHECK_FALSE(fused(1, 8));  // blocks of 32: 8 matrices
  CHECK_FALSE(fused(2, 8));  // 16
  CHECK(fused(4, 8));        // 32: BLOOM's 64 heads at tp 8 ran fused only from micro-batch 4
  CHECK_FALSE(fused(6, 8));  // 48
  CHECK(fused(8, 8));
  CHECK_FALSE(fused(4, 14));  // 112 heads at tp 8: blocks of 16, 56 matrices
  CHECK(fused(4, 16));        // 128 heads at tp 8: 64
  CHECK_FALSE(fused(2, 12));  // 96 heads at tp 8: 24 of 16
  CHECK(fused(4, 12));        // 48
  CHECK_FALSE(fused(2, 26));  // 104 heads at tp 4: blocks of 8, 52 matrices
  CHECK(fused(2, 28));        // BLOOM's final 112 heads at tp 4, micro-batch 2: 56
  CHECK_FALSE(fused(4, 2));   // blocks of 128
  CHECK(fused(1, 256));       // blocks of 4
  // Without a causal mask its condition was on the queries, which every block divides; the other
  // rules do not look at the shape.
  CHECK(eager_softmax_fused(EagerSoftmax::fused_by_head_count, 2, 8, false));
  CHECK(eager_softmax_fused(EagerSoftmax::fused, 2, 8, true));
  CHECK_FALSE(eager_softmax_fused(EagerSoftmax::unfused, 4, 16, true));
}

namespace {
// GPT-3 175B's eager attention with dropout at tp 8 over one 2048-token sequence.
Block eager_gpt3_attention(EagerSoftmax softmax) {
  auto model = test::gpt175b();
  model.dropout = 0.1;
  auto tr = test::training(2048);
  tr.attention = AttentionKernel::eager;
  tr.eager_softmax = softmax;
  return attention_block(model, tr, {1, 2048, 8, false, Recompute::none});
}
}  // namespace

TEST_CASE("eager attention's unfused softmax: five fp32 passes each way over the scores, fp32 probabilities kept") {
  const auto a = eager_gpt3_attention(EagerSoftmax::unfused);
  const double scores = 12.0 * 2048 * 2048;
  // Forward: to fp32 (reads 2, writes 4), scale (4 + 4), mask in place (4 + 4), softmax (4 + 4), back
  // to bf16 (4 + 2): 36 bytes a score against the fused kernel's 4.
  CHECK(find(a.forward, "softmax_to_fp32").bytes == doctest::Approx(scores * 6).scale(0));
  CHECK(find(a.forward, "softmax_scale").bytes == doctest::Approx(scores * 8).scale(0));
  CHECK(find(a.forward, "softmax_mask").bytes == doctest::Approx(scores * 8).scale(0));
  CHECK(find(a.forward, "softmax").bytes == doctest::Approx(scores * 8).scale(0));
  CHECK(find(a.forward, "softmax_from_fp32").bytes == doctest::Approx(scores * 6).scale(0));
  // Backward: the gradient to fp32 (2 + 4), the softmax's gradient reading it and the fp32
  // probabilities (4 + 4 + 4), mask (4 + 4), scale (4 + 4), back to bf16 (4 + 2): 40 against 6.
  double backward = 0;
  for (const auto& op : a.backward_input) {
    if (op.name.starts_with("softmax")) backward += op.bytes;
  }
  CHECK(backward == doctest::Approx(scores * 40).scale(0));
  CHECK(find(a.backward_input, "softmax_grad").bytes == doctest::Approx(scores * 12).scale(0));
  // Kept for backward: the fp32 probabilities (4), the dropout mask (1) and the dropped bf16
  // probabilities (2) the context GEMM reads: 7 bytes a score where the fused kernel keeps 5.
  const auto f = eager_gpt3_attention(EagerSoftmax::fused);
  CHECK(a.full_activation_bytes - f.full_activation_bytes == doctest::Approx(scores * 2).scale(0));
  // In backward two fp32 gradients of the chain are alive at once: 8 bytes a score, where the fused
  // kernel holds the dropped probabilities' gradient and its own (2 + 2).
  CHECK(a.transient_bytes - f.transient_bytes == doctest::Approx(scores * (8 - 4)).scale(0));
}

TEST_CASE("eager attention over head dims off 16-byte rows: every batched GEMM loses its tensor-core kernel") {
  // BLOOM's 13824 hidden over 128 heads: head dim 108, 216 bytes a row in bf16 (8-byte aligned);
  // over 64 heads, 216 elements, 432 bytes (16-byte aligned). The projections are unaffected.
  auto model = test::gpt175b();
  model.hidden = 13824;
  model.ffn_hidden = 4 * 13824;
  auto tr = test::training(2048);
  tr.attention = AttentionKernel::eager;
  const BlockShape shape{1, 2048, 8, false, Recompute::none};
  const auto count_off = [](const Block& b) {
    int off = 0;
    for (const auto* ops : {&b.forward, &b.backward_input, &b.backward_weight}) {
      for (const auto& op : *ops) off += op.kind == OpKind::gemm && !op.aligned;
    }
    return off;
  };
  model.heads = model.kv_heads = 128;
  model.head_dim = 108;
  const auto narrow = attention_block(model, tr, shape);
  CHECK(count_off(narrow) == 6);
  CHECK_FALSE(find(narrow.forward, "scores").aligned);
  CHECK(find(narrow.forward, "qkv").aligned);
  model.heads = model.kv_heads = 64;
  model.head_dim = 216;
  CHECK(count_off(attention_block(model, tr, shape)) == 0);
}

TEST_CASE("fp8 GEMMs quantize their inputs first: a cast-and-transpose pass, 1 byte net where the norm is fused") {
  // Llama-3-8B, s = 8192, b = 1, tp 2 with SP (T = 8192 gathered tokens), flash. Forward: the QKV
  // projection's input is cast by the norm fused ahead of it (TELayerNormColumnParallelLinear), leaving
  // the transpose: 1 byte x T x h = 33,554,432; the output projection's input (T x 4096/2) is cast and
  // transposed from bf16: 4 x 8192 x 2048 = 67,108,864. Backward, each dgrad's output gradient:
  // proj_dgrad T x h, 4 x 8192 x 4096 = 134,217,728; qkv_dgrad T x (4096 + 2 x 1024)/2, 4 x 8192 x 3072
  // = 100,663,296.
  const auto m = test::llama3_8b();
  const BlockShape shape{1, 8192, 2, true, Recompute::none};
  auto tr = test::training(8192);
  const auto casts = [](const std::vector<Op>& ops) {
    double bytes = 0;
    for (const auto& op : ops) bytes += op.name == "fp8_cast" ? op.bytes : 0.0;
    return bytes;
  };
  const auto bf16 = attention_block(m, tr, shape);
  CHECK(casts(bf16.forward) + casts(bf16.backward_input) == 0);
  tr.precision = Precision::fp8;
  const auto fp8 = attention_block(m, tr, shape);
  CHECK(casts(fp8.forward) == doctest::Approx(33554432.0 + 67108864.0).scale(0));
  CHECK(casts(fp8.backward_input) == doctest::Approx(134217728.0 + 100663296.0).scale(0));
  CHECK(casts(fp8.backward_weight) == 0);
  // Full recompute reruns the forward with its casts.
  const auto full = attention_block(m, tr, {1, 8192, 2, true, Recompute::full});
  CHECK(casts(full.recompute) == doctest::Approx(casts(fp8.forward)).scale(0));
}

TEST_CASE("fp8 keeps the inputs of its GEMMs for the weight gradients as one byte per element") {
  // Llama-3-8B, s = 8192, b = 1, tp 2 with SP (Tr = 4096 tokens), flash, no dropout. bf16 per layer:
  // attention 2·Tr·h (norm input, QKV input) + 2·T·(q + kv + kv + q)/t + softmax statistics, MLP
  // 2·Tr·h·2 + 2·T·(2f + f)/t. fp8 stores the QKV, projection, fc1 and fc2 inputs at 1 byte:
  // attention saves Tr·h + T·q/t = 4096·4096 + 8192·4096/2 = 33,554,432 bytes; the MLP Tr·h + T·f/t
  // = 4096·4096 + 8192·14336/2 = 75,497,472 bytes.
  const auto m = test::llama3_8b();
  const BlockShape shape{1, 8192, 2, true, Recompute::none};
  auto tr = test::training(8192);
  const auto bf16_attention = attention_block(m, tr, shape), bf16_mlp = mlp_block(m, tr, shape);
  tr.precision = Precision::fp8;
  const auto fp8_attention = attention_block(m, tr, shape), fp8_mlp = mlp_block(m, tr, shape);
  CHECK(bf16_attention.stored_activation_bytes - fp8_attention.stored_activation_bytes == 33'554'432.0);
  CHECK(bf16_mlp.stored_activation_bytes - fp8_mlp.stored_activation_bytes == 75'497'472.0);
  // Full recompute keeps the layer input, in bf16 either way.
  const BlockShape full{1, 8192, 2, true, Recompute::full};
  CHECK(attention_block(m, tr, full).stored_activation_bytes == 2.0 * 4096 * 4096);
}

TEST_CASE("cross-entropy: Megatron-LM's unfused passes over fp32 logits against one fused kernel each way") {
  // Llama-3-8B's 128,256-token vocabulary over tp 2, s = 4096, b = 1: 4096 x 64,128 logits per rank.
  const auto m = test::llama3_8b();
  const BlockShape shape{1, 4096, 2, false, Recompute::none};
  auto tr = test::training(4096);
  const double logits = 4096.0 * 128256 / 2;
  const auto unfused = head_block(m, tr, shape);
  // Forward: cast to fp32 (2 read, 4 written), max (4), subtract in place (8), exp in place (8),
  // sum (4), divide in place (8). Backward: scale the kept softmax in place (8), cast back (4 + 2).
  CHECK(find(unfused.forward, "cross_entropy").bytes == doctest::Approx(logits * (2 + 4 + 4 + 8 + 8 + 4 + 8)).scale(0));
  CHECK(find(unfused.backward_input, "cross_entropy_grad").bytes == doctest::Approx(logits * (8 + 4 + 2)).scale(0));
  tr.cross_entropy = CrossEntropy::fused;
  const auto fused = head_block(m, tr, shape);
  // One read of the bf16 logits forward; backward reads them again and writes their gradient.
  CHECK(find(fused.forward, "cross_entropy").bytes == doctest::Approx(logits * 2).scale(0));
  CHECK(find(fused.backward_input, "cross_entropy_grad").bytes == doctest::Approx(logits * 4).scale(0));
  // What backward keeps: the fp32 softmax (4 bytes a logit) or the bf16 logits (2).
  CHECK(unfused.stored_activation_bytes - fused.stored_activation_bytes == doctest::Approx(logits * 2).scale(0));
}

TEST_CASE("PyTorch's loss over vocabulary-sharded logits (loss parallel) is DTensor's chain of passes, each its own tensor") {
  // Llama-3-8B's vocabulary over tp 2 at 4096 tokens: 4096 x 64,128 bf16 logits per rank.
  const auto m = test::llama3_8b();
  auto tr = test::training(4096);
  tr.cross_entropy = CrossEntropy::torch;
  const double logits = 4096.0 * 128256 / 2;
  const auto sharded = head_block(m, tr, {1, 4096, 2, false, Recompute::none});
  // Forward: the fp32 copy (2 read, 4 written), its max (4), the shifted copy (4 + 4), exp written
  // and summed (4 + 4 + 4), the log-softmax from the shifted copy (4 + 4).
  CHECK(find(sharded.forward, "cross_entropy").bytes == doctest::Approx(logits * (2 + 4 + 4 + 8 + 12 + 8)).scale(0));
  // Backward: zeros (4), exp of the kept log-softmax (4 + 4), the sum (4 + 4 + 4), the product with
  // the loss gradient (4 + 4 + 4), the cast back (4 + 2).
  CHECK(find(sharded.backward_input, "cross_entropy_grad").bytes == doctest::Approx(logits * (4 + 8 + 12 + 12 + 6)).scale(0));
  // Beside the kept log-softmax, backward holds the zeros-built gradient, the sum and the product.
  CHECK(sharded.transient_bytes == doctest::Approx(logits * 12).scale(0));
  // One rank holding the whole vocabulary runs ATen's log-softmax kernels: the fp32 gradients of the
  // log-probabilities and of the logits (8), its passes e + 16 and 20 + e.
  const auto whole = head_block(m, tr, {1, 4096, 1, false, Recompute::none});
  const double all_logits = 4096.0 * 128256;
  CHECK(whole.transient_bytes == doctest::Approx(all_logits * 8).scale(0));
  CHECK(find(whole.forward, "cross_entropy").bytes == doctest::Approx(all_logits * (2 + 16)).scale(0));
  CHECK(find(whole.backward_input, "cross_entropy_grad").bytes == doctest::Approx(all_logits * (20 + 2)).scale(0));
}

TEST_CASE("without gradient-accumulation fusion a pass per micro-batch adds each weight gradient to its fp32 buffer") {
  // GPT-3 175B, tp 8, bf16 (the training fixture's format, 2 bytes an element) with fp32
  // accumulation: the pass reads the micro-batch's gradient (2) and reads and writes the buffer (4 + 4).
  const auto m = test::gpt175b();
  auto tr = test::training(2048);
  const BlockShape shape{1, 2048, 8, false, Recompute::none};
  const double h = 12288;
  for (const auto& op : attention_block(m, tr, shape).backward_weight) CHECK(op.name != "grad_accumulation");
  tr.gradient_accumulation_fusion = false;
  // Attention: QKV (h x 3h/8) and the projection (h/8 x h); MLP: h x 4h/8 twice.
  CHECK(find(attention_block(m, tr, shape).backward_weight, "grad_accumulation").bytes == doctest::Approx(4 * h * h / 8 * 10).scale(0));
  CHECK(find(mlp_block(m, tr, shape).backward_weight, "grad_accumulation").bytes == doctest::Approx(8 * h * h / 8 * 10).scale(0));
  // The embedding's rows of the padded vocabulary (51,200 over 8 ranks) and the LM head's weight.
  const double rows = padded_vocab(m, 8) / 8.0;
  CHECK(find(embedding_block(m, tr, shape).backward_weight, "grad_accumulation").bytes == doctest::Approx(rows * h * 10).scale(0));
  CHECK(find(head_block(m, tr, shape).backward_weight, "grad_accumulation").bytes == doctest::Approx(rows * h * 10).scale(0));
  // Accumulating in the gradients' own format: 2 + 2 + 2 bytes.
  tr.fp32_grad_accumulation = false;
  CHECK(find(attention_block(m, tr, shape).backward_weight, "grad_accumulation").bytes == doctest::Approx(4 * h * h / 8 * 6).scale(0));
  // DeepSpeed's BF16_Optimizer casts first (hp_grad.add_(lp_grad.to(fp32))): the gradient read (2),
  // the fp32 copy written and read (4 + 4), the buffer read and written (4 + 4): 18 bytes.
  tr.fp32_grad_accumulation = true;
  tr.gradient_accumulation_copy = true;
  CHECK(find(attention_block(m, tr, shape).backward_weight, "grad_accumulation").bytes == doctest::Approx(4 * h * h / 8 * 18).scale(0));
  CHECK(find(mlp_block(m, tr, shape).backward_weight, "grad_accumulation").bytes == doctest::Approx(8 * h * h / 8 * 18).scale(0));
}

TEST_CASE("a checkpoint that stops early does not rerun the MLP's down projection") {
  // Llama-3-8B, no dropout, full recompute: the MLP reruns norm, fc1 and SwiGLU; fc2's output is
  // saved by nothing backward runs, so neither fc2 nor the residual add after it is rerun.
  const auto m = test::llama3_8b();
  auto tr = test::training(4096);
  const BlockShape shape{1, 4096, 1, false, Recompute::full};
  const auto whole = mlp_block(m, tr, shape);
  CHECK(whole.recompute.size() == whole.forward.size());
  tr.recompute_early_stop = true;
  const auto early = mlp_block(m, tr, shape);
  REQUIRE(early.recompute.size() == 3);
  CHECK(early.recompute.back().name == "swiglu");
  CHECK(total_flops(whole.recompute) - total_flops(early.recompute) == doctest::Approx(2.0 * 4096 * 4096 * 14336).scale(0));
  // With dropout after fc2, rerunning the dropout (for its mask) needs fc2: the whole MLP reruns.
  auto dropped = m;
  dropped.dropout = 0.1;
  CHECK(mlp_block(dropped, tr, shape).recompute.size() == mlp_block(dropped, tr, shape).forward.size());
}

TEST_CASE("FlashAttention-1's unpadded interface: q, k, v gathered out of the batch, the output scattered back") {
  // Llama-3-8B (q 4096, kv 1024 wide), s = 2048, b = 2, tp 2: T = 4096 tokens, QKV 6144/2 = 3072 and
  // q 2048 columns per rank, bf16. Forward: a gather reads and writes q, k, v (2 x 2 bytes x 3072 a
  // token); the output is scattered into zeros (zeros, read, write: 3 x 2 x 2048). Backward: the
  // output gradient gathered (2 x 2 x 2048); q, k, v's gradients scattered into zeros (3 x 2 x 3072)
  // and concatenated into the QKV gradient (2 x 2 x 3072).
  const auto m = test::llama3_8b();
  const BlockShape shape{2, 2048, 2, false, Recompute::none};
  auto tr = test::training(2048);
  tr.flash_kernel = FlashKernel::flash1;
  const auto a = attention_block(m, tr, shape);
  const double T = 4096;
  CHECK(find(a.forward, "unpad_qkv").bytes == doctest::Approx(T * 2 * 2 * 3072).scale(0));
  CHECK(find(a.forward, "pad_output").bytes == doctest::Approx(T * 3 * 2 * 2048).scale(0));
  CHECK(find(a.backward_input, "pad_output_grad").bytes == doctest::Approx(T * 2 * 2 * 2048).scale(0));
  CHECK(find(a.backward_input, "unpad_qkv_grad").bytes == doctest::Approx(T * 5 * 2 * 3072).scale(0));
  CHECK(find(a.forward, "attention").flash_kernel == FlashKernel::flash1);
  // The copies sit around the kernel, in the order they run.
  const auto at = [](const std::vector<Op>& ops, std::string_view name) {
    return std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; }) - ops.begin();
  };
  CHECK(at(a.forward, "unpad_qkv") + 1 == at(a.forward, "attention"));
  CHECK(at(a.forward, "pad_output") == at(a.forward, "attention") + 1);
  CHECK(at(a.backward_input, "attention_grad") + 1 == at(a.backward_input, "unpad_qkv_grad"));
  // Full recompute reruns the forward copies with the rest of the forward.
  const auto full = attention_block(m, tr, {2, 2048, 2, false, Recompute::full});
  CHECK(at(full.recompute, "unpad_qkv") < static_cast<long>(full.recompute.size()));
  // Native kernels take the padded batch: no copies; nor does eager attention.
  tr.flash_kernel = FlashKernel::native;
  for (const auto& op : attention_block(m, tr, shape).forward) CHECK(op.name.find("pad") == std::string::npos);
  tr.flash_kernel = FlashKernel::flash1;
  tr.attention = AttentionKernel::eager;
  for (const auto& op : attention_block(m, tr, shape).forward) CHECK(op.name.find("pad") == std::string::npos);
}

TEST_CASE("torchtitan's op-level selective checkpointing keeps wq, wv, the attention output, w1 and w2, and reruns wk, wo and w3") {
  // Llama-3-8B, s = 8192, b = 2, tp 1, bf16: T = 16384 tokens. Kept: the layer input (4096), wq's
  // output (4096), wv's (1024), the attention output (4096) and its fp32 log-sum-exp (32 heads x 4
  // bytes), w1's output (14336) and w2's (4096): 2 bytes each. Rerun: wk (T x 1024 x 4096), wo
  // (T x 4096 x 4096), w3 (T x 14336 x 4096), and the norms, RoPE, SwiGLU and residual add.
  const auto m = test::llama3_8b();
  auto tr = test::training(8192);
  tr.selective_recompute = SelectiveRecompute::ops;
  const BlockShape shape{2, 8192, 1, false, Recompute::selective};
  const double T = 16384;
  const auto a = attention_block(m, tr, shape);
  CHECK(a.stored_activation_bytes == doctest::Approx(2 * T * (4096 + 4096 + 1024 + 4096) + 4 * T * 32).scale(0));
  CHECK(total_flops(a.recompute) == doctest::Approx(2 * T * 4096 * (1024 + 4096)).scale(0));
  CHECK(find(a.recompute, "rope").bytes > 0);
  const auto f = mlp_block(m, tr, shape);
  CHECK(f.stored_activation_bytes == doctest::Approx(2 * T * (14336 + 4096)).scale(0));
  CHECK(total_flops(f.recompute) == doctest::Approx(2 * T * 4096 * 14336).scale(0));
  // About half what Megatron-LM's selective recompute keeps (it reruns the attention core only), and
  // 37% of the layer's forward matmul FLOPs rerun where Megatron-LM reruns none.
  tr.selective_recompute = SelectiveRecompute::attention;
  const double megatron = attention_block(m, tr, shape).stored_activation_bytes + mlp_block(m, tr, shape).stored_activation_bytes;
  CHECK((a.stored_activation_bytes + f.stored_activation_bytes) / megatron == doctest::Approx(0.5).epsilon(0.1));
  CHECK(total_flops(mlp_block(m, tr, shape).recompute) == 0);
}
