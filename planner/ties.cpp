#include "planner/ties.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tuple>

namespace parasim::planner {
namespace {

bool uneven(const workload::Plan& p) {
  return !p.chunk_layers.empty() && std::adjacent_find(p.chunk_layers.begin(), p.chunk_layers.end(), std::not_equal_to<>()) != p.chunk_layers.end();
}

int model_parallel_dimensions(const workload::Plan& p) { return (p.tp > 1) + (p.pp > 1) + (p.cp > 1) + (p.ep > 1); }

}  // namespace

int complexity(const workload::Plan& p) { return (p.cp > 1) + (p.vpp > 1) + uneven(p) + model_parallel_dimensions(p); }

std::string complexity_text(const workload::Plan& p) {
  std::vector<std::string> parts;
  if (p.cp > 1) parts.emplace_back("context parallelism");
  if (p.vpp > 1) parts.emplace_back("interleaving");
  if (uneven(p)) parts.emplace_back("an uneven layer split");
  const int n = model_parallel_dimensions(p);
  if (n > 0) parts.push_back(fmt::format("{} model-parallel dimension{}", n, n == 1 ? "" : "s"));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<int> tie_groups(const std::vector<double>& seconds, double difference) {
  std::vector<int> group(seconds.size(), 0);
  double leader = 0;
  int current = 0;
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    if (current == 0 || std::log(seconds[i] / leader) > difference) {
      ++current;
      leader = seconds[i];
    }
    group[i] = current;
  }
  return group;
}

Recommendation recommend(const std::vector<TieCandidate>& c, double difference, double wanted_margin) {
  Recommendation r;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!c[i].eligible) continue;
    if (r.fastest < 0) r.fastest = static_cast<int>(i);
    if (std::log(c[i].seconds / c[static_cast<std::size_t>(r.fastest)].seconds) <= difference) r.tied.push_back(static_cast<int>(i));
  }
  if (r.fastest < 0) return r;
  auto key = [&](int i) {
    const auto& x = c[static_cast<std::size_t>(i)];
    return std::make_tuple(x.margin < wanted_margin, x.complexity, x.seconds, i);
  };
  r.index = *std::min_element(r.tied.begin(), r.tied.end(), [&](int a, int b) { return key(a) < key(b); });
  return r;
}

}  // namespace parasim::planner
