#pragma once
// Leaves the network cannot tell apart. Two leaf switches are interchangeable when they are cabled to
// the same switches over links of the same bandwidth (so the same routing cost) and latency, both
// ways: swapping them maps the network's switch graph onto itself. Any permutation of such a class is
// then a symmetry, so the least-cost ECMP route between two leaves is the route between two
// representatives with the leaves renamed. A Clos network built pod by pod has one class per pod (a
// class per leaf size), so a simulation walks routes per pair of classes instead of per pair of
// leaves. Every class is found from the graph; nothing here assumes how the network was built.
#include <array>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "topology/cluster.hpp"

namespace parasim::topology {

/// A leaf pair as the pair of representatives it maps to, and the renaming back.
struct LeafPairImage {
  Vertex from = 0, to = 0;  ///< the representatives' pair, whose route is walked
  /// Applied in order to a vertex of the representatives' route, these swaps give the vertex of the
  /// original pair's route (a swap of a vertex with itself is none).
  std::array<std::pair<Vertex, Vertex>, 2> swaps{};

  Vertex back(Vertex v) const {
    for (const auto& [a, b] : swaps) v = v == a ? b : v == b ? a : v;
    return v;
  }
};

class LeafSymmetry {
 public:
  /// A link to or from a leaf as the class test compares it: the switch at its other end, whether it
  /// runs from the leaf, its bandwidth and latency.
  using Cabling = std::tuple<Vertex, bool, double, double>;

  LeafSymmetry() = default;
  /// Reads each leaf's links to other switches off the cluster's network links.
  explicit LeafSymmetry(const Cluster& cluster);
  /// From each network switch's cablings (by switch index; a leaf's alone are read, in any order)
  /// where the caller has them at hand: the router, from its index of the network.
  LeafSymmetry(const Cluster& cluster, std::vector<std::vector<Cabling>> cablings);

  /// The pair of representatives (a, b) maps to, a != b: the first and second member of their class
  /// when both leaves are in one class, else each class's first member.
  LeafPairImage image(Vertex a, Vertex b) const;
  /// The first member of a leaf's class.
  Vertex representative(Vertex leaf) const { return members_[class_of_[leaf - first_]].front(); }
  std::size_t class_count() const { return members_.size(); }

 private:
  Vertex first_ = 0;
  std::vector<std::uint32_t> class_of_;            ///< per network switch (leaves only)
  std::vector<std::vector<Vertex>> members_;       ///< per class, in increasing vertex order
};

}  // namespace parasim::topology
