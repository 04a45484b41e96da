// What the user pins (`--fix`, `--max-pp`, `--framework`), read and applied (planner/search.hpp).
#include "planner/search.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "planner/deepspeed_rules.hpp"
#include "planner/megatron_rules.hpp"
#include "planner/torchtitan_rules.hpp"

namespace parasim::planner {

using workload::Plan;

std::optional<std::string> Constraints::set(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos) return fmt::format("'{}' is not key=value", assignment);
  const std::string key = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  if (key == "schedule") {
    if (const auto s = workload::schedule_from_name(value)) {
      schedule = *s;
      return std::nullopt;
    }
    std::vector<std::string_view> names;
    for (auto s : workload::kAllSchedules) names.push_back(workload::schedule_name(s));
    return fmt::format("schedule: '{}' is not one of {}", value, fmt::join(names, ", "));
  }
  if (key == "ep_comm") {
    if (value != "on" && value != "off") return fmt::format("ep_comm: '{}' is not on or off", value);
    ep_comm = value == "on";
    return std::nullopt;
  }
  if (key == "cp_kind") {
    for (auto k : {workload::CpKind::ring, workload::CpKind::ulysses}) {
      if (workload::cp_kind_name(k) == value) {
        cp_kind = k;
        return std::nullopt;
      }
    }
    return fmt::format("cp_kind: '{}' is not ring or ulysses", value);
  }
  const std::map<std::string, std::optional<int>*> numbers{{"tp", &tp}, {"pp", &pp}, {"dp", &dp}, {"cp", &cp}, {"ep", &ep},
                                                           {"vpp", &vpp}, {"mb", &micro_batch}, {"micro_batch", &micro_batch}, {"zero", &zero}};
  const auto it = numbers.find(key);
  if (it == numbers.end()) return fmt::format("unknown key '{}' (tp, pp, dp, cp, ep, vpp, mb, zero, schedule, cp_kind, ep_comm)", key);
  std::size_t used = 0;
  int n = -1;
  try {
    n = std::stoi(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || n < (key == "zero" ? 0 : 1) || (key == "zero" && n > 3)) {
    return fmt::format("{}: '{}' is not {}", key, value, key == "zero" ? "a ZeRO stage 0-3" : "a positive integer");
  }
  *it->second = n;
  return std::nullopt;
}

bool Constraints::set_framework(const std::string& name) {
  if (name == "any") framework = Framework::any;
  else if (name == "megatron") framework = Framework::megatron;
  else if (name == "deepspeed") framework = Framework::deepspeed;
  else if (name == "torchtitan") framework = Framework::torchtitan;
  else return false;
  return true;
}

bool Constraints::allows(const Plan& p) const {
  auto same = [](const std::optional<int>& want, int have) { return !want || *want == have; };
  if (framework == Framework::megatron && megatron_structure_problem(p)) return false;
  if (framework == Framework::deepspeed && deepspeed_plan_problem(p)) return false;
  if (framework == Framework::torchtitan && torchtitan_plan_problem(p)) return false;
  return same(tp, p.tp) && same(pp, p.pp) && same(dp, p.dp) && same(cp, p.cp) && same(ep, p.ep) && same(vpp, p.vpp) &&
         same(micro_batch, p.micro_batch) && same(zero, p.zero) && (!schedule || *schedule == p.schedule) && (!ep_comm || *ep_comm == p.overlap.ep_comm) &&
         (!cp_kind || p.cp == 1 || *cp_kind == p.cp_kind) && (max_pp == 0 || p.pp <= max_pp) && (max_tp == 0 || p.tp <= max_tp);
}

}  // namespace parasim::planner
