#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "calibrate/nemo_log.hpp"
#include "calibrate/torchtitan_log.hpp"
#include "core/error.hpp"
#include "tests/calibrate/log_files.hpp"
#include "sim/nemo_log_run.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {

using test::write_log;

// NeMo's formatter: the record's header, then the message's lines indented by four.
const std::string kConfig =
    "[NeMo I 2024-07-18 10:02:11 megatron_gpt_pretraining:37] \n"
    "    \n"
    "    ************** Experiment configuration ***********\n"
    "[NeMo I 2024-07-18 10:02:11 megatron_gpt_pretraining:38] \n"
    "    trainer:\n"
    "      devices: 8\n"
    "      num_nodes: 2\n"
    "      precision: bf16\n"
    "    model:\n"
    "      micro_batch_size: 2\n"
    "      global_batch_size: 64\n"
    "      tensor_model_parallel_size: 2\n"
    "      pipeline_model_parallel_size: 2\n"
    "      virtual_pipeline_model_parallel_size: null\n"
    "      encoder_seq_length: 4096\n"
    "      num_layers: 8\n"
    "      hidden_size: 1024\n"
    "      num_attention_heads: 16\n"
    "      num_query_groups: 4\n"
    "      sequence_parallel: true\n"
    "      activation: fast-swiglu\n"
    "      normalization: rmsnorm\n"
    "      position_embedding_type: rope\n"
    "      transformer_engine: true\n"
    "      activations_checkpoint_granularity: selective\n"
    "      optim:\n"
    "        name: distributed_fused_adam\n"
    "        overlap_grad_sync: true\n"
    "[NeMo I 2024-07-18 10:02:40 megatron_base_model:595] Padded vocab_size: 32256, original vocab_size: 32000, dummy tokens: 256.\n";

}  // namespace

TEST_CASE("a NeMo log: the experiment configuration by dotted path, each value at its own line") {
  const auto log = read_nemo_log(write_log("nemo_config.log", kConfig + "Training epoch 0, iteration 0/9 | global_step: 0 | train_step_timing in s: 1.5\n"));
  CHECK(log.config_line == 5);
  CHECK(log.value("trainer.devices") == "8");
  CHECK(log.config.at("trainer.devices").line == 6);
  CHECK(log.value("model.optim.name") == "distributed_fused_adam");
  CHECK(log.config.at("model.optim.overlap_grad_sync").line == 28);
  // null is absent
  CHECK_FALSE(log.value("model.virtual_pipeline_model_parallel_size").has_value());
  REQUIRE(log.padded_vocab.has_value());
  CHECK(log.padded_vocab->value == "32256");
  CHECK(log.padded_vocab->line == 29);
  CHECK(looks_like_nemo_log(log.file));
  CHECK_FALSE(looks_like_nemo_log("tests/data/logs/megatron/h100_gpt0.7b_mb4.log"));
  CHECK_FALSE(looks_like_nemo_log("tests/data/logs/torchtitan/llama3_8b_fsdp8.log"));
  CHECK_FALSE(looks_like_torchtitan_log("tests/data/logs/nemo/gpt3_5b_64g.log"));
}

TEST_CASE("NeMo's step timing: a progress bar's redraws on one line, each step once, and NeMo 2.0's step lines") {
  // tqdm redraws with carriage returns; a redraw of the same global_step replaces the one before.
  const std::string bar = "Epoch 0: :   0%|  | 0/3 [00:00<?]\r"
                          "Epoch 0: :  33%|# | 1/3 [00:09<00:18, reduced_train_loss=10.9, global_step=0.000, train_step_timing in s=9.01]\r"
                          "Epoch 0: :  33%|# | 1/3 [00:09<00:18, reduced_train_loss=10.9, global_step=0.000, train_step_timing in s=9.02]\r"
                          "Epoch 0: :  67%|##| 2/3 [00:12<00:03, reduced_train_loss=10.1, global_step=1.000, train_step_timing in s=2.81]\r"
                          "Epoch 0: : 100%|##| 3/3 [00:15<00:00, reduced_train_loss=9.9, global_step=2.000, train_step_timing in s=2.79]\n";
  const auto log = read_nemo_log(write_log("nemo_bar.log", "0: " + kConfig + "0: " + bar));
  REQUIRE(log.steps.size() == 3);
  CHECK(log.steps[0].seconds == 9.02);
  CHECK(log.steps[1].step == 1);
  CHECK(log.steps[2].seconds == 2.79);
  CHECK(log.steps[2].line == 30);
  CHECK(log.value("model.num_layers") == "8");  // after the launcher's "0: "

  const auto two = read_nemo_log(write_log("nemo_2.log", kConfig +
                                                             "Training epoch 0, iteration 0/99 | lr: 1e-05 | global_step: 0 | reduced_train_loss: 10.2 | train_step_timing in s: 3.5\n"
                                                             "Training epoch 0, iteration 1/99 | lr: 2e-05 | global_step: 1 | reduced_train_loss: 10.1 | train_step_timing in s: 1.25\n"));
  REQUIRE(two.steps.size() == 2);
  CHECK(two.steps[1].seconds == 1.25);
}

