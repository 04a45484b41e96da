#include <doctest/doctest.h>

#include <algorithm>
#include <fmt/format.h>
#include <variant>

#include "calibrate/profile.hpp"
#include "sim/validation.hpp"
#include "topology/gpu_spec.hpp"

using namespace parasim;
using namespace parasim::sim;

namespace {
// dgxc-grok1-314b-bf16-256g of ../shared/validation/other_stacks.yaml, as load_measured_runs reads it.
MeasuredRun grok_row() {
  MeasuredRun r;
  r.id = "dgxc-grok1-314b-bf16-256g";
  r.family = "dgxc";
  r.arch = "moe";
  r.layers = 32;
  r.hidden = 6144;
  r.heads = 48;
  r.kv_heads = 8;
  r.ffn_hidden = 32768;
  r.vocab = 128256;
  r.seq_len = 8192;
  r.experts = 8;
  r.top_k = 2;
  r.gpu = "h100-sxm5-80gb";
  r.gpus = 256;
  r.nic_gbps_per_gpu = 400;
  r.precision = "bf16";
  r.attention = "flash";
  r.tp = 4;
  r.pp = 4;
  r.dp = 8;
  r.cp = 2;
  r.ep = 8;
  r.vpp = 8;
  r.micro_batch = 1;
  r.global_batch = 1024;
  r.measured_iteration_s = 20.83;
  return r;
}
}  // namespace

TEST_CASE("validate rebuilds MoE and context-parallel rows: experts from the row, ring CP, EP within dp·cp") {
  const auto built = row_scenario(grok_row(), "scenarios/hardware");
  REQUIRE(std::holds_alternative<RowScenario>(built));
  const auto& s = std::get<RowScenario>(built);
  // The llama block with 8 experts of the row's ffn_hidden, top-2, no shared experts.
  CHECK(s.model.experts == 8);
  CHECK(s.model.top_k == 2);
  CHECK(s.model.expert_ffn_hidden == 32768);
  CHECK(s.model.shared_experts == 0);
  CHECK(s.model.activation == workload::Activation::swiglu);
  const auto& p = s.candidates.front();
  CHECK(p.cp == 2);
  CHECK(p.cp_kind == workload::CpKind::ring);
  CHECK(p.ep == 8);
  // 4 x 4 x 8 x 2 = 256 GPUs; ep 8 within dp·cp = 16.
  CHECK(p.gpus() == 256);
  CHECK_FALSE(workload::find_plan_problem(p, s.model, 256, 8192).has_value());
  // A row without experts cannot be a mixture.
  auto bad = grok_row();
  bad.experts.reset();
  CHECK(std::get<std::string>(row_scenario(bad, "scenarios/hardware")) == "a mixture of experts needs experts and top_k");
}

TEST_CASE("the fill policy counts a plan as fitting when its tensors and the fixed allowance do") {
  // 76 GiB of tensors on an 80 GiB GPU: with the 1.5 GiB fixed allowance 77.5 GiB fit; the model's
  // full total adds 5% fragmentation (3.8 GiB) and is 81.3 GiB, over the capacity.
  const double gib = 1073741824.0;
  workload::MemoryReport m;
  m.capacity = Bytes(80 * gib);
  workload::StageMemory st;
  st.weights = Bytes(20 * gib);
  st.optimizer = Bytes(30 * gib);
  st.activations = Bytes(26 * gib);
  st.allowance = Bytes(workload::kFixedAllowanceBytes + workload::kFragmentation * 76 * gib);
  m.stages.push_back(st);
  CHECK_FALSE(m.fits());
  CHECK(fits_published(m));
  // 79 GiB of tensors: 80.5 GiB with the fixed allowance alone, which does not fit either way.
  m.stages[0].activations = Bytes(29 * gib);
  m.stages[0].allowance = Bytes(workload::kFixedAllowanceBytes + workload::kFragmentation * 79 * gib);
  CHECK_FALSE(fits_published(m));
}

