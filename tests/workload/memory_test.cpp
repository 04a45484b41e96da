#include <doctest/doctest.h>

#include "tests/workload/fixtures.hpp"
#include "workload/memory.hpp"

using namespace parasim;
using namespace parasim::workload;

namespace {
// Korthikanti et al. 2022, bytes per layer per micro-batch, 16-bit activations with dropout.
double korthikanti(double s, double b, double h, double a, double t, bool sp, bool scores) {
  const double score = scores ? 5 * a * s / (h * t) : 0;
  return sp ? s * b * h * (34 / t + score) : s * b * h * (10 + 24 / t + score);
}
}  // namespace

TEST_CASE("activation bytes per layer equal Korthikanti's formulas") {
  const auto m = test::gpt175b();  // a = 96, h = 12288, dropout on
  const double s = 2048, b = 1, h = 12288, a = 96;
  for (int t : {1, 2, 8}) {
    for (bool sp : {false, true}) {
      CAPTURE(t);
      CAPTURE(sp);
      const BlockShape shape{1, 2048, t, sp && t > 1, Recompute::none};
      // Eager attention stores the scores: the 5·a·s/(h·t) term.
      const double eager = layer_activation_bytes(m, test::training(2048, AttentionKernel::eager), shape);
      CHECK(eager == doctest::Approx(korthikanti(s, b, h, a, t, sp && t > 1, true)).epsilon(0.01).scale(0));
      // FlashAttention keeps only fp32 softmax statistics (4·a·s·b/t bytes): the score term is gone.
      const double flash = layer_activation_bytes(m, test::training(2048), shape);
      CHECK(flash == doctest::Approx(korthikanti(s, b, h, a, t, sp && t > 1, false)).epsilon(0.01).scale(0));
      // Selective recompute drops the score term too.
      const BlockShape selective{1, 2048, t, sp && t > 1, Recompute::selective};
      CHECK(layer_activation_bytes(m, test::training(2048, AttentionKernel::eager), selective) ==
            doctest::Approx(korthikanti(s, b, h, a, t, sp && t > 1, false)).epsilon(0.01).scale(0));
      // Full recompute keeps the layer input: 2·s·b·h, divided by t with SP.
      const BlockShape full{1, 2048, t, sp && t > 1, Recompute::full};
      CHECK(layer_activation_bytes(m, test::training(2048), full) == doctest::Approx(2 * s * b * h / ((sp && t > 1) ? t : 1)).scale(0));
    }
  }
}

TEST_CASE("activations in flight: 1F1B keeps pp - stage micro-batches, GPipe all of them") {
  const auto m = test::small_gpt(8);  // 8 layers, h 1024, a 16
  const auto tr = test::training(1024, AttentionKernel::eager);
  auto p = test::plan(1, 4, 1, 1, 16);  // 16 micro-batches, 2 layers per stage
  const auto layer = layer_activations(m, tr, {1, 1024, 1, false, Recompute::none}, 0);
  const double per_layer = layer.kept;
  const auto report = memory_per_stage(m, tr, p, Bytes(80e9));
  // Stage 1 and 2 hold no embedding or head: 2 layers x (4 - stage) micro-batches, and the gradients
  // of the backward that starts at the peak.
  CHECK(report.stages[1].chunks_in_flight == 3);
  CHECK(report.stages[1].activations.value() == doctest::Approx(2 * per_layer * 3 + layer.backward_transient).scale(0));
  CHECK(report.stages[2].activations.value() == doctest::Approx(2 * per_layer * 2 + layer.backward_transient).scale(0));
  CHECK(report.stages[2].backward_transient.value() == doctest::Approx(layer.backward_transient).scale(0));
  p.schedule = Schedule::gpipe;
  const auto gpipe = memory_per_stage(m, tr, p, Bytes(80e9));
  CHECK(gpipe.stages[1].chunks_in_flight == 16);
  CHECK(gpipe.stages[1].activations.value() == doctest::Approx(2 * per_layer * 16 + layer.backward_transient).scale(0));
}

