#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "calibrate/torchtitan_log.hpp"
#include "core/error.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {
const std::string kPrefix = "[rank0]:[titan] 2024-12-10 09:00:00,000 - root - INFO - ";

std::filesystem::path write_log(const std::string& name, const std::vector<std::string>& lines) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream out(path);
  for (const auto& l : lines) out << kPrefix << l << "\n";
  return path;
}

const std::vector<std::string> kStart = {
    "Building 1-D device mesh with ['dp_shard'], [8]",
    "Building llama3 debugmodel with TransformerModelArgs(dim=256, n_layers=6, n_heads=16, n_kv_heads=None, vocab_size=2000, "
    "multiple_of=256, ffn_dim_multiplier=None, rope_theta=10000, attn_mask_type='causal')",
    "Training starts at step 1, with local batch size 8, global batch size 64, sequence length 2048, total steps 10 (warmup 2)"};
}  // namespace

TEST_CASE("a torchtitan log: the model's arguments, the mesh, the choices, the batch and the step lines as printed") {
  const auto log = read_torchtitan_log("tests/data/logs/torchtitan/llama3_8b_fsdp8.log");
  CHECK(log.model_name == "llama3 8B");
  CHECK(log.model_arg("dim") == "4096");
  CHECK(log.model_arg("ffn_dim_multiplier") == "1.3");
  CHECK(log.model_arg("norm_type") == "'rmsnorm'");
  CHECK(log.model_args.at("n_layers").line == 6);
  REQUIRE(log.mesh.size() == 1);
  CHECK(log.mesh[0] == std::pair<std::string, int>{"dp_shard", 8});
  CHECK(log.activation_checkpoint == "selective");
  CHECK_FALSE(log.compiled);
  CHECK_FALSE(log.float8);
  CHECK(log.local_batch == 2);
  CHECK(log.global_batch == 16);
  CHECK(log.seq_len == 8192);
  CHECK_FALSE(log.gradient_accumulation.has_value());
  // Coloured step lines, tps with thousands separators: 11 of them, every one with its max reserved.
  REQUIRE(log.steps.size() == 11);
  CHECK(log.steps[0].step == 1);
  CHECK(log.steps[1].step == 10);
  CHECK(log.steps[1].tokens_per_s_per_gpu == 5748);
  CHECK(log.steps[1].memory_gib == doctest::Approx(82.40));

  const auto big = read_torchtitan_log("tests/data/logs/torchtitan/llama3_70b_fsdp32_tp8_float8.log");
  REQUIRE(big.mesh.size() == 2);
  CHECK(big.mesh[1] == std::pair<std::string, int>{"tp", 8});
  CHECK(big.activation_checkpoint == "full");
  CHECK(big.compiled);
  CHECK(big.float8);
  CHECK(looks_like_torchtitan_log("tests/data/logs/torchtitan/llama3_70b_fsdp32_tp8_float8.log"));
  CHECK_FALSE(looks_like_torchtitan_log("tests/data/logs/megatron/h100_gpt0.7b_mb4.log"));
}

