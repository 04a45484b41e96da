#pragma once
// What bandwidth a collective over a group of ranks really gets on this cluster, with every link
// shared by all the flows that cross it.
//
// Rings are built as NCCL builds them: the group's ranks are taken island by island; with k ranks of
// the group in each island, k rings run side by side (one per NIC / channel), ring c entering each
// island at its c-th rank, and each ring carries 1/k of the data. The per-rank *bus bandwidth* of a
// ring collective is then min over links of bandwidth / load, where a link's load counts every ring
// hop of every concurrent group that crosses it (so eight DP groups of one node share its NICs).
#include <optional>
#include <span>
#include <vector>

#include "topology/routing.hpp"

namespace parasim::topology {

/// Ranks (global GPU indices) of one communicator, in rank order.
using RankGroup = std::vector<int>;

/// The group's ranks grouped by island, islands in order of first appearance.
std::vector<std::vector<int>> ranks_by_island(const Cluster& cluster, std::span<const int> group);

/// The rings NCCL would lay over the group (see above); empty for a group of one.
std::vector<std::vector<int>> ring_orders(const Cluster& cluster, std::span<const int> group);

/// Per-rank bus bandwidth of a ring collective when all `groups` run theirs at once; the smallest
/// over the groups. nullopt when no group has two ranks.
std::optional<BytesPerSecond> ring_bus_bandwidth(const Router& router, std::span<const RankGroup> groups);
std::optional<BytesPerSecond> ring_bus_bandwidth(const Router& router, const RankGroup& group);

/// Two-level all-reduce: reduce-scatter inside each island, all-reduce across islands among the
/// ranks of equal position, all-gather inside each island.
struct HierarchicalBandwidth {
  int ranks_per_island = 0;
  int islands = 0;
  std::optional<BytesPerSecond> intra;  ///< bus bandwidth of the in-island rings (all islands at once)
  std::optional<BytesPerSecond> inter;  ///< bus bandwidth of the cross-island rings (all positions at once)
  /// Equivalent all-reduce bus bandwidth 2(n-1)/n·S / T of the three phases together.
  std::optional<BytesPerSecond> bus;
};

/// Needs the same number of the group's ranks in every island it touches; otherwise nullopt fields.
HierarchicalBandwidth hierarchical_bandwidth(const Router& router, const RankGroup& group);

}  // namespace parasim::topology
