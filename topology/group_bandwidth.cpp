#include "topology/group_bandwidth.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace parasim::topology {

std::vector<std::vector<int>> ranks_by_island(const Cluster& cluster, std::span<const int> group) {
  std::vector<std::vector<int>> out;
  std::map<int, std::size_t> slot;
  for (int r : group) {
    const int island = cluster.island_of(r);
    auto [it, fresh] = slot.emplace(island, out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(r);
  }
  return out;
}

std::vector<std::vector<int>> ring_orders(const Cluster& cluster, std::span<const int> group) {
  if (group.size() < 2) return {};
  {
    // All ranks on one island, or each on its own (a data-parallel group of whole tensor-parallel
    // nodes): the group's own order is its one ring, found without building the islands.
    std::vector<int> islands(group.size());
    std::transform(group.begin(), group.end(), islands.begin(), [&](int r) { return cluster.island_of(r); });
    std::sort(islands.begin(), islands.end());
    if (islands.front() == islands.back() || std::adjacent_find(islands.begin(), islands.end()) == islands.end()) {
      return {RankGroup(group.begin(), group.end())};
    }
  }
  const auto islands = ranks_by_island(cluster, group);
  if (islands.size() == 1) return {RankGroup(group.begin(), group.end())};
  std::size_t k = std::numeric_limits<std::size_t>::max();
  for (const auto& i : islands) k = std::min(k, i.size());
  std::vector<std::vector<int>> rings;
  for (std::size_t c = 0; c < k; ++c) {
    std::vector<int> ring;
    for (const auto& members : islands) {
      for (std::size_t j = 0; j < members.size(); ++j) ring.push_back(members[(c + j) % members.size()]);
    }
    rings.push_back(std::move(ring));
  }
  return rings;
}

std::optional<BytesPerSecond> ring_bus_bandwidth(const Router& router, std::span<const RankGroup> groups) {
  const Cluster& cluster = router.cluster();
  LinkLoads loads(cluster.link_count());
  bool any = false;
  for (const auto& group : groups) {
    const auto rings = ring_orders(cluster, group);
    for (const auto& ring : rings) {
      const double share = 1.0 / static_cast<double>(rings.size());
      for (std::size_t i = 0; i < ring.size(); ++i) {
        router.accumulate(ring[i], ring[(i + 1) % ring.size()], share, loads);
        any = true;
      }
    }
  }
  if (!any) return std::nullopt;
  router.flush(loads);
  double best = std::numeric_limits<double>::infinity();
  for (const std::size_t link : loads.links()) {
    if (loads[link] > 0) best = std::min(best, cluster.link(link).bandwidth.value() / loads[link]);
  }
  return BytesPerSecond(best);
}

std::optional<BytesPerSecond> ring_bus_bandwidth(const Router& router, const RankGroup& group) {
  return ring_bus_bandwidth(router, std::span<const RankGroup>(&group, 1));
}

HierarchicalBandwidth hierarchical_bandwidth(const Router& router, const RankGroup& group) {
  HierarchicalBandwidth h;
  const auto islands = ranks_by_island(router.cluster(), group);
  h.islands = static_cast<int>(islands.size());
  h.ranks_per_island = islands.empty() ? 0 : static_cast<int>(islands.front().size());
  for (const auto& i : islands) {
    if (static_cast<int>(i.size()) != h.ranks_per_island) return h;
  }
  const int m = h.ranks_per_island, p = h.islands;
  std::vector<RankGroup> across(static_cast<std::size_t>(m));
  for (const auto& members : islands) {
    for (int j = 0; j < m; ++j) across[static_cast<std::size_t>(j)].push_back(members[static_cast<std::size_t>(j)]);
  }
  h.intra = ring_bus_bandwidth(router, islands);
  h.inter = ring_bus_bandwidth(router, across);
  // Time per byte of the buffer S: RS (m-1)/m / B_intra + AR of S/m: 2(p-1)/p / m / B_inter + AG.
  double per_byte = 0.0;
  if (h.intra) per_byte += 2.0 * (m - 1) / m / h.intra->value();
  if (h.inter) per_byte += 2.0 * (p - 1) / p / m / h.inter->value();
  const int n = m * p;
  if (per_byte > 0) h.bus = BytesPerSecond(2.0 * (n - 1) / n / per_byte);
  return h;
}

}  // namespace parasim::topology
