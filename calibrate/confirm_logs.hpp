#pragma once
// What `parasim confirm` measured: each confirmed plan's logs (PLAN/node*.log, as its runners write
// them) read back, checked to be that plan's run, and ranked by measured time beside the predictions.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/torchtitan_log.hpp"

namespace parasim::calibrate {

/// A plan as `confirm` wrote it and predicted it.
struct ConfirmedPlan {
  std::string dir;   ///< its folder under the confirm folder: "plan-01"
  std::string plan;  ///< parasim's name of the plan
  double predicted_s = 0;
  double predicted_memory_mib = 0;
  /// Megatron-LM arguments (flag, value; value empty for a switch) the run's argument dump must show;
  /// under torchtitan, the job config's mesh degrees and batch (torchtitan_settings names them).
  std::vector<std::pair<std::string, std::string>> arguments;
  std::string framework = "megatron-lm";  ///< or "torchtitan"
};

struct ConfirmMeasurement {
  std::vector<std::filesystem::path> logs;
  std::optional<double> measured_s;     ///< the steady step time (calibrate/megatron_log.hpp, torchtitan_log.hpp)
  std::optional<double> peak_mib;       ///< the highest "max allocated" (torchtitan: "max reserved")
  int steps_used = 0;
  std::string problem;                  ///< why there is no measured time, or why it is not this plan's
};

struct ConfirmReading {
  std::vector<ConfirmMeasurement> measured;  ///< one per plan, in the plans' order
  int pairs = 0;     ///< pairs of measured plans the prediction orders
  int agreeing = 0;  ///< of them, ordered alike by prediction and measurement
  int tied = 0;      ///< pairs of measured plans predicted equally fast (kPredictedTie), not counted in pairs
  std::optional<std::size_t> fastest;  ///< the plan measured fastest
};

/// Predictions closer than this (relative) order nothing: a plan and its ZeRO-1 twin on one GPU run alike.
inline constexpr double kPredictedTie = 1e-4;

/// The argument dump's name of a flag: "--tensor-model-parallel-size" -> "tensor_model_parallel_size".
std::string argument_dest(const std::string& flag);

/// Why the dump does not show these arguments (the first that differs), or nullopt. Flags the dump
/// lacks and list values ("['p2p']") are not compared; numbers compare as numbers.
std::optional<std::string> argument_mismatch(const std::vector<std::pair<std::string, std::string>>& wanted,
                                             const std::vector<std::pair<std::string, std::string>>& dump);

/// What a torchtitan log shows of the settings `confirm` checks, by the job config's names: the mesh
/// degrees (data_parallel_shard_degree, ...; 1 where the mesh has no such dimension), local_batch_size
/// and seq_len.
std::vector<std::pair<std::string, std::string>> torchtitan_settings(const TorchtitanLog& log);

/// Reads every plan's logs under `dir`; a plan without logs, without step lines or whose dump is
/// another plan's has a problem and no measured time. Throws nothing for a plan's logs.
ConfirmReading read_confirmed(const std::vector<ConfirmedPlan>& plans, const std::filesystem::path& dir);

}  // namespace parasim::calibrate
