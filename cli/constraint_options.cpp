#include "cli/constraint_options.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace parasim::cli {

void ConstraintOptions::add_to(CLI::App* cmd, const std::string& scope) {
  cmd->add_option("--fix", fix,
                  fmt::format("pin a dimension in {}, e.g. --fix tp=8 --fix schedule=zb-h1 (tp, pp, dp, cp, ep, vpp, mb, zero, schedule, cp_kind, ep_comm)", scope));
  cmd->add_option("--framework", framework,
                  fmt::format("what the plans of {} must launch on: any (the whole space), megatron (1F1B and interleaved, no FSDP with a pipeline), deepspeed (Megatron-DeepSpeed: 1F1B, "
                              "ZeRO-1 with a pipeline, Ulysses for cp), torchtitan (v0.2.2: FSDP2 or DDP alone, ring cp, its schedules; priced with its kernels: "
                              "FlashAttention-2, PyTorch's loss, op-level checkpointing)",
                              scope))
      ->capture_default_str();
  cmd->add_option("--max-pp", max_pp, fmt::format("largest pipeline degree {} considers", scope))->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--max-tp", max_tp, fmt::format("largest tensor-parallel degree {} considers", scope))->check(CLI::Range(1, 1 << 20));
}

planner::Constraints ConstraintOptions::parse() const {
  planner::Constraints c;
  for (const auto& f : fix) {
    if (const auto problem = c.set(f)) throw InputError({"", 0, 0}, "--fix", *problem);
  }
  if (!c.set_framework(framework)) throw InputError({"", 0, 0}, "--framework", fmt::format("'{}' is not one of any, megatron, deepspeed, torchtitan", framework));
  c.max_pp = max_pp;
  c.max_tp = max_tp;
  return c;
}

}  // namespace parasim::cli
