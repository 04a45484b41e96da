#pragma once
// Routes between GPUs over the cluster graph: least-cost paths, where a link costs the time to move
// one byte across it (so GPU pairs on an NVSwitch talk over NVLink, not over their shared PCIe
// switch), with traffic split evenly over equal-cost next hops at every switch (ECMP over the
// spines and cores). Costs are integers, so equal paths tie exactly.
//
// Inside a node a route may pass switches and CPUs but never another GPU or a NIC. Across nodes,
// traffic leaves through a NIC: on NVSwitch nodes through the NIC on the *destination's* rail, which
// it reaches over NVLink via the local GPU of the same index (NCCL's PXN, on by default since NCCL
// 2.12), so rail-optimized networks keep traffic on its rail; on PCIe nodes through the source GPU's
// own NIC. The receiving side always uses the destination GPU's NIC. Without PCIe peer-to-peer
// (GeForce), a copy between GPUs of one node is staged in the sender's host memory.
#include <map>
#include <mutex>
#include <vector>

#include "topology/cluster.hpp"

namespace parasim::topology {

struct Hop {
  std::size_t link = 0;  ///< directed link id
  double share = 1.0;    ///< fraction of the flow that crosses this link (< 1 where ECMP splits it)
  bool operator==(const Hop&) const = default;
};

struct Route {
  std::vector<Hop> hops;  ///< sorted by link id
  Seconds latency;        ///< one-way latency along the route (share-weighted over ECMP branches)
};

/// Link loads of many routes added together (the traffic of a collective and of its twins). The
/// network part of each route is grouped by leaf pair, and each distinct pair's ECMP route is added
/// once, times its total share, when the loads are read.
struct LinkLoads {
  std::map<std::size_t, double> links;
  std::map<std::pair<Vertex, Vertex>, double> leaf_pairs;
  double max_latency = 0;  ///< of the slowest route added
};

/// A link's routing cost: femtoseconds per byte, at least 1.
std::int64_t link_cost(const LinkInfo& link);

class Router {
 public:
  /// Precomputes the least-cost distances inside a node and between the network's switches.
  explicit Router(const Cluster& cluster);
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  const Cluster& cluster() const { return *cluster_; }
  Route route(int src_gpu, int dst_gpu) const;
  /// The bandwidth one flow from a to b gets alone: min over its links of bandwidth / share.
  BytesPerSecond bottleneck(int src_gpu, int dst_gpu) const;

  /// Adds the route from a to b, carrying `share`, to `loads`.
  void accumulate(int src_gpu, int dst_gpu, double share, LinkLoads& loads) const;
  /// Adds a GPU's way up to its leaf switch and back (through its NIC), carrying `share`: the traffic
  /// of an in-network (SHARP) reduction, which the switches combine.
  void accumulate_to_leaf(int gpu, double share, LinkLoads& loads) const;
  /// Folds the grouped network segments into `loads.links`.
  void flush(LinkLoads& loads) const;

 private:
  struct LeafRoute {
    std::vector<Hop> hops;
    double latency = 0;
  };
  template <class Distance, class Allowed>
  void ecmp_walk(Vertex from, Vertex to, double share, Distance dist, Allowed allowed, std::vector<Hop>& hops, double& latency) const;
  void route_in_node(Vertex from, Vertex to, double share, std::vector<Hop>& hops, double& latency) const;
  const LeafRoute& leaf_route(Vertex from_leaf, Vertex to_leaf) const;
  void walk_network(Vertex from_leaf, Vertex to_leaf, std::vector<Hop>& hops, double& latency) const;
  void add_link_hop(Vertex from, Vertex to, double share, std::vector<Hop>& hops, double& latency) const;
  /// The node-local parts of a route, and its leaf pair when it crosses the network.
  void node_parts(int src_gpu, int dst_gpu, std::vector<Hop>& hops, double& latency, Vertex& out_leaf, Vertex& in_leaf) const;

  const Cluster* cluster_;
  std::size_t node_size_;
  std::vector<std::int64_t> cost_;  ///< per directed link id
  /// node_distance_[to * node_size_ + from]: cost from local vertex `from` to local vertex `to`.
  std::vector<std::int64_t> node_distance_;
  /// network_distance_[leaf * switch_count + s]: cost from network switch s to a leaf.
  std::vector<std::int64_t> network_distance_;
  /// Leaf-to-leaf routes already walked (the same pairs recur for every GPU pair behind them).
  mutable std::map<std::pair<Vertex, Vertex>, LeafRoute> leaf_routes_;
  mutable std::mutex leaf_routes_mutex_;
};

}  // namespace parasim::topology