TEST_CASE("the stack a source names: the repositories and papers of the published files") {
  CHECK(software_stack_of("mosaicml/llm-foundry: scripts/train/benchmarking/README.md (section \"H100 80GB BF16\")") == SoftwareStack::llm_foundry);
  CHECK(software_stack_of("NVIDIA/dgxc-benchmarking: maxtext/README_70b.md (release 25.04.02, MaxText/JAX)") == SoftwareStack::maxtext);
  CHECK(software_stack_of("NVIDIA/dgxc-benchmarking: llama3.1/README.md (release 25.04.02, NeMo 2 / Megatron-Core)") == SoftwareStack::nemo);
  CHECK(software_stack_of("NVIDIA/dgxc-benchmarking: nemotron/README.md (release 25.04.02)") == SoftwareStack::nemo);
  CHECK(software_stack_of("NVIDIA/NeMo: docs/source/performance/performance_summary.md") == SoftwareStack::nemo);
  CHECK(software_stack_of("NVIDIA-NeMo/Megatron-Bridge: docs/performance-summary-archive.md") == SoftwareStack::nemo);
  CHECK(software_stack_of("bigscience-workshop/bigscience: train/tr11-176B-ml/chronicles-prequel.md") == SoftwareStack::megatron_deepspeed);
  CHECK(software_stack_of("pytorch/torchtitan: benchmarks/llama3_h100_202412_torchtitan.md (Dec 2024)") == SoftwareStack::torchtitan);
  CHECK(software_stack_of("NVIDIA/Megatron-LM README \"Performance Benchmarking\" (Megatron-Core r0.8.0)") == SoftwareStack::megatron_lm);
  CHECK(software_stack_of("Narayanan et al., \"Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM\" (SC21)") ==
        SoftwareStack::megatron_lm);
  CHECK(software_stack_of("Korthikanti et al., \"Reducing Activation Recomputation in Large Transformer Models\"") == SoftwareStack::megatron_lm);
  CHECK(software_stack_of("Smith et al., \"Using DeepSpeed and Megatron to Train Megatron-Turing NLG 530B\" (arXiv:2201.11990)") ==
        SoftwareStack::megatron_deepspeed);
  CHECK(software_stack_of("a lab notebook") == SoftwareStack::unknown);
  CHECK(software_stack_name(SoftwareStack::llm_foundry) == "llm-foundry");
}

