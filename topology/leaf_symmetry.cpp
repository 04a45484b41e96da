#include "topology/leaf_symmetry.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace parasim::topology {

namespace {

// A link to or from a leaf as the class test compares it: the switch at its other end, which way it
// runs, its bandwidth and latency.
using Cabling = std::tuple<Vertex, bool, double, double>;

std::vector<Cabling> cabling(const Cluster& cluster, Vertex leaf) {
  const Graph& g = cluster.graph();
  std::vector<Cabling> out;
  const auto add = [&](Vertex other, bool up, const Edge& e) {
    if (other < cluster.first_switch()) return;  // NIC cables: routes between leaves never use them
    const auto& link = g[e];
    out.emplace_back(other, up, link.bandwidth.value(), link.latency.value());
  };
  for (auto [e, end] = boost::out_edges(leaf, g); e != end; ++e) add(boost::target(*e, g), true, *e);
  for (auto [e, end] = boost::in_edges(leaf, g); e != end; ++e) add(boost::source(*e, g), false, *e);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

LeafSymmetry::LeafSymmetry(const Cluster& cluster)
    : first_(cluster.first_switch()), class_of_(cluster.switch_count(), UINT32_MAX) {
  const Graph& g = cluster.graph();
  std::map<std::vector<Cabling>, std::uint32_t> classes;
  for (Vertex v = first_; v < first_ + cluster.switch_count(); ++v) {
    if (g[v].kind != VertexKind::leaf) continue;
    // Two leaves cabled to each other list each other, never themselves: they fall in two classes.
    const auto [it, fresh] = classes.try_emplace(cabling(cluster, v), static_cast<std::uint32_t>(members_.size()));
    if (fresh) members_.emplace_back();
    class_of_[v - first_] = it->second;
    members_[it->second].push_back(v);
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
