#pragma once
// A NeMo training log as a measured run (sim/log_run.hpp): the experiment configuration gives the
// model, the plan, the precision and the optimizer (NeMo's distributed_fused_adam shards its state:
// ZeRO-1), the padded-vocabulary line the vocabulary; the steady step time is the median of the
// train_step_timing values after warm-up. NeMo prints no peak memory by default.
#include "calibrate/nemo_log.hpp"
#include "sim/log_run.hpp"

namespace parasim::sim {

/// The run a log describes. Throws InputError at the configuration's line for a value the row form
/// cannot express (fp32 training, GPUs that are not tp × pp × cp × dp, a count that is not one).
LogRun nemo_log_run(const calibrate::NemoLog& log, const LogCluster& cluster);

}  // namespace parasim::sim