TEST_CASE("a row's stack sets what its source leaves out, as that stack ran; other sources keep the search") {
  auto built = [](const MeasuredRun& r) {
    const auto s = row_scenario(r, "scenarios/hardware");
    REQUIRE(std::holds_alternative<RowScenario>(s));
    return std::get<RowScenario>(s);
  };
  // NeMo's recipes: the distributed optimizer (zero 1), not searched; vpp searched over every divisor
  // of a stage's 8 layers (flash attention).
  auto r = grok_row();
  r.source = "NVIDIA/dgxc-benchmarking: grok1/README_314b.md (release 25.04.02)";
  r.vpp.reset();
  auto s = built(r);
  CHECK(s.stack == SoftwareStack::nemo);
  CHECK(s.candidates.front().zero == 1);
  CHECK(s.zero_choices.empty());
  CHECK(s.vpp_choices == std::vector<int>{1, 2, 4, 8});
  CHECK(s.training.flash_kernel == workload::FlashKernel::native);
  CHECK_FALSE(s.training.fp32_grad_accumulation);  // the performance recipes' grad_reduce_in_fp32 off
  // The same row from an unknown source searches zero {0, 1} from zero 0.
  r.source = "a lab notebook";
  s = built(r);
  CHECK(s.candidates.front().zero == 0);
  CHECK(s.zero_choices == std::vector<int>{0, 1});
  CHECK(s.training.fp32_grad_accumulation);
  // Eager attention (the 2021-22 stacks, whose interleaved transfers block): vpp {1, 2, 4}.
  r.attention = "eager";
  CHECK(built(r).vpp_choices == std::vector<int>{1, 2, 4});
  // Megatron-DeepSpeed's pipeline engine has no interleaved schedule: vpp 1, not searched.
  r.source = "bigscience-workshop/bigscience: train/tr11-176B-ml/chronicles-prequel.md";
  s = built(r);
  CHECK(s.vpp_choices.empty());
  CHECK(s.candidates.front().vpp == 1);
  // Its bf16 training runs DeepSpeed's BF16_Optimizer, whose accumulation casts in a copy.
  CHECK_FALSE(s.training.gradient_accumulation_fusion);
  CHECK(s.training.gradient_accumulation_copy);
  r.precision = "fp16";
  CHECK_FALSE(built(r).training.gradient_accumulation_copy);
  // llm-foundry's FSDP rows ran flash-attn 1.x; MaxText's XLA issues each backward gather ahead.
  MeasuredRun f = grok_row();
  f.arch = "gpt";
  f.experts.reset();
  f.top_k.reset();
  f.kv_heads.reset();
  f.ep = 1;
  f.tp = f.pp = f.cp = 1;
  f.dp = 256;
  f.vpp.reset();
  f.zero = 3;
  f.source = "mosaicml/llm-foundry: scripts/train/benchmarking/README.md";
  s = built(f);
  CHECK(s.training.flash_kernel == workload::FlashKernel::flash1);
  CHECK(s.training.zero3_backward_prefetch == workload::Zero3Prefetch::none);
  f.source = "NVIDIA/dgxc-benchmarking: maxtext/README_70b.md (release 25.04.02, MaxText/JAX)";
  s = built(f);
  CHECK(s.training.flash_kernel == workload::FlashKernel::native);
  CHECK(s.training.zero3_backward_prefetch == workload::Zero3Prefetch::pre);
  // torchtitan attends through SDPA, whose flash backend is FlashAttention-2.
  f.source = "pytorch/torchtitan: benchmarks/llama3_h100_202412_torchtitan.md (Dec 2024; also docs/performance.md)";
  s = built(f);
  CHECK(s.training.flash_kernel == workload::FlashKernel::flash2);
  CHECK(s.training.zero3_backward_prefetch == workload::Zero3Prefetch::none);
}

TEST_CASE("the row format's newer keys: head_dim, dense_layers, and the schedule a source names") {
  auto built = [](const MeasuredRun& r) {
    const auto s = row_scenario(r, "scenarios/hardware");
    REQUIRE(std::holds_alternative<RowScenario>(s));
    return std::get<RowScenario>(s);
  };
  // Qwen3's head_dim need not be hidden / heads (48 heads do not divide 6144 + 1).
  auto r = grok_row();
  r.hidden = 6145;
  CHECK(std::get<std::string>(row_scenario(r, "scenarios/hardware")) == "48 heads do not divide hidden 6145 (give head_dim)");
  r.head_dim = 128;
  CHECK(built(r).model.head_dim == 128);
  CHECK(built(r).model.q_width() == 6144);
  // DeepSeek's first dense layers keep the dense MLP.
  r = grok_row();
  r.dense_layers = 3;
  const auto moe = built(r).model;
  CHECK(moe.first_dense_layers == 3);
  CHECK_FALSE(moe.moe_layer(2));
  CHECK(moe.moe_layer(3));
  // A named schedule is simulated as named; an interleaved row without vpp searches vpp > 1.
  r = grok_row();
  r.vpp.reset();
  r.schedule = "gpipe";
  auto s = built(r);
  CHECK(s.candidates.front().schedule == workload::Schedule::gpipe);
  CHECK(s.vpp_choices.empty());
  r.schedule = "interleaved-1f1b";
  s = built(r);
  CHECK(s.candidates.front().schedule == workload::Schedule::interleaved_1f1b);
  CHECK(s.vpp_choices == std::vector<int>{2, 4, 8});
  CHECK(s.candidates.front().vpp == 2);
  // Tied embeddings where the source states them (a torchtitan log's enable_weight_tying); llama
  // rows are untied otherwise, gpt rows take whichever is closer to params_b.
  r = grok_row();
  CHECK_FALSE(built(r).model.tied_embeddings);
  r.tied_embeddings = true;
  CHECK(built(r).model.tied_embeddings);
  r.arch = "gpt";
  r.ep = 1;
  r.params_b = 1000;  // untied is closer to it, but the stated tie stands
  r.tied_embeddings = true;
  CHECK(built(r).model.tied_embeddings);
}

