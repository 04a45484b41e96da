#pragma once
// What a NeMo training log states (rank 0's stdout): the experiment configuration that NeMo's
// Megatron training scripts and the NeMo Framework Launcher echo as YAML before training, the padded
// vocabulary, and the step time NeMo's experiment manager logs after every step
// (`exp_manager.log_step_timing`, on by default), in the progress bar (NeMo 1.x) or in the step
// line (NeMo 2.0):
//
//   [NeMo I 2024-07-18 10:02:11 megatron_gpt_pretraining:37]
//
//       ************** Experiment configuration ***********
//   [NeMo I 2024-07-18 10:02:11 megatron_gpt_pretraining:38]
//       trainer:
//         devices: 8
//       model:
//         tensor_model_parallel_size: 2
//   [NeMo I 2024-07-18 10:02:40 tokenizer_utils:...] Padded vocab_size: 50304, original vocab_size: 50257, dummy tokens: 47.
//   Epoch 0: :   3%|▎  | 10/300 [00:30<14:30, reduced_train_loss=9.84, global_step=9.000, consumed_samples=20480.0, train_step_timing in s=2.81]
//   Training epoch 0, iteration 9/299 | lr: 1e-05 | global_step: 9 | reduced_train_loss: 9.84 | train_step_timing in s: 2.81
//
// The configuration's continuation lines carry NeMo's formatter indent (or none); a progress bar
// redraws on one line with carriage returns, so every redraw is read and a step counted once. Lines
// are matched after a launcher's rank prefix ("0: ").
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/logged_value.hpp"

namespace parasim::calibrate {

struct NemoStep {
  long step = 0;        ///< global_step, where the line prints it; else the count of steps before it
  double seconds = 0;   ///< train_step_timing in s
  int line = 0;
};

struct NemoLog {
  std::filesystem::path file;
  /// The configuration's scalars by dotted path ("model.tensor_model_parallel_size", "trainer.devices").
  std::map<std::string, LoggedValue> config;
  int config_line = 0;  ///< where the configuration starts
  std::optional<LoggedValue> padded_vocab;
  std::vector<NemoStep> steps;

  /// A configuration value, or nullopt where it is absent or null.
  std::optional<std::string> value(const std::string& path) const;
};

/// Whether a file reads as a NeMo log (an experiment configuration or a train_step_timing before any
/// Megatron-LM argument dump).
bool looks_like_nemo_log(const std::filesystem::path& file);

/// Reads a NeMo log. Throws InputError (FILE:LINE:COL) for a file that cannot be read, a log without
/// the experiment configuration (or whose YAML does not parse), or one without a step timing.
NemoLog read_nemo_log(const std::filesystem::path& file);

}  // namespace parasim::calibrate
