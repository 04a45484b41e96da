#pragma once
// What a torchtitan training log states (rank 0's stdout, torchtitan's own logger lines): the model's
// arguments as it builds them, the device mesh, the checkpointing, compile and Float8 choices, the
// batch and sequence length, and a line per logged step:
//
//   Building llama3 8B with TransformerModelArgs(dim=4096, n_layers=32, n_heads=32, n_kv_heads=8, ...)
//   Building 2-D device mesh with ['dp_shard', 'tp'], [32, 8]      (one GPU: "Building 0-D device mesh with [], []")
//   Applied selective activation checkpointing to the model
//   Training starts at step 1, with local batch size 2, global batch size 16, sequence length 8192, ...
//   step: 10  loss:  7.8  memory: 76.54GiB(80.51%)  tps: 5,762  tflops: 333.60  mfu: 33.73%
//
// A step line's tps is tokens per second per GPU over the log interval that ends at its step (older
// versions print wps); its memory is torch.cuda.max_memory_reserved. Lines are matched anywhere in a
// line, so launcher and logger prefixes ("[rank0]:[titan] 2025-01-10 12:00:00,000 - root - INFO - ")
// read the same.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/logged_value.hpp"

namespace parasim::calibrate {

struct TorchtitanStep {
  long step = 0;
  double tokens_per_s_per_gpu = 0;
  std::optional<double> memory_gib;  ///< max reserved
  int line = 0;
};

struct TorchtitanLog {
  std::filesystem::path file;
  std::string model_name;                          ///< "llama3 8B"
  std::map<std::string, LoggedValue> model_args;   ///< the model arguments' repr, by field
  std::vector<std::pair<std::string, int>> mesh;   ///< device mesh dimensions (dp_shard, tp, ...) and sizes; none on one GPU
  int mesh_line = 0;                               ///< 0: the log printed no mesh
  std::string activation_checkpoint = "none";      ///< none, selective or full
  bool compiled = false, float8 = false;
  std::optional<int> local_batch, global_batch, seq_len, gradient_accumulation;
  int batch_line = 0;
  std::vector<TorchtitanStep> steps;

  /// A model argument, or nullopt where the repr lacks it or prints None.
  std::optional<std::string> model_arg(const std::string& name) const;
};

/// The GPUs the mesh spans: the product of its dimensions (dp_cp, ep and etp are views of the
/// others, not counted); 1 for a 0-D mesh.
double torchtitan_world_size(const TorchtitanLog& log);

/// The steady step time: global batch x sequence tokens over the world's GPUs at each step line's tps
/// (per GPU), the median after the first third (steady_steps.hpp). `used`: the steps it is over.
double torchtitan_step_seconds(const TorchtitanLog& log, int* used = nullptr);

/// The highest "memory:" (max reserved) of the step lines, GiB; nullopt when none prints one.
std::optional<double> torchtitan_peak_reserved_gib(const TorchtitanLog& log);

/// Whether a file reads as a torchtitan log (a device-mesh or training-start line before any
/// Megatron-LM argument dump).
bool looks_like_torchtitan_log(const std::filesystem::path& file);

/// Reads a torchtitan log. Throws InputError (FILE:LINE:COL) for a file that cannot be read, one
/// without the model's arguments, the device mesh or the training-start line, or one without a step line.
TorchtitanLog read_torchtitan_log(const std::filesystem::path& file);

}  // namespace parasim::calibrate
