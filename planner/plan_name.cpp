// A plan in one line, for tables and messages (planner/search.hpp).
#include "planner/search.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace parasim::planner {

using workload::Plan;

std::string layer_split(const std::vector<int>& chunk_layers, bool folded) {
  std::string out;
  for (std::size_t i = 0; i < chunk_layers.size();) {
    std::size_t j = i + 1;
    while (folded && j < chunk_layers.size() && chunk_layers[j] == chunk_layers[i]) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ",", chunk_layers[i]);
    if (j - i > 1) out += fmt::format("*{}", j - i);
    i = j;
  }
  return "[" + out + "]";
}

std::string plan_name(const Plan& p, bool fold_split) {
  std::string out = fmt::format("tp{}{}", p.tp, p.sp ? " sp" : "");
  if (p.cp > 1) out += fmt::format(" · cp{} {}", p.cp, workload::cp_kind_name(p.cp_kind));
  out += fmt::format(" · pp{}", p.pp);
  if (p.pp > 1) out += fmt::format("{} {}", p.vpp > 1 ? fmt::format(" vpp{}", p.vpp) : "", workload::schedule_text(p));
  if (!p.chunk_layers.empty()) out += fmt::format(" {}", layer_split(p.chunk_layers, fold_split));
  out += fmt::format(" · dp{}", p.dp);
  if (p.ep > 1) out += fmt::format(" ep{}{}", p.ep, p.overlap.ep_comm ? " a2a-overlap" : "");
  if (p.zero > 0) out += fmt::format(" zero{}", p.zero);
  if (p.zero_group > 0) out += fmt::format("/{}", p.zero_group);
  const auto order = workload::full_order(p.order);
  if (p.tp > 1 && p.dp > 1 && order.front() == workload::ParallelDim::dp) out += " (dp inner)";
  out += fmt::format(" · mb{}", p.micro_batch);
  if (const auto recompute = workload::recompute_text(p); recompute != "none") out += " · recompute " + recompute;
  return out;
}

}  // namespace parasim::planner