TEST_CASE("a layer's backward holds gradients beside what it kept: its blocks' outputs' and the widest each makes") {
  // small GPT: h 1024, 16 heads, GELU MLP of 4096, dropout on; 1024 tokens of one sample, bf16.
  const auto m = test::small_gpt(8);
  const double s = 1024, h = 1024, f = 4096, a = 16;
  // What the MLP holds for its backward (norm input, fc1 input, dropout mask: 2 + 2 + 1 bytes a hidden
  // element; GELU input and fc2 input: 2 + 2 a 4h element), released before the attention's backward.
  const double mlp_held = s * h * 5 + s * f * 4;
  // MLP: its output's gradient (2·s·h) and, at GELU's backward, fc1's output gradient (2·s·4h).
  const double mlp = 2 * s * h + 2 * s * f;
  // Eager attention with dropout: its output's gradient and two s² gradients a head (the dropped
  // probabilities' and the probabilities'), once the MLP has released its part.
  const double eager = 2 * s * h + 2 * 2 * a * s * s - mlp_held;
  const BlockShape shape{1, 1024, 1, false, Recompute::none};
  CHECK(eager > mlp);
  CHECK(layer_activations(m, test::training(1024, AttentionKernel::eager), shape, 0).backward_transient == doctest::Approx(eager).scale(0));
  // Flash: q, k, v and the output's gradients (2·s·4h) are less than the MLP released: the MLP's.
  CHECK(layer_activations(m, test::training(1024), shape, 0).backward_transient == doctest::Approx(mlp).scale(0));
  // The same whatever the layer keeps: full recompute materializes the layer, then runs its backward.
  const BlockShape full{1, 1024, 1, false, Recompute::full};
  CHECK(layer_activations(m, test::training(1024), full, 0).backward_transient == doctest::Approx(mlp).scale(0));
  // Llama-3-8B's SwiGLU at tp 8 with SP: the output's gradient is the rank's eighth of the tokens,
  // fc1's output gradient the rank's gate and up columns (2·14336/8) for every token.
  const auto llama = test::llama3_8b();
  const BlockShape sp{1, 4096, 8, true, Recompute::none};
  CHECK(layer_activations(llama, test::training(4096), sp, 0).backward_transient ==
        doctest::Approx(2 * (4096.0 / 8 * 4096 + 4096.0 * 2 * 14336 / 8)).scale(0));
  // Mixtral's MoE layer, one GPU (no TP or EP), balanced routing: each of the 4096 tokens goes to 2
  // experts, and the experts' backward holds the output's gradient and, for every routed copy, the
  // SwiGLU's gate-and-up gradient (2 x 14336), the attention's and router's gradients then fewer than
  // the experts released: 2 x (4096 x 4096 + 2 x 4096 x 2 x 14336) bytes.
  const auto mixtral = test::mixtral_8x7b();
  const BlockShape one{1, 4096, 1, false, Recompute::none};
  CHECK(layer_activations(mixtral, test::training(4096), one, 0).backward_transient ==
        doctest::Approx(2 * (4096.0 * 4096 + 2 * 4096.0 * 2 * 14336)).scale(0));
}

TEST_CASE("interleaved 1F1B holds Megatron's pp·(1 + (pp-1)/(pp·v)) stage-equivalents on stage 0") {
  const auto m = test::small_gpt(16);
  const auto tr = test::training(1024);
  auto p = test::plan(1, 4, 1, 1, 16);
  p.vpp = 2;
  p.schedule = Schedule::interleaved_1f1b;
  const auto report = memory_per_stage(m, tr, p, Bytes(80e9));
  // Warm-up (4-0-1)·2 + (2-1)·4 = 10 chunk forwards, plus one in the steady state: 11 chunks of 2
  // layers = 4 x (1 + 3/8) = 5.5 stages' worth of 4 layers.
  CHECK(report.stages[0].chunks_in_flight == 11);
  CHECK(11.0 / 2 == doctest::Approx(4 * (1 + 3.0 / 8)).scale(0));
}

