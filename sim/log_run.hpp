#pragma once
// A training log as a measured run (the row form of sim/measured_run.hpp), whichever stack wrote it
// (sim/megatron_log_run.hpp, sim/torchtitan_log_run.hpp): `calibrate from-log` prices it exactly as
// `validate` prices a published row. A log does not state the hardware or the fabric: the cluster
// comes from the user.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/measured_run.hpp"

namespace parasim::sim {

/// What a log cannot say about where it ran.
struct LogCluster {
  std::string gpu;  ///< a bundled hardware name (h100-sxm5-80gb, …)
  int gpus_per_node = 8;
  std::optional<double> nic_gbps_per_gpu;
};

struct LogRun {
  MeasuredRun run;
  int steps_used = 0;  ///< step lines the measured time is the median of
  /// What the row form could only say approximately ("position_embedding_type rope: …").
  std::vector<std::string> notes;
};

/// A run named by its log: the file's stem as its id, family "log", the stack's name in its source
/// (so that validate's fill policy applies that stack's defaults).
LogRun log_run_named(const std::filesystem::path& file, std::string_view stack);
/// Where it ran, as the user says: the GPU, the node (no larger than the run) and the network.
void place_log_run(MeasuredRun& run, const LogCluster& cluster);


}  // namespace parasim::sim