TEST_CASE("a row's latent attention, sliding window and multi-token prediction are the model's") {
  auto r = grok_row();
  r.mla = MlaShape{1536, 512, 128, 64, 128};
  auto s = row_scenario(r, "scenarios/hardware");
  REQUIRE(std::holds_alternative<RowScenario>(s));
  const auto& mla = std::get<RowScenario>(s).model;
  CHECK(mla.is_mla());
  CHECK(mla.mla.q_lora_rank == 1536);
  CHECK(mla.kv_heads == mla.heads);
  CHECK(mla.head_dim == 192);
  r = grok_row();
  r.sliding_window = 4096;
  s = row_scenario(r, "scenarios/hardware");
  REQUIRE(std::holds_alternative<RowScenario>(s));
  CHECK(std::get<RowScenario>(s).model.sliding_window == 4096);
  CHECK(std::get<RowScenario>(s).model.local_attention_layer(5));
  // A window as long as the sequence is full causal attention.
  r.sliding_window = 8192;
  CHECK(std::get<RowScenario>(row_scenario(r, "scenarios/hardware")).model.sliding_window == 0);
  r = grok_row();
  r.mtp_layers = 1;
  CHECK(std::get<RowScenario>(row_scenario(r, "scenarios/hardware")).model.mtp_layers == 1);
}

TEST_CASE("rows naming the schedules of today are simulated: the V-shaped ones with two chunks a stage") {
  auto built = [](const MeasuredRun& r) {
    const auto s = row_scenario(r, "scenarios/hardware");
    REQUIRE(std::holds_alternative<RowScenario>(s));
    return std::get<RowScenario>(s);
  };
  auto r = grok_row();
  r.vpp.reset();
  for (const char* name : {"zb-1p", "zb-2p", "zb-v", "dualpipe", "dualpipe-v"}) {
    CAPTURE(name);
    r.schedule = name;
    const auto s = built(r);
    const bool v = std::string(name) == "zb-v" || std::string(name) == "dualpipe-v";
    REQUIRE_FALSE(s.candidates.empty());
    CHECK(s.candidates.front().schedule == *parasim::workload::schedule_from_name(name));
    CHECK(s.candidates.front().vpp == (v ? 2 : 1));
    CHECK((std::find(s.filled.begin(), s.filled.end(), fmt::format("vpp=2 ({}: two chunks a stage)", name)) != s.filled.end()) == v);
    // DualPipe's F&B steps run one micro-batch's expert all-to-alls under another's compute, as filled.
    const bool dualpipe = std::string(name).rfind("dualpipe", 0) == 0;
    CHECK(s.candidates.front().overlap.ep_comm == dualpipe);
  }
  // DualPipe's two chunks a stage are copies: a row that counts them (vpp 2) splits the model in pp.
  r.schedule = "dualpipe";
  r.vpp = 2;
  CHECK(built(r).candidates.front().vpp == 1);
}