TEST_CASE("model state per ZeRO stage, by hand") {
  // One stage, t = 1: P parameters. bf16 weights 2, fp32 gradients 4, Adam 12 = 18 bytes/param.
  const auto m = test::small_gpt(8);
  const auto tr = test::training(1024);
  auto p = test::plan(1, 1, 8, 1, 64);
  const double P = count_parameters(m).total() + 0;  // tied: the head reuses the embedding
  for (int zero : {0, 1, 2, 3}) {
    CAPTURE(zero);
    p.zero = zero;
    const auto s = memory_per_stage(m, tr, p, Bytes(80e9)).stages[0];
    // Padding the vocabulary to a multiple of 128 adds nothing here (32768 = 256 x 128).
    CHECK(s.parameters == doctest::Approx(P).scale(0));
    CHECK(s.weights.value() == doctest::Approx(2 * P / (zero >= 3 ? 8 : 1)).scale(0));
    CHECK(s.gradients.value() == doctest::Approx(4 * P / (zero >= 2 ? 8 : 1)).scale(0));
    CHECK(s.optimizer.value() == doctest::Approx(12 * P / (zero >= 1 ? 8 : 1)).scale(0));
  }
  // Hybrid sharding over groups of 4: the shard is a quarter.
  p.zero = 3;
  p.zero_group = 4;
  CHECK(memory_per_stage(m, tr, p, Bytes(80e9)).stages[0].optimizer.value() == doctest::Approx(12 * P / 4).scale(0));
}

TEST_CASE("ZeRO-3 under a pipeline: FSDP holds the stage gathered and its gradients unsharded; DeepSpeed gathers a layer at a time") {
  // Two stages of 4 layers, ZeRO-3 over 8 ranks. Stage 1 holds P1 parameters (layers, final norm,
  // untied head); a layer L of them.
  const auto m = test::small_gpt(8);
  const auto tr = test::training(1024);
  auto p = test::plan(1, 2, 8, 1, 64);
  p.zero = 3;
  const double P1 = stage_parameters(m, p, 1), L = layer_parameters(m, p, 4).total();
  const double pipeline = 2 * 2.0 * p.micro_batch * tr.seq_len * m.hidden;  // received activation, gradient to send
  const auto fsdp = memory_per_stage(m, tr, p, Bytes(80e9)).stages[1];
  // The shard's fp32 gradients, and every parameter's gradient accumulated unsharded in fp32 (the
  // reduction's format) until the last backward.
  CHECK(fsdp.gradients.value() == doctest::Approx(4 * P1 / 8 + 4 * P1).scale(0));
  // Every parameter of the stage gathered in bf16 from its first forward to the step's end.
  CHECK(fsdp.buffers.value() == doctest::Approx(pipeline + 2 * P1).scale(0));
  auto deepspeed_tr = tr;
  deepspeed_tr.zero3_engine = Zero3Engine::deepspeed;
  const auto deepspeed = memory_per_stage(m, deepspeed_tr, p, Bytes(80e9)).stages[1];
  CHECK(deepspeed.gradients.value() == doctest::Approx(4 * P1 / 8).scale(0));
  CHECK(deepspeed.buffers.value() == doctest::Approx(pipeline + 2 * 2 * L).scale(0));
  // Without a pipeline FSDP gathers the layer in use and the next; DeepSpeed no more.
  p = test::plan(1, 1, 8, 1, 64);
  p.zero = 3;
  CHECK(memory_per_stage(m, deepspeed_tr, p, Bytes(80e9)).stages[0].buffers.value() == doctest::Approx(2 * 2 * L).scale(0));
}

TEST_CASE("FSDP keeps the root module's parameters gathered through the step: the embedding, final norm and head") {
  // Llama-3 8B on 8 GPUs, FSDP over all 8: PyTorch's FSDP does not reshard the root after forward
  // (backward needs it at once), so beside the two layers in flight the root's 128256 x 4096
  // embedding, 4096 final norm and untied 128256 x 4096 head stay gathered in bf16:
  // 2 x 525,340,672 + 4,096 = 1,050,685,440 parameters, 2.1 GB.
  const auto m = test::llama3_8b();
  const auto tr = test::training(8192);
  auto p = test::plan(1, 1, 8, 1, 8);
  p.zero = 3;
  const double L = layer_parameters(m, p, 0).total(), root = 2.0 * 128256 * 4096 + 4096;
  REQUIRE(stage_parameters(m, p, 0) == doctest::Approx(32 * L + root).scale(0));
  CHECK(memory_per_stage(m, tr, p, Bytes(80e9)).stages[0].buffers.value() == doctest::Approx(2 * (2 * L + root)).scale(0));
  auto deepspeed = tr;
  deepspeed.zero3_engine = Zero3Engine::deepspeed;
  CHECK(memory_per_stage(m, deepspeed, p, Bytes(80e9)).stages[0].buffers.value() == doctest::Approx(2 * 2 * L).scale(0));
}

