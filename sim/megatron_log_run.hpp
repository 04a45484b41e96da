#pragma once
// A Megatron-LM training log as a measured run (the row form of sim/measured_run.hpp), so that
// `calibrate from-log` prices it exactly as `validate` prices a published row: the argument dump
// gives the model, the plan and the precision; the steady step time and the peak "max allocated" are
// the measurements. A log does not state the hardware or the fabric: the cluster comes from the user.
#include <optional>
#include <string>
#include <vector>

#include "calibrate/megatron_log.hpp"
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

/// The run a log describes. Throws InputError at the argument's line for a value the row form cannot
/// express (fp32 training, a world size that is not tp × pp × cp × dp).
LogRun megatron_log_run(const calibrate::MegatronLog& log, const LogCluster& cluster);

}  // namespace parasim::sim