TEST_CASE("uneven pipeline splits: the row's stage_layers, else the split its stack uses") {
  MeasuredRun r = grok_row();
  r.layers = 30;
  r.pp = 4;
  // NeMo / Megatron-Core count the embedding and the loss as a layer each where layers + 2 divide:
  // 32 chunks of one, the first and the last holding the embedding and the loss alone.
  auto split = row_chunk_layers(r, SoftwareStack::nemo, 8);
  REQUIRE(split.size() == 32);
  CHECK(split.front() == 0);
  CHECK(split.back() == 0);
  CHECK(std::count(split.begin(), split.end(), 1) == 30);
  // Megatron-DeepSpeed balances parameters: the remainder on the middle chunks.
  r.layers = 78;
  r.pp = 12;
  CHECK(row_chunk_layers(r, SoftwareStack::megatron_deepspeed, 1) == std::vector<int>{6, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6});
  // Layers that divide: an even split (empty).
  r.layers = 72;
  CHECK(row_chunk_layers(r, SoftwareStack::nemo, 1).empty());
  // stage_layers: each stage's layers over its vpp chunks, chunk c of stage s at c·pp + s.
  r.layers = 14;
  r.pp = 4;
  r.stage_layers = {3, 4, 4, 3};
  CHECK(row_chunk_layers(r, SoftwareStack::unknown, 1) == std::vector<int>{3, 4, 4, 3});
  CHECK(row_chunk_layers(r, SoftwareStack::unknown, 2) == std::vector<int>{2, 2, 2, 2, 1, 2, 2, 1});
}

TEST_CASE("a file is read row by row: a bad row is an error for that row, the others are read") {
  const auto read = read_measured_runs("tests/data/validation/rows_readable.yaml");
  REQUIRE(read.errors.size() == 1);
  CHECK(read.errors[0].id == "typo");
  CHECK(std::string(read.errors[0].error.what()).rfind("tests/data/validation/rows_readable.yaml:20:48: error: runs.1.plan.micro_bach: unknown key", 0) == 0);
  REQUIRE(read.runs.size() == 7);
  CHECK(read.runs[0].head_dim == 128);
  CHECK(read.runs[1].mla->kv_lora_rank == 128);
  CHECK(read.runs[1].dense_layers == 1);
  CHECK(read.runs[4].schedule == "zb-v");
  CHECK(read.runs[5].stage_layers == std::vector<int>{2, 4});
  // load_measured_runs, for commands that need every row, stops at the first error.
  CHECK_THROWS_AS(load_measured_runs("tests/data/validation/rows_readable.yaml"), InputError);
}

TEST_CASE("two rows are the same run when every input they state and the stack their sources name agree") {
  const auto rows = load_measured_runs("tests/data/validation/same_run_twice.yaml");
  REQUIRE(rows.size() == 3);
  CHECK(same_inputs(rows[0], rows[1]));   // ids, measurements and notes differ: not inputs
  CHECK_FALSE(same_inputs(rows[0], rows[2]));  // full recompute against selective
  auto nemo = rows[1];
  nemo.source = "NVIDIA/NeMo performance summary";
  CHECK_FALSE(same_inputs(rows[0], nemo));  // another stack fills what the row leaves out differently
  auto latent = rows[1];
  latent.mla = MlaShape{std::nullopt, 512, 128, 64, 128};
  CHECK_FALSE(same_inputs(rows[0], latent));
}

TEST_CASE("every GPU the row format names is bundled, with an H100-class profile where it is one") {
  for (const char* gpu : {"a100-sxm4-80gb", "a100-sxm4-40gb", "h100-sxm5-80gb", "h200-sxm-141gb", "h800-sxm5-80gb", "a800-sxm4-80gb", "h100-96gb-500w"}) {
    CAPTURE(gpu);
    const auto spec = topology::parse_gpu(yaml::Record(yaml::load_file(std::string("scenarios/hardware/") + gpu + ".yaml"), topology::kGpuSchema));
    CHECK(spec.peak_for(Precision::bf16).has_value());
  }
  // The torchtitan H100: peaks one third of the way from the H100 NVL (400 W) to the SXM (700 W).
  const auto h = topology::parse_gpu(yaml::Record(yaml::load_file("scenarios/hardware/h100-96gb-500w.yaml"), topology::kGpuSchema));
  CHECK(h.peak_for(Precision::bf16)->value() == doctest::Approx(835.5e12 + (989.4e12 - 835.5e12) / 3).epsilon(1e-3));
  CHECK(h.hbm_bandwidth.value() == doctest::Approx(2.4e12));
  CHECK(calibrate::default_profile(h.name).name == "h100");
}

