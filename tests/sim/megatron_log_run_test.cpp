#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "sim/megatron_log_run.hpp"

using namespace parasim;
using namespace parasim::sim;

namespace {
// A two-layer model on one GPU: what every dump below starts from.
const std::string kTinyDump =
    "  world_size ...................................... 1\n"
    "  num_layers ...................................... 2\n"
    "  hidden_size ..................................... 64\n"
    "  num_attention_heads ............................. 2\n"
    "  seq_length ...................................... 128\n"
    "  micro_batch_size ................................ 1\n"
    "  global_batch_size ............................... 1\n";

calibrate::MegatronLog log_with(const std::string& name, const std::string& arguments) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << "------------------------ arguments ------------------------\n"
                      << arguments << "-------------------- end of arguments ---------------------\n"
                      << " iteration 10/ 100 | elapsed time per iteration (ms): 2000.0 |\n";
  return calibrate::read_megatron_log(path);
}
}  // namespace

TEST_CASE("the H100 log as a run: the model, the plan and the measurements it states") {
  const auto log = calibrate::read_megatron_log("tests/data/logs/megatron/h100_gpt0.7b_mb4.log");
  const auto r = megatron_log_run(log, {"h100-sxm5-80gb", 8, std::nullopt});
  const auto& run = r.run;
  CHECK(run.id == "h100_gpt0.7b_mb4");
  CHECK(run.arch == "gpt");
  CHECK(run.layers == 12);
  CHECK(run.hidden == 2048);
  CHECK(run.heads == 16);
  CHECK(run.ffn_hidden == 8192);
  CHECK(run.vocab == 32000);  // vocab_size 32000 padded to a multiple of 128 x tp 1
  CHECK(run.seq_len == 2048);
  CHECK(run.dropout == 0.0);
  CHECK(run.precision == "bf16");
  CHECK(run.attention == "eager");  // --transformer-impl local
  CHECK(run.gpus == 1);
  CHECK(run.gpus_per_node == 1);
  CHECK(run.tp == 1);
  CHECK(run.dp == 1);
  CHECK(run.micro_batch == 4);
  CHECK(run.global_batch == 32);
  CHECK(run.zero == 1);  // --use-distributed-optimizer
  CHECK(run.recompute == "none");
  CHECK(r.steps_used == 20);
  CHECK(run.published_memory_bytes == doctest::Approx(26017.78 * 1048576.0));
  CHECK(r.notes.empty());  // GELU, LayerNorm, learned positions, biases: the gpt form exactly
}

TEST_CASE("a Llama-style, GQA, Transformer Engine, fp8 dump on 64 GPUs") {
  const auto log = log_with("parasim_llama_dump.log",
                            "  world_size ...................................... 64\n"
                            "  num_layers ...................................... 32\n"
                            "  hidden_size ..................................... 4096\n"
                            "  ffn_hidden_size ................................. 14336\n"
                            "  num_attention_heads ............................. 32\n"
                            "  group_query_attention ........................... True\n"
                            "  num_query_groups ................................ 8\n"
                            "  seq_length ...................................... 8192\n"
                            "  vocab_size ...................................... 128256\n"
                            "  make_vocab_size_divisible_by .................... 128\n"
                            "  swiglu .......................................... True\n"
                            "  normalization ................................... RMSNorm\n"
                            "  position_embedding_type ......................... rope\n"
                            "  add_bias_linear ................................. False\n"
                            "  attention_dropout ............................... 0.0\n"
                            "  hidden_dropout .................................. 0.0\n"
                            "  tensor_model_parallel_size ...................... 4\n"
                            "  pipeline_model_parallel_size .................... 2\n"
                            "  virtual_pipeline_model_parallel_size ............ 4\n"
                            "  sequence_parallel ............................... True\n"
                            "  micro_batch_size ................................ 1\n"
                            "  global_batch_size ............................... 128\n"
                            "  use_distributed_optimizer ....................... True\n"
                            "  overlap_grad_reduce ............................. True\n"
                            "  recompute_granularity ........................... selective\n"
                            "  recompute_modules ............................... ['mlp', 'core_attn']\n"
                            "  transformer_impl ................................ transformer_engine\n"
                            "  bf16 ............................................ True\n"
                            "  fp8 ............................................. hybrid\n");
  const auto r = megatron_log_run(log, {"h100-sxm5-80gb", 8, 400.0});
  const auto& run = r.run;
  CHECK(run.arch == "llama");
  CHECK(run.kv_heads == 8);
  CHECK(run.vocab == 128512);  // 128256 up to a multiple of 128 x tp 4
  CHECK(run.tp == 4);
  CHECK(run.pp == 2);
  CHECK(run.vpp == 4);
  CHECK(run.dp == 8);  // 64 / (4 x 2)
  CHECK(run.sp == true);
  CHECK(run.recompute == "selective");
  CHECK(run.recompute_modules == std::vector<std::string>{"mlp", "core_attn"});
  CHECK(run.precision == "fp8");
  CHECK(run.attention == "flash");
  CHECK(run.overlap_grad_reduce == true);
  CHECK(run.gpus_per_node == 8);
  CHECK(run.nic_gbps_per_gpu == 400.0);
  CHECK(run.measured_iteration_s == doctest::Approx(2.0));
  CHECK(r.notes.empty());
}

TEST_CASE("what the row form cannot say is an error at the argument's line, or a note") {
  const auto uneven = log_with("parasim_uneven_dump.log",
                               "  world_size ...................................... 12\n"
                               "  tensor_model_parallel_size ...................... 8\n");
  try {
    megatron_log_run(uneven, {"h100-sxm5-80gb", 8, std::nullopt});
    FAIL("12 GPUs under tp 8 should not read");
  } catch (const InputError& e) {
    CHECK(e.where().line == 2);
    CHECK(e.key_path() == "world_size");
  }
  const auto fp32 = log_with("parasim_fp32_dump.log", kTinyDump + "  bf16 ............................................ False\n");
  CHECK_THROWS_WITH_AS(megatron_log_run(fp32, {"h100-sxm5-80gb", 8, std::nullopt}), doctest::Contains("fp32 training"), InputError);
  const auto huge = log_with("parasim_huge_dump.log",
                             "  world_size ...................................... 1\n"
                             "  micro_batch_size ................................ 1\n"
                             "  global_batch_size ............................... 1\n"
                             "  num_layers ...................................... 4294967297\n");
  CHECK_THROWS_WITH_AS(megatron_log_run(huge, {"h100-sxm5-80gb", 8, std::nullopt}), doctest::Contains("out of range"), InputError);
  const auto modules = log_with("parasim_modules_dump.log", kTinyDump +
                                                               "  recompute_granularity ........................... selective\n"
                                                               "  recompute_modules ............................... ['qkv']\n");
  CHECK_THROWS_WITH_AS(megatron_log_run(modules, {"h100-sxm5-80gb", 8, std::nullopt}), doctest::Contains("'qkv' is not a module"), InputError);
  const auto rope_gpt = log_with("parasim_rope_gpt_dump.log", kTinyDump +
                                                                  "  position_embedding_type ......................... rope\n"
                                                                  "  add_bias_linear ................................. True\n"
                                                                  "  bf16 ............................................ True\n");
  const auto r = megatron_log_run(rope_gpt, {"h100-sxm5-80gb", 8, std::nullopt});
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] == "position_embedding_type rope: the gpt form's positions are priced");
}
