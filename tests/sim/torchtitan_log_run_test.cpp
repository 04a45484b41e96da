#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "sim/torchtitan_log_run.hpp"

using namespace parasim;
using namespace parasim::sim;

TEST_CASE("a torchtitan log as a run: torchtitan's Llama FFN rule, FSDP over the mesh, the step time from tps") {
  const auto r = torchtitan_log_run(calibrate::read_torchtitan_log("tests/data/logs/torchtitan/llama3_8b_fsdp8.log"), {"h100-96gb-500w", 8, 400.0});
  const auto& run = r.run;
  CHECK(run.id == "llama3_8b_fsdp8");
  CHECK(run.source.find("torchtitan") != std::string::npos);  // validate's fill applies torchtitan's defaults
  CHECK(run.arch == "llama");
  CHECK(run.layers == 32);
  CHECK(run.hidden == 4096);
  CHECK(run.kv_heads == 8);
  CHECK(run.ffn_hidden == 14336);  // int(1.3 x int(2 x 4 x 4096 / 3)) = 14198, up to a multiple of 1024
  CHECK(run.vocab == 128256);
  CHECK(run.gpus == 8);
  CHECK(run.dp == 8);
  CHECK(run.zero == 3);
  CHECK(run.micro_batch == 2);  // the local batch at once
  CHECK(run.global_batch == 16);
  CHECK(run.recompute == "selective");
  CHECK(run.precision == "bf16");
  // 16 x 8192 tokens over 8 GPUs at the steady median tps (5,762: the steps after the first third).
  CHECK(r.steps_used == 8);
  CHECK(run.measured_iteration_s == doctest::Approx(16.0 * 8192 / (5762.0 * 8)));
  CHECK(run.published_memory_bytes == doctest::Approx(82.40 * 1073741824.0));
  CHECK(run.published_memory_kind == PrintedMemory::reserved);

  const auto big = torchtitan_log_run(calibrate::read_torchtitan_log("tests/data/logs/torchtitan/llama3_70b_fsdp32_tp8_float8.log"), {"h100-96gb-500w", 8, 400.0});
  CHECK(big.run.gpus == 256);
  CHECK(big.run.tp == 8);
  CHECK(big.run.sp == true);
  CHECK(big.run.dp == 32);
  CHECK(big.run.ffn_hidden == 28672);
  CHECK(big.run.precision == "fp8");
  CHECK(big.run.recompute == "full");
  CHECK(big.run.micro_batch == 16);
  REQUIRE(big.notes.size() == 1);
  CHECK(big.notes[0].find("torch.compile") == 0);
}

TEST_CASE("a torchtitan model whose FFN rule gives no width parasim builds is an error at its line") {
  const auto path = std::filesystem::temp_directory_path() / "tt_wide_ffn.log";
  std::ofstream(path) << "Building 1-D device mesh with ['dp_shard'], [8]\n"
                         "Building llama3 8B with TransformerModelArgs(dim=4096, n_layers=32, n_heads=32, vocab_size=128256, ffn_dim_multiplier=1e30)\n"
                         "Training starts at step 1, with local batch size 2, global batch size 16, sequence length 8192\n"
                         "step: 10  loss: 9.8  memory: 82.40GiB(86.74%)  tps: 5,748\n";
  try {
    torchtitan_log_run(calibrate::read_torchtitan_log(path), {"h100-96gb-500w", 8, std::nullopt});
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("tt_wide_ffn.log:2:1: error: ffn_dim_multiplier: gives an FFN width of") != std::string::npos);
  }
}

TEST_CASE("a one-GPU torchtitan run (0-D mesh, AMP) is dp 1 without FSDP; its step time is the tokens over the steady tps") {
  const auto r = torchtitan_log_run(calibrate::read_torchtitan_log("tests/data/logs/torchtitan/h200_llama3_1b_b4_s4096.log"), {"h200-sxm-141gb", 8, std::nullopt});
  const auto& run = r.run;
  CHECK(run.gpus == 1);
  CHECK(run.dp == 1);
  CHECK(run.tp == 1);
  CHECK(run.zero == 0);
  CHECK(run.micro_batch == 4);
  CHECK(run.global_batch == 4);
  CHECK(run.seq_len == 4096);
  CHECK(run.layers == 16);
  CHECK(run.hidden == 2048);
  CHECK(run.kv_heads == 8);
  CHECK(run.ffn_hidden == 8192);  // int(1.5 x int(2 x 4 x 2048 / 3)) = 8191, up to a multiple of 256
  CHECK(run.recompute == "none");
  // Steps 11-30 (after the first third): the two middle of their 20 tps are 57,507 and 57,508.
  CHECK(r.steps_used == 20);
  CHECK(run.measured_iteration_s == doctest::Approx(4.0 * 4096 / 57507.5).epsilon(1e-4));
  CHECK(run.published_memory_bytes == doctest::Approx(43.34 * 1073741824.0));
}

TEST_CASE("a qwen3 model of torchtitan v0.2.2: its stated MLP width and head width, tied embeddings, no experts while moe_enabled is false") {
  const auto r = torchtitan_log_run(calibrate::read_torchtitan_log("tests/data/confirm/h200-torchtitan/plan-02/node0.log"), {"h200-sxm-141gb", 8, std::nullopt});
  const auto& run = r.run;
  CHECK(run.arch == "llama");
  CHECK(run.ffn_hidden == 6144);  // hidden_dim, not llama3's rule (which gives 5632)
  CHECK(run.head_dim == 128);     // 16 heads of 128 on a 2048 hidden
  CHECK(run.tied_embeddings == true);
  CHECK_FALSE(run.experts.has_value());
  CHECK(run.micro_batch == 4);  // 8 over 1 GPU in 2 accumulation steps
  CHECK(run.vocab == 151936);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0] == "qwen3 1.7B: priced in the llama form (SwiGLU, RMSNorm, RoPE); its q/k norms are not priced");
}