TEST_CASE("Spearman counts tied values at their average rank") {
  // Ranks 1, 2.5, 2.5, 4 against 1, 3, 2, 4 (mean 2.5): covariance 2.25 + 0 + 0 + 2.25 = 4.5,
  // variances 4.5 and 5, so 4.5 / sqrt(22.5) = 3 / sqrt(10).
  CHECK(spearman({1, 2, 2, 3}, {1, 3, 2, 4}) == doctest::Approx(3 / std::sqrt(10.0)));
  CHECK(spearman({1, 2, 3}, {10, 20, 30}) == doctest::Approx(1.0));
  CHECK(spearman({1, 2, 3}, {3, 2, 1}) == doctest::Approx(-1.0));
  // One side all tied: no order to agree with.
  CHECK(spearman({1, 1, 1}, {1, 2, 3}) == 0.0);
}

TEST_CASE("a printed peak is read under the keys sources use: the unit from the key's suffix, what it counts from its name") {
  const auto read = read_measured_runs("tests/data/validation/published_memory_keys.yaml");
  REQUIRE(read.errors.empty());
  REQUIRE(read.runs.size() == 4);
  CHECK(read.runs[0].published_memory_bytes == doctest::Approx(27.5 * 1073741824.0));  // peak_mem_gib
  CHECK_FALSE(read.runs[0].published_memory_kind.has_value());                           // the source's stack decides
  CHECK(read.runs[1].published_memory_bytes == doctest::Approx(28160 * 1048576.0));      // max_reserved_mib
  CHECK(read.runs[1].published_memory_kind == PrintedMemory::reserved);
  CHECK(read.runs[2].published_memory_bytes == doctest::Approx(25e9));                   // max_allocated_gb
  CHECK(read.runs[2].published_memory_kind == PrintedMemory::allocated);
  CHECK_FALSE(read.runs[3].published_memory_bytes.has_value());                          // mem_util: 45, no unit
}

TEST_CASE("the modelled peak of the kind a source printed: tensors, with fragmentation, with the fixed allowance") {
  workload::MemoryReport m;
  workload::StageMemory a, b;
  a.weights = Bytes(10e9);
  a.activations = Bytes(20e9);
  a.allowance = Bytes(workload::kFixedAllowanceBytes + workload::kFragmentation * 30e9);
  b.weights = Bytes(31e9);
  b.allowance = Bytes(workload::kFixedAllowanceBytes + workload::kFragmentation * 31e9);
  m.stages = {a, b};
  CHECK(printed_peak(m, PrintedMemory::allocated) == doctest::Approx(31e9));
  CHECK(printed_peak(m, PrintedMemory::reserved) == doctest::Approx(31e9 * (1 + workload::kFragmentation)));
  CHECK(printed_peak(m, PrintedMemory::device) == doctest::Approx(31e9 * (1 + workload::kFragmentation) + workload::kFixedAllowanceBytes));
  // torchtitan's tables and step lines print max reserved; a stack that prints no one figure says nothing.
  CHECK(memory_printed_by(SoftwareStack::torchtitan) == PrintedMemory::reserved);
  CHECK_FALSE(memory_printed_by(SoftwareStack::megatron_deepspeed).has_value());
}

TEST_CASE("torchtitan's kernels as a value: FlashAttention-2 where attention is flash, PyTorch's loss, op-level checkpointing") {
  workload::TrainingSpec t;
  run_as_torchtitan(t);
  CHECK(t.flash_kernel == workload::FlashKernel::flash2);
  CHECK(t.cross_entropy == workload::CrossEntropy::torch);
  CHECK(t.selective_recompute == workload::SelectiveRecompute::ops);
  workload::TrainingSpec eager;
  eager.attention = workload::AttentionKernel::eager;
  run_as_torchtitan(eager);
  CHECK(eager.flash_kernel == workload::FlashKernel::native);  // no flash kernel runs
}
