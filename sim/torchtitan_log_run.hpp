#pragma once
// A torchtitan training log as a measured run (sim/log_run.hpp): the model's arguments give the
// Llama model (torchtitan's FFN width rule), the device mesh the plan (FSDP over dp_shard, HSDP's
// replicas, TP with sequence parallelism, PP, CP), the training-start line the batch and sequence
// length; the steady step time is global batch × sequence / (tps × GPUs) over the steady step lines,
// and the peak the highest max reserved the step lines print.
#include "calibrate/torchtitan_log.hpp"
#include "sim/log_run.hpp"

namespace parasim::sim {

/// The run a log describes. Throws InputError at the line for what the row form cannot express (a
/// mesh dimension it does not know, a model without dim, n_layers or n_heads).
LogRun torchtitan_log_run(const calibrate::TorchtitanLog& log, const LogCluster& cluster);

}  // namespace parasim::sim
