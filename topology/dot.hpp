#pragma once
// Graphviz rendering of a (small) cluster: one edge per physical link, labelled with its bandwidth.
#include <string>

#include "topology/cluster.hpp"

namespace parasim::topology {

/// Clusters above this many vertices are too large to draw usefully.
inline constexpr std::size_t kMaxDotVertices = 2000;

std::string to_dot(const Cluster& cluster);

}  // namespace parasim::topology
