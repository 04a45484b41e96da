#pragma once
// Links the simulated traffic cannot tell apart, folded into one fluid resource.
//
// A collective's link usage spreads over fans of equal links (ECMP over a leaf's uplinks and the
// spines above them, the rails of a node): every link of a fan carries the same share of every
// pattern that crosses it. Two links with the same capacity and the same weight in every pattern a
// simulation uses give the max-min sharing the same constraint, whatever runs at once: keeping one
// of them changes no rate, bit for bit, and the fluid model scans one resource where it scanned a
// fan (a data-parallel ring across pods crosses thousands of links in a few hundred such classes).
#include <map>
#include <span>
#include <vector>

#include "sim/collectives.hpp"
#include "topology/cluster.hpp"

namespace parasim::sim {

struct LinkClasses {
  std::vector<double> capacities;  ///< per class, in the order of each class's lowest link id
  /// Each pattern's usage over the classes (class ids as resource ids), in its links' order.
  std::map<const LinkUsage*, std::vector<FluidModel::Usage>> usage;
  std::size_t links = 0;  ///< distinct links the patterns use
};

/// Classes of the links `patterns` use: equal capacity and, pattern by pattern, equal weight.
LinkClasses link_classes(const topology::Cluster& cluster, std::span<const LinkUsage* const> patterns);

}  // namespace parasim::sim
