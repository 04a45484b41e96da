#pragma once
// A Megatron-LM training log as a measured run (the row form of sim/measured_run.hpp), so that
// `calibrate from-log` prices it exactly as `validate` prices a published row: the argument dump
// gives the model, the plan and the precision; the steady step time and the peak "max allocated" are
// the measurements. A log does not state the hardware or the fabric: the cluster comes from the user.
#include <optional>
#include <string>
#include <vector>

#include "calibrate/megatron_log.hpp"
#include "sim/log_run.hpp"

namespace parasim::sim {

/// The run a log describes. Throws InputError at the argument's line for a value the row form cannot
/// express (fp32 training, a world size that is not tp × pp × cp × dp).
LogRun megatron_log_run(const calibrate::MegatronLog& log, const LogCluster& cluster);

}  // namespace parasim::sim