TEST_CASE("GPT-3 175B with TP8 PP8 on A100-80GB fits with full recompute, not without") {
  const auto m = test::gpt175b();
  const auto tr = test::training(2048, AttentionKernel::eager);
  auto p = test::plan(8, 8, 16, 1, 1536);
  p.recompute = Recompute::full;
  const Bytes a100(80.0 * 1073741824.0);
  const auto report = memory_per_stage(m, tr, p, a100);
  CHECK(report.fits());
  // A middle stage: 12 layers of 12h²/8 weights, 7h/8 column-parallel biases and 6h replicated
  // (row-parallel biases, two layer norms) per GPU, 18 bytes each: about 49 GB.
  CHECK((report.stages[3].weights + report.stages[3].gradients + report.stages[3].optimizer).value() ==
        doctest::Approx(18 * 96 / 8 * (12 * 12288.0 * 12288 / 8 + 7 * 12288 / 8.0 + 6 * 12288)).scale(0));
  p.recompute = Recompute::none;
  const auto none = memory_per_stage(m, tr, p, a100);
  CHECK_FALSE(none.fits());
  CHECK(none.problem()->rfind("OOM on stage 0 by", 0) == 0);
}

TEST_CASE("context parallelism divides a layer's activations by cp, ring or Ulysses") {
  const auto m = test::gpt175b();
  for (auto kernel : {AttentionKernel::flash, AttentionKernel::eager}) {
    const auto tr = test::training(4096, kernel);
    const double one = layer_activation_bytes(m, tr, {1, 4096, 8, true, Recompute::none});
    for (auto kind : {CpKind::ring, CpKind::ulysses}) {
      CAPTURE(static_cast<int>(kind));
      // Eager scores shrink too: ring keeps s/cp x s of them, Ulysses s x s for a/(t·cp) heads.
      CHECK(layer_activation_bytes(m, tr, {1, 4096, 8, true, Recompute::none, 4, kind}) == doctest::Approx(one / 4).scale(0));
    }
  }
  // Full recompute keeps the layer input of the rank's tokens: 2·(s/cp)·b·h/t.
  CHECK(layer_activation_bytes(m, test::training(4096), {1, 4096, 8, true, Recompute::full, 4, CpKind::ring}) ==
        doctest::Approx(2.0 * 1024 * 12288 / 8).scale(0));
}

TEST_CASE("expert weights are sharded by ep and etp; their optimizer state over the expert-data-parallel group") {
  // Mixtral-8x7B, TP2 EP8 PP4 on 64 GPUs (dp 8): 8 layers a stage, one expert per rank split in two.
  const auto m = test::mixtral_8x7b();
  auto p = test::plan(2, 4, 8, 1, 64);
  p.sp = true;
  p.ep = 8;
  // Per layer per GPU: attention 41,943,040 / 2 = 20,971,520, norms 8,192, router 32,768 (replicated)
  // = 21,012,480 dense; 8 experts / ep 8 = one expert, 3·4096·14336 = 176,160,768 / etp 2 = 88,080,384.
  const auto layer = layer_parameters(m, p, 3);
  CHECK(layer.dense == 21'012'480.0);
  CHECK(layer.expert == 88'080'384.0);
  // A middle stage: 8 layers.
  CHECK(stage_parameters(m, p, 1) == 8 * (21'012'480.0 + 88'080'384.0));
  CHECK(stage_expert_parameters(m, p, 1) == 8 * 88'080'384.0);
  // Distributed optimizer: dense state sharded over dp·cp = 8, expert state over 8 / ep = 1.
  p.zero = 1;
  const auto s = memory_per_stage(m, test::training(4096), p, Bytes(80e9)).stages[1];
  CHECK(s.optimizer.value() == doctest::Approx(12 * (8 * 21'012'480.0 / 8 + 8 * 88'080'384.0)).scale(0));
  CHECK(s.weights.value() == doctest::Approx(2 * 8 * (21'012'480.0 + 88'080'384.0)).scale(0));
}

