#pragma once
// A cluster: identical nodes joined by a switched network (leaf, spine and, for three tiers, core).
#include <string>

#include "core/schema.hpp"
#include "topology/node_spec.hpp"

namespace parasim::topology {

enum class NetworkKind {
  rail_optimized,  ///< NIC i of every node goes to the leaves of rail i (DGX SuperPOD)
  fat_tree,        ///< all NICs of a node go to the same leaf (top-of-rack)
};

struct NetworkSpec {
  NetworkKind kind = NetworkKind::rail_optimized;
  int tiers = 2;                      ///< 2: leaf-spine; 3: leaf-spine-core with pods
  int switch_radix = 64;              ///< ports per switch
  double oversubscription = 1.0;      ///< leaf downlink : uplink bandwidth
  int pod_nodes = 0;                  ///< nodes per pod (three tiers)
  double core_oversubscription = 1.0; ///< spine downlink : uplink bandwidth (three tiers)
  Seconds switch_latency;             ///< per switch traversed
  bool sharp = false;                 ///< InfiniBand SHARP: the switches reduce all-reduce traffic
  bool operator==(const NetworkSpec&) const = default;
};

/// The most GPUs a cluster may have: 2^18 = 262,144, beyond the largest training clusters built so
/// far (about 200,000 GPUs). The cluster graph's construction grows about as nodes² (8,192 nodes: 8 s).
inline constexpr long long kMaxClusterGpus = 1LL << 18;

struct ClusterSpec {
  std::string name;
  NodeSpec node;
  int nodes = 1;
  NetworkSpec network;
  int gpus() const { return nodes * node.gpus; }
  bool operator==(const ClusterSpec&) const = default;
};

extern const yaml::Schema kClusterSchema;
ClusterSpec parse_cluster(const yaml::Record& record);

}  // namespace parasim::topology
