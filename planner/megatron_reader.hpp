#pragma once
// The way back: a plan from a Megatron-LM launch line, argument file or launch script (what
// `parasim plan --out` writes, and the older spellings a user's script may carry).
#include <string>
#include <vector>

#include "workload/model.hpp"
#include "workload/plan.hpp"

namespace parasim::planner {

struct MegatronReading {
  workload::Plan plan;
  std::vector<std::string> ignored;  ///< unknown flags skipped (only with ignore_unknown)
};

/// Reads Megatron-LM arguments: a plain argument list ("--tensor-model-parallel-size 8 ..."), or a
/// launch script (the arguments after pretrain_gpt.py, or the bash arrays it expands). Parallel
/// degrees, layout, batch, recompute, sharding (distributed optimizer, Megatron-FSDP) and overlaps
/// make the plan; model-shape flags must agree with the model; run flags (data, optimizer, logging)
/// are accepted. An unknown flag is an InputError naming it, unless ignore_unknown, which skips it
/// (and its values) and lists it. `where` names the source in errors ("--from-megatron-args").
MegatronReading read_megatron_arguments(const std::string& text, const workload::ModelSpec& model, int gpus, int seq_len, bool ignore_unknown = false,
                                        const std::string& where = "--from-megatron-args");

/// The same plan as Megatron-LM's arguments state it: an even split without explicit chunk sizes,
/// recompute as one granularity (a block pattern as method block), no SP without TP, no parameter-
/// gather overlap without the distributed optimizer, a sharding group spanning all data ranks as
/// none. The simulator prices both alike; the launched plan and the plan read back compare equal.
workload::Plan megatron_form(workload::Plan plan, const workload::ModelSpec& model);

}  // namespace parasim::planner