TEST_CASE("the schedules of today in memory: the zero-bubble ones under their limits, the V's ends on stage 0, DualPipe's two copies") {
  const auto m = test::small_gpt(16);  // 16 layers of h 1024
  const auto tr = test::training(1024);
  const auto layer = layer_activations(m, tr, {1, 1024, 1, false, Recompute::none}, 0);
  const double per_layer = layer.kept;
  auto p = test::plan(1, 4, 1, 1, 32);  // 32 micro-batches over 4 stages of 4 layers
  auto report = [&](Schedule s, int vpp) {
    p.schedule = s;
    p.vpp = vpp;
    REQUIRE_FALSE(find_plan_problem(p, m, 4).has_value());
    return memory_per_stage(m, tr, p, Bytes(80e9));
  };
  // ZB-1P keeps 1F1B's pp micro-batches at most, ZB-2P up to twice that; a micro-batch's activations
  // live until its weight step.
  const auto one_f_one_b = report(Schedule::one_f_one_b, 1);
  for (const auto& [schedule, limit] : {std::pair{Schedule::zb_1p, 4}, std::pair{Schedule::zb_2p, 8}}) {
    const auto r = report(schedule, 1);
    int peak = 0;
    for (const auto& st : r.stages) {
      CHECK(st.chunks_in_flight <= limit);
      peak = std::max(peak, st.chunks_in_flight);
      // Stages 1 and 2 hold 4 layers and nothing else: each set is 4 layers' activations.
      if (st.stage == 1 || st.stage == 2) {
        CHECK(st.activations.value() == doctest::Approx(4 * per_layer * st.chunks_in_flight + layer.backward_transient).scale(0));
      }
    }
    CHECK(peak == limit);
    CHECK(r.stages[1].parameters == doctest::Approx(one_f_one_b.stages[1].parameters));
  }
  // ZB-V: chunk s down and chunk 7 - s back up, 2 layers each. Stage 0 holds the embedding and the
  // head (both ends of the V); its activations stay within 1F1B's 4 stage-sets = 8 half-size chunks.
  const auto zbv = report(Schedule::zb_v, 2);
  CHECK(zbv.stages[0].parameters > zbv.stages[1].parameters + layer_parameters(m, p, 0).total());
  for (const auto& st : zbv.stages) CHECK(st.chunks_in_flight <= 8);
  CHECK(zbv.stages[1].parameters == doctest::Approx(4 * layer_parameters(m, p, 0).total()));
  // DualPipe: every stage holds two copies (its chunk and its mirror's): twice 1F1B's layers; both
  // ends hold the embedding and the head; PP + 1 micro-batches' activations at the peak.
  const auto dualpipe = report(Schedule::dualpipe, 1);
  CHECK(dualpipe.stages[1].parameters == doctest::Approx(2 * one_f_one_b.stages[1].parameters));
  CHECK(dualpipe.stages[0].parameters == doctest::Approx(dualpipe.stages[3].parameters));
  int peak = 0;
  for (const auto& st : dualpipe.stages) peak = std::max(peak, st.chunks_in_flight);
  CHECK(peak == 4 + 1);
  CHECK(dualpipe.stages[1].activations.value() ==
        doctest::Approx(4 * per_layer * dualpipe.stages[1].chunks_in_flight + layer.backward_transient).scale(0));
  // DualPipe-V over the same 4 devices: 8 chunks of 2 layers, 2·4 + 1 of them at the peak.
  const auto dualpipe_v = report(Schedule::dualpipe_v, 2);
  peak = 0;
  for (const auto& st : dualpipe_v.stages) peak = std::max(peak, st.chunks_in_flight);
  CHECK(peak == 2 * 4 + 1);
}

