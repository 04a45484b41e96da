#include "planner/deepspeed_rules.hpp"

#include <fmt/format.h>

namespace parasim::planner {

using workload::Plan;
using workload::Schedule;

std::optional<std::string> deepspeed_plan_problem(const Plan& p) {
  if (p.pp > 1 && (p.vpp > 1 || p.schedule == Schedule::interleaved_1f1b)) {
    return std::string("DeepSpeed's pipeline engine has no interleaved schedule (virtual pipeline stages)");
  }
  if (p.pp > 1 && p.schedule != Schedule::one_f_one_b) {
    return fmt::format("DeepSpeed's pipeline engine runs 1F1B only, not {}", workload::schedule_name(p.schedule));
  }
  if (p.pp > 1 && p.zero >= 2) {
    return fmt::format("DeepSpeed's pipeline engine refuses ZeRO-{} with pipeline parallelism (ZeRO-1 at most)", p.zero);
  }
  if (p.cp > 1 && p.cp_kind != workload::CpKind::ulysses) {
    return std::string("DeepSpeed runs context parallelism as Ulysses (sequence_parallel_size), not ring attention");
  }
  return std::nullopt;
}

}  // namespace parasim::planner
