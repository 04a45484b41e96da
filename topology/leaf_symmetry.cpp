#include "topology/leaf_symmetry.hpp"

#include <algorithm>
#include <bit>
#include <unordered_map>
#include <tuple>

namespace parasim::topology {

namespace {

using Cabling = LeafSymmetry::Cabling;

// Each leaf's links to other switches, both ways, in link id order, from one pass over the network's
// links (contiguous, where a leaf's in- and out-edges would be a pointer per edge); classes compare
// them as multisets (sorted). NIC cables are left out: routes between leaves never use them.
std::vector<std::vector<Cabling>> cablings(const Cluster& cluster) {
  const Graph& g = cluster.graph();
  const Vertex first = cluster.first_switch();
  std::vector<std::vector<Cabling>> out(cluster.switch_count());
  for (std::size_t id = cluster.first_network_link(); id < cluster.link_count(); ++id) {
    const auto [u, v] = cluster.ends(id);
    if (u < first || v < first) continue;
    const auto& link = cluster.link(id);
    if (g[u].kind == VertexKind::leaf) out[u - first].emplace_back(v, true, link.bandwidth.value(), link.latency.value());
    if (g[v].kind == VertexKind::leaf) out[v - first].emplace_back(u, false, link.bandwidth.value(), link.latency.value());
  }
  return out;
}

// Of a multiset of cablings, whatever their order.
std::uint64_t hash_of(const std::vector<Cabling>& cablings) {
  std::uint64_t sum = 0;
  for (const auto& [other, up, bandwidth, latency] : cablings) {
    std::uint64_t h = other * 0x9E3779B97F4A7C15ULL ^ (up ? 0xC2B2AE3D27D4EB4FULL : 0);
    h ^= std::bit_cast<std::uint64_t>(bandwidth) + 0x165667B19E3779F9ULL + (h << 6) + (h >> 2);
    h ^= std::bit_cast<std::uint64_t>(latency) + 0x27D4EB2F165667C5ULL + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ULL;
    sum += h ^ (h >> 29);
  }
  return sum ^ cablings.size();
}

}  // namespace

LeafSymmetry::LeafSymmetry(const Cluster& cluster) : LeafSymmetry(cluster, cablings(cluster)) {}

LeafSymmetry::LeafSymmetry(const Cluster& cluster, std::vector<std::vector<Cabling>> all)
    : first_(cluster.first_switch()), class_of_(cluster.switch_count(), UINT32_MAX) {
  const Graph& g = cluster.graph();
  // Classes by the hash of their cabling, each with its first member's cabling (as listed and
  // sorted): a leaf joins a class whose cabling it lists in the same order (the common case: leaves
  // built alike list their links alike) or, sorted, equals. Hash collisions only cost a comparison.
  struct Class {
    std::uint32_t id;
    std::vector<Cabling> listed, sorted;
  };
  std::unordered_map<std::uint64_t, std::vector<Class>> classes;
  for (Vertex v = first_; v < first_ + cluster.switch_count(); ++v) {
    if (g[v].kind != VertexKind::leaf) continue;
    // Two leaves cabled to each other list each other, never themselves: they fall in two classes.
    auto& listed = all[v - first_];
    auto& candidates = classes[hash_of(listed)];
    const Class* found = nullptr;
    for (const auto& c : candidates) {
      if (c.listed == listed) found = &c;
    }
    if (!found) {
      auto sorted = listed;
      std::sort(sorted.begin(), sorted.end());
      for (const auto& c : candidates) {
        if (c.sorted == sorted) found = &c;
      }
      if (!found) {
        candidates.push_back({static_cast<std::uint32_t>(members_.size()), std::move(listed), std::move(sorted)});
        members_.emplace_back();
        found = &candidates.back();
      }
    }
    class_of_[v - first_] = found->id;
    members_[found->id].push_back(v);
  }
}

LeafPairImage LeafSymmetry::image(Vertex a, Vertex b) const {
  const auto& ca = members_[class_of_[a - first_]];
  const auto& cb = members_[class_of_[b - first_]];
  LeafPairImage im;
  if (&ca != &cb) {
    im.from = ca[0];
    im.to = cb[0];
    im.swaps = {std::pair{b, cb[0]}, std::pair{a, ca[0]}};  // disjoint: either order
    return im;
  }
  // One class: a goes to its first member, then b (where the first swap put it) to the second.
  im.from = ca[0];
  im.to = ca[1];
  const Vertex b_moved = b == ca[0] ? a : b;
  im.swaps = {std::pair{b_moved, ca[1]}, std::pair{a, ca[0]}};
  return im;
}

}  // namespace parasim::topology
