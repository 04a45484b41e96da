#pragma once
// The Megatron-LM command line parasim writes and reads, in one table: every flag the launch writer
// prints, the older spellings the reader still accepts, and the run flags (data, optimizer,
// logging) a user's own launch line carries. The table is checked against Megatron-LM's own
// parser at kMegatronCommit (tests/launch).
#include <optional>
#include <span>
#include <string_view>

namespace parasim::planner {

/// The Megatron-LM commit whose arguments, checks and environment the launch files target.
inline constexpr std::string_view kMegatronCommit = "d98e8a64ddf34856e74b24714e3bedb2f5a39553";
inline constexpr std::string_view kMegatronCommitDate = "2026-08-22";

/// What a flag says, for the reader.
enum class FlagRole {
  plan,      ///< a parallel, batch, recompute or overlap setting: read into the plan
  model,     ///< the model's shape: checked against the scenario's model
  training,  ///< precision and kernels: read where the plan depends on them, else accepted
  run,       ///< data, optimizer, logging, checkpoints: accepted, not part of the plan
  legacy,    ///< an older spelling a current Megatron-LM no longer reads; still accepted by the reader
};

struct MegatronFlag {
  std::string_view name;  ///< "--tensor-model-parallel-size"
  bool takes_value;       ///< false for switches
  FlagRole role;
  /// Takes a list of values (argparse nargs), written as the words of one space-separated value.
  bool many = false;
};

/// Every flag of the table, sorted by name.
std::span<const MegatronFlag> megatron_flags();
/// The flag by name (without any "=value"), nullopt when parasim does not know it.
std::optional<MegatronFlag> megatron_flag(std::string_view name);

}  // namespace parasim::planner