TEST_CASE("a torchtitan log that cannot be read says where: no mesh, no start line, no step, a count past any cluster") {
  auto message = [](const std::filesystem::path& p) {
    try {
      read_torchtitan_log(p);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  auto lines = kStart;
  lines.push_back("step:  1  loss: 8.0  memory:  1.00GiB(1.00%)  wps: 1,000  mfu: 1.00%");
  // Older torchtitan prints wps: read as tps. A model argument of None is no value.
  const auto ok = read_torchtitan_log(write_log("tt_ok.log", lines));
  CHECK(ok.steps.at(0).tokens_per_s_per_gpu == 1000);
  CHECK_FALSE(ok.model_arg("n_kv_heads").has_value());

  auto no_mesh = lines;
  no_mesh.erase(no_mesh.begin());
  CHECK(message(write_log("tt_no_mesh.log", no_mesh)).find("tt_no_mesh.log:1:1: error: no device mesh") != std::string::npos);
  auto no_start = lines;
  no_start.erase(no_start.begin() + 2);
  CHECK(message(write_log("tt_no_start.log", no_start)).find("no global batch and sequence length") != std::string::npos);
  CHECK(message(write_log("tt_no_steps.log", kStart)).find("tt_no_steps.log:3:1: error: no step line") != std::string::npos);
  auto huge = lines;
  huge[0] = "Building 1-D device mesh with ['dp_shard'], [99999999999999999999]";
  CHECK(message(write_log("tt_huge.log", huge)).find("tt_huge.log:1:1: error: mesh: '99999999999999999999' is not a count") != std::string::npos);
  auto zero_degree = lines;
  zero_degree[0] = "Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=0, cp=1, tp=1";
  CHECK(message(write_log("tt_zero_degree.log", zero_degree)).find("tt_zero_degree.log:1:1: error: mesh: the degree dp_shard is 0") != std::string::npos);
  auto zero_batch = lines;
  zero_batch[2] = "Trainer is initialized with local batch size 0, global batch size 0, gradient accumulation steps 1, sequence length 2048";
  CHECK(message(write_log("tt_zero_batch.log", zero_batch)).find("tt_zero_batch.log:3:1: error: global batch size: the global batch and the sequence "
                                                                "length must be at least 1") != std::string::npos);
  CHECK(message("tests/data/logs/torchtitan/no_steps.log").find("the run failed before its first --metrics.log_freq, at tests/data/logs/torchtitan/no_steps.log:13: [rank0]: torch.OutOfMemoryError") != std::string::npos);
}

TEST_CASE("a torchtitan log of 2025 run on one GPU: the 0-D mesh, the trainer's batch line, AMP, the step lines") {
  // Run for real on an H200 (tests/data/logs/torchtitan/PROVENANCE.md): torchtitan v0.1.0 prints the batch
  // on "Trainer is initialized with ...", then a bare "Training starts at step 1."; one GPU builds no mesh.
  const auto log = read_torchtitan_log("tests/data/logs/torchtitan/h200_llama3_3b_b2_s8192_sac.log");
  CHECK(log.model_name == "llama3 3B");
  CHECK(log.model_arg("dim") == "3072");
  CHECK(log.model_arg("n_layers") == "28");
  CHECK(log.model_arg("vocab_size") == "2256");
  CHECK(log.model_arg("_enforced").has_value());  // a quoted string with spaces is one field
  CHECK(log.mesh.empty());
  CHECK(log.mesh_line == 3);
  CHECK(log.activation_checkpoint == "selective");
  CHECK_FALSE(log.compiled);
  CHECK(log.local_batch == 2);
  CHECK(log.global_batch == 2);
  CHECK(log.gradient_accumulation == 1);
  CHECK(log.seq_len == 8192);
  CHECK(log.batch_line == 16);
  REQUIRE(log.steps.size() == 30);
  CHECK(log.steps[0].tokens_per_s_per_gpu == 11326);  // the first step: allocation and autotuning
  CHECK(log.steps[29].step == 30);
  CHECK(log.steps[29].tokens_per_s_per_gpu == 16734);
  CHECK(log.steps[29].memory_gib == doctest::Approx(61.08));

  const auto compiled = read_torchtitan_log("tests/data/logs/torchtitan/h200_llama3_1b_b8_s4096_full_compile.log");
  CHECK(compiled.compiled);
  CHECK(compiled.activation_checkpoint == "full");
  CHECK(compiled.local_batch == 8);
  CHECK(compiled.steps.size() == 30);
  CHECK(looks_like_torchtitan_log("tests/data/logs/torchtitan/h200_llama3_1b_b4_s4096.log"));
}

TEST_CASE("a torchtitan v0.2.2 log: the model's arguments as JSON lines, the mesh by degree, a failure named before what is missing") {
  // Run for real on an H200 by `parasim confirm --framework torchtitan` (tests/data/confirm/h200-torchtitan/PROVENANCE.md).
  const auto log = read_torchtitan_log("tests/data/confirm/h200-torchtitan/plan-02/node0.log");
  CHECK(log.model_name == "qwen3 1.7B");  // "Building qwen3 1.7Bwith {": the flavor and "with" run together
  CHECK(log.model_arg("dim") == "2048");
  CHECK(log.model_arg("hidden_dim") == "6144");
  CHECK(log.model_args.at("hidden_dim").line == 15);
  CHECK(log.model_arg("norm_eps") == "1e-06");
  CHECK(log.model_arg("qk_norm") == "True");
  CHECK(log.model_arg("attn_type") == "'sdpa'");
  CHECK_FALSE(log.model_arg("moe_args.num_expert_groups").has_value());  // null
  CHECK(log.model_arg("moe_args.num_experts") == "8");                   // a nested object's fields by path
  CHECK(log.model_args.at("moe_args.num_experts").line == 28);
  REQUIRE(log.mesh.size() == 7);
  CHECK(log.mesh[2] == std::pair<std::string, int>{"dp_shard", 1});
  CHECK(log.mesh_line == 56);
  CHECK(log.global_batch == 8);
  CHECK(log.gradient_accumulation == 2);
  REQUIRE(log.steps.size() == 12);
  CHECK(log.steps[11].tokens_per_s_per_gpu == 31136);  // the step line also prints grad_norm
  CHECK(*torchtitan_peak_reserved_gib(log) == doctest::Approx(113.71));
  CHECK(torchtitan_world_size(log) == 1);  // ep and etp are views of the other dimensions

  // The mb 8 plan ran out of memory in its first step, before torchtitan built its mesh: the error says so.
  try {
    read_torchtitan_log("tests/data/confirm/h200-torchtitan/plan-01/node0.log");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("no step line") != std::string::npos);
    CHECK(what.find("plan-01/node0.log:77: [rank0]:[rank0]: torch.OutOfMemoryError: CUDA out of memory") != std::string::npos);
  }
}

TEST_CASE("model arguments printed as JSON that does not parse are an error at the Building line") {
  const auto path = write_log("tt_bad_json.log", {"Building llama3 8B with {", "  \"dim\": 4096,,", "}"});
  try {
    read_torchtitan_log(path);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("tt_bad_json.log:1:1: error: model arguments: the JSON after 'Building ... with {' does not parse") != std::string::npos);
  }
  const auto cut = write_log("tt_cut_json.log", {"Building 1-D device mesh with ['dp_shard'], [8]", "Building llama3 8B with {", "  \"dim\": 4096,"});
  try {
    read_torchtitan_log(cut);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("tt_cut_json.log:2:1: error: model arguments: the JSON after 'Building ... with {' never closes") != std::string::npos);
  }
}