TEST_CASE("the loss's logits and gradients come and go on the last stage: e bytes a logit under Megatron-LM's chain, 8 under PyTorch's") {
  // 1024 tokens x 32768 vocabulary (a multiple of 128: no padding) = 33.5 M logits on the last of
  // four stages, which holds two layers of one micro-batch (1F1B) and the head, no recompute.
  const auto m = test::small_gpt(8);
  auto tr = test::training(1024);
  const auto p = test::plan(1, 4, 1, 1, 16);
  const double logits = 1024.0 * 32768;
  const double per_layer = layer_activation_bytes(m, tr, {1, 1024, 1, false, Recompute::none});
  const double norm_and_head_inputs = 2 * 2 * 1024.0 * 1024;  // two bf16 [tokens, hidden] tensors
  // Megatron-LM: the fp32 softmax kept (4 bytes), the bf16 logits or the gradient cast back beside it (2).
  auto last = memory_per_stage(m, tr, p, Bytes(80e9)).stages[3];
  CHECK(last.activations.value() == doctest::Approx(2 * per_layer + norm_and_head_inputs + 4 * logits + 2 * logits).scale(0));
  // PyTorch's cross_entropy over an fp32 copy: the log-softmax kept (4), the gradients of the
  // log-probabilities and of the logits in fp32 beside it in backward (4 + 4).
  tr.cross_entropy = CrossEntropy::torch;
  last = memory_per_stage(m, tr, p, Bytes(80e9)).stages[3];
  CHECK(last.activations.value() == doctest::Approx(2 * per_layer + norm_and_head_inputs + 4 * logits + 8 * logits).scale(0));
  // A fused kernel keeps the bf16 logits and writes their gradient (2 + 2).
  tr.cross_entropy = CrossEntropy::fused;
  last = memory_per_stage(m, tr, p, Bytes(80e9)).stages[3];
  CHECK(last.activations.value() == doctest::Approx(2 * per_layer + norm_and_head_inputs + 2 * logits + 2 * logits).scale(0));
  // Under full recompute the larger of the loss's transient and one recomputed layer is added once.
  auto full = p;
  full.recompute = Recompute::full;
  const auto recomputed = memory_per_stage(m, tr, full, Bytes(80e9)).stages[3];
  CHECK(recomputed.recompute_working.value() == doctest::Approx(std::max(per_layer, 2 * logits)).scale(0));
}

TEST_CASE("PyTorch's foreach AdamW holds a copy of the second moments while it steps, when the activations are gone") {
  // One stage, dp 2 under the distributed optimizer (ZeRO 1): each rank steps half the parameters,
  // and foreach's sqrt(v) is 4 bytes for each of them.
  const auto m = test::small_gpt(8);
  auto tr = test::training(1024);
  auto p = test::plan(1, 1, 2, 1, 2);
  p.zero = 1;
  const auto fused = memory_per_stage(m, tr, p, Bytes(80e9)).stages[0];
  CHECK(fused.optimizer_step.value() == 0);
  tr.optimizer_kernel = OptimizerKernel::foreach;
  const auto foreach_step = memory_per_stage(m, tr, p, Bytes(80e9)).stages[0];
  CHECK(foreach_step.optimizer_step.value() == doctest::Approx(fused.parameters * 4 / 2).scale(0));
  // The step comes after the backward: the larger of it and the activations' peak counts, not both.
  const double state = (fused.weights + fused.gradients + fused.optimizer + fused.buffers).value();
  const double larger = std::max(fused.activations.value(), foreach_step.optimizer_step.value());
  CHECK((foreach_step.total() - foreach_step.allowance).value() == doctest::Approx(state + larger).scale(0));
  // Under full recompute of a long model the activations are small and the step is the peak.
  p.recompute = Recompute::full;
  const auto light = memory_per_stage(m, tr, p, Bytes(80e9)).stages[0];
  REQUIRE(light.optimizer_step > light.activations);
  CHECK(light.transient_peak().value() == doctest::Approx(light.optimizer_step.value()).scale(0));
}