TEST_CASE("a NeMo log's run: plan, model, precision and optimizer from the configuration, the steady step time") {
  const auto log = read_nemo_log(write_log("nemo_run.log", kConfig + "global_step: 0 | train_step_timing in s: 9\n" +
                                                               "global_step: 1 | train_step_timing in s: 2\n"
                                                               "global_step: 2 | train_step_timing in s: 2.5\n"
                                                               "global_step: 3 | train_step_timing in s: 2.25\n"));
  const auto out = sim::nemo_log_run(log, {"h100-sxm5-80gb", 8, 400.0});
  const auto& r = out.run;
  CHECK(r.gpus == 16);
  CHECK(r.tp == 2);
  CHECK(r.pp == 2);
  CHECK(r.dp == 4);
  CHECK(r.sp == true);
  CHECK_FALSE(r.vpp.has_value());
  CHECK(r.micro_batch == 2);
  CHECK(r.global_batch == 64);
  CHECK(r.seq_len == 4096);
  CHECK(r.arch == "llama");
  CHECK(r.kv_heads == 4);
  CHECK(r.vocab == 32256);  // the padded size NeMo printed
  CHECK(r.precision == "bf16");
  CHECK(r.attention == "flash");
  CHECK(r.zero == 1);  // distributed_fused_adam shards the optimizer state
  CHECK(r.overlap_grad_reduce == true);
  CHECK(r.overlap_param_gather == false);
  CHECK(r.recompute == "selective");
  CHECK(r.dropout == 0.1);  // NeMo's default where the configuration is silent
  CHECK_FALSE(r.published_memory_bytes.has_value());
  // The first of four steps dropped as warm-up: the median of 2, 2.5, 2.25.
  CHECK(r.measured_iteration_s == 2.25);
  CHECK(out.steps_used == 3);
}

TEST_CASE("a NeMo log that cannot be priced is an error at the line that says why") {
  auto error_of = [](const std::string& name, const std::string& text) {
    try {
      const auto log = read_nemo_log(write_log(name, text));
      (void)sim::nemo_log_run(log, {"h100-sxm5-80gb", 8, {}});
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string step = "global_step: 0 | train_step_timing in s: 1.5\n";
  CHECK(error_of("nemo_none.log", step).find("nemo_none.log:1:1: error: no experiment configuration") != std::string::npos);
  CHECK(error_of("nemo_nostep.log", kConfig).find("nemo_nostep.log:29:1: error: no step timing ('train_step_timing in s') in the log") != std::string::npos);
  // A count that is not one, at its line; a huge one does not wrap.
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = kConfig;
    s.replace(s.find(from), from.size(), to);
    return s + step;
  };
  CHECK(error_of("nemo_tp.log", replaced("tensor_model_parallel_size: 2", "tensor_model_parallel_size: 99999999999"))
            .find("nemo_tp.log:12:1: error: model.tensor_model_parallel_size: 99999999999 is not a whole number between 1 and 1048576") != std::string::npos);
  CHECK(error_of("nemo_prec.log", replaced("precision: bf16", "precision: 32")).find("nemo_prec.log:8:1: error: trainer.precision: '32': fp32 training") != std::string::npos);
  CHECK(error_of("nemo_gpus.log", replaced("devices: 8", "devices: 7")).find("model.tensor_model_parallel_size: 14 GPUs are not a multiple of tp 2 x pp 2 x cp 1") != std::string::npos);
  CHECK(error_of("nemo_flag.log", replaced("sequence_parallel: true", "sequence_parallel: maybe")).find("nemo_flag.log:20:1: error: model.sequence_parallel: 'maybe' is not true or false") != std::string::npos);
  // YAML that does not parse: at the file's line.
  CHECK(error_of("nemo_yaml.log", replaced("      num_layers: 8\n", "      num_layers: [8\n")).find("nemo_yaml.log:") != std::string::npos);
  CHECK(error_of("nemo_yaml.log", replaced("      num_layers: 8\n", "      num_layers: [8\n")).find("the experiment configuration is not YAML") != std::string::npos);
}
