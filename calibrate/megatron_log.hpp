#pragma once
// What a Megatron-LM training log states: its argument dump, the step times it printed and its memory
// lines. Megatron-LM prints all three on rank 0 (megatron/training/arguments.py `_print_args`,
// training.py `training_log` and `report_memory`):
//
//   ------------------------ arguments ------------------------
//     num_layers ...................................... 12
//   -------------------- end of arguments ---------------------
//    [2026-11-26 01:37:23] iteration   25/   30 | ... | elapsed time per iteration (ms): 1271.0 | ...
//   [Rank 0] (after 1 iterations) memory (MB) | allocated: 12147.71 | max allocated: 20875.31 | reserved: ...
//
// A step line's time is the mean over the log interval that ends at its iteration. Lines are matched
// anywhere in a line, so a log with launcher prefixes (srun's "0: ", timestamps) reads the same.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace parasim::calibrate {

struct LoggedArgument {
  std::string value;  ///< as printed: "12", "True", "None", "torch.bfloat16", "AttnBackend.auto"
  int line = 0;
};

struct LoggedStep {
  long iteration = 0;  ///< the last iteration of the interval the line averages
  double seconds = 0;  ///< elapsed time per iteration
  int line = 0;
};

/// torch.cuda memory statistics as Megatron-LM prints them, in MiB ("MB" = 2^20 bytes there).
struct LoggedMemory {
  double allocated = 0, max_allocated = 0, reserved = 0, max_reserved = 0;
  int line = 0;
};

/// The first line that says why the run stopped, where one does.
struct LoggedFailure {
  std::filesystem::path file;
  int line = 0;
  std::string text;  ///< the line, cut at 200 characters
};

struct MegatronLog {
  std::filesystem::path file;  ///< the first of the files read
  std::map<std::string, LoggedArgument> arguments;
  std::vector<LoggedStep> steps;
  std::vector<LoggedMemory> memory;
  std::optional<LoggedFailure> failure;
  /// Megatron-LM warned that it found neither Transformer Engine nor apex and fell back to torch.optim's
  /// Adam (foreach: its step holds a copy of the second moments).
  bool torch_optimizer = false;

  /// The value of an argument, or nullopt where the dump lacks it or prints None.
  std::optional<std::string> argument(const std::string& name) const;
};

/// Reads a Megatron-LM log. Throws InputError (FILE:LINE:COL) for a file that cannot be read, a log
/// without an argument dump, or one without any "elapsed time per iteration" line.
MegatronLog read_megatron_log(const std::filesystem::path& file);

/// One run's logs read as one: a multi-node run's node logs, where rank 0 printed the argument dump and
/// the last rank the step lines. The errors name the first file (no dump) or the last (no step line),
/// and say where the run failed first when a line says so (an exception, out of memory).
MegatronLog read_megatron_logs(const std::vector<std::filesystem::path>& files);

/// The steady step time: the median of the step lines after the first third (at least one line
/// dropped when there are two or more), so that warm-up, first-step allocation and a profiled or
/// checkpointing step do not count. `used` is the number of lines the median is over.
double steady_step_seconds(const MegatronLog& log, int* used = nullptr);

/// The highest "max allocated" of the memory lines (MiB), where the log has any.
std::optional<double> peak_allocated_mib(const MegatronLog& log);

}  // namespace parasim::calibrate
