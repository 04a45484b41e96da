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
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "topology/cluster.hpp"
#include "topology/leaf_symmetry.hpp"

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

/// Link loads of many routes added together (the traffic of a collective and of its twins), dense
/// over the cluster's links: a scratch value kept between collectives, whose clear() costs only the
/// links it touched. The network part of each route is grouped by leaf pair, and each distinct
/// pair's ECMP route is added once, times its total share, when the loads are flushed.
class LinkLoads {
 public:
  // The loads are left unwritten until a link is first added to (a 16K-GPU cluster has 211k links,
  // and a lowering touches a few thousand): only the marks are cleared.
  explicit LinkLoads(std::size_t link_count) : load_(std::make_unique_for_overwrite<double[]>(link_count)), used_(link_count, 0) {}

  void add(std::size_t link, double load) {
    if (!used_[link]) {
      used_[link] = 1;
      touched_.push_back(link);
      load_[link] = load;
    } else {
      load_[link] += load;
    }
  }
  void set(std::size_t link, double load) {
    add(link, 0.0);
    load_[link] = load;
  }
  double operator[](std::size_t link) const { return used_[link] ? load_[link] : 0.0; }
  bool has(std::size_t link) const { return used_[link] != 0; }
  /// The links added to, in increasing id.
  const std::vector<std::size_t>& links() {
    std::sort(touched_.begin(), touched_.end());
    return touched_;
  }
  void clear();

  struct LeafPair {
    double share = 0;         ///< of all routes between the two leaves
    double node_latency = 0;  ///< the slowest of those routes' parts inside their nodes
  };
  std::map<std::pair<Vertex, Vertex>, LeafPair> leaf_pairs;
  /// The leaves of the pairs flushed, sorted: a route's hops at a leaf are at one of its two leaves,
  /// so a flush restricted to these loads' links skips the hops of pairs away from them.
  std::vector<Vertex> flushed_leaves;
  double max_latency = 0;  ///< of the slowest route added (complete once flushed)

 private:
  std::unique_ptr<double[]> load_;  ///< meaningful where used_ is set
  std::vector<unsigned char> used_;
  std::vector<std::size_t> touched_;
};

/// A link's routing cost: femtoseconds per byte, at least 1.
std::int64_t link_cost(const LinkInfo& link);

/// Routes are walked on first use and kept; one router may serve many threads and simulations.
/// Between leaves they are walked once per pair of leaf classes (topology/leaf_symmetry.hpp) and
/// renamed for the leaves asked, over distances searched once for all pods where every pod is cabled
/// alike (Pods). Inside nodes, a route's legs are walked once in node 0 and shifted (NodeLegs).
class Router {
 public:
  /// Precomputes the least-cost distances inside a node; those to a leaf come on first use.
  explicit Router(const Cluster& cluster);
  ~Router();
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  const Cluster& cluster() const { return *cluster_; }
  Route route(int src_gpu, int dst_gpu) const;
  /// The bandwidth one flow from a to b gets alone: min over its links of bandwidth / share.
  BytesPerSecond bottleneck(int src_gpu, int dst_gpu) const;

  /// Adds the route from a to b, carrying `share`, to `loads`.
  void accumulate(int src_gpu, int dst_gpu, double share, LinkLoads& loads) const;
  /// As accumulate(), for a route whose links inside its two nodes (and their NIC cables) nobody
  /// reads: only its network part, by leaf pair, and its latency are added. The twins of a
  /// collective far from its representative's nodes need no more (CollectiveLowering).
  void accumulate_network(int src_gpu, int dst_gpu, double share, LinkLoads& loads) const;
  /// Adds a GPU's way up to its leaf switch and back (through its NIC), carrying `share`: the traffic
  /// of an in-network (SHARP) reduction, which the switches combine.
  void accumulate_to_leaf(int gpu, double share, LinkLoads& loads) const;
  /// Folds the grouped network segments into the loads; with `only` (flushed before), on the links
  /// it holds alone (where the other links' loads will not be read). Leaf pairs that map to one pair of
  /// representatives share the part of its route away from the leaves, added once with their
  /// shares summed.
  void flush(LinkLoads& loads, const LinkLoads* only = nullptr) const;

 private:
  /// The route between two representative leaves: the hops at a leaf (renamed per leaf pair) apart
  /// from those between spines and cores (the same for every pair of the two classes).
  struct LeafRoute {
    /// A hop between a leaf and another switch: `slot` is that switch's place among the leaf's
    /// links to switches, which every leaf of its class lists alike.
    struct End {
      Vertex from = 0, to = 0;
      Hop hop;
      bool leaf_sends = true;  ///< from the leaf (else into it)
      std::uint32_t slot = 0;
      bool between_leaves = false;  ///< renamed by a search instead
    };
    std::vector<End> ends;
    std::vector<Hop> middle;
    double latency = 0;
    bool leaf_to_leaf = false;  ///< an end runs between two leaves (renamed by a search)
  };
  struct SwitchGraph;

 public:
  /// A link's routing cost as the switch graph's edge property (for its construction from the rows).
  struct SwitchCost {
    std::int64_t value = 0;
  };

 private:
  void measure_node();
  void index_network();
  /// Pods the routing costs cannot tell apart (pods_), verified on the switches' rows.
  void find_pods();
  struct Pods;
  static Pods pods_of(const Cluster& cluster);
  bool pods_cabled_alike(const Pods& pods) const;
  bool pods_shared_alike(const Pods& pods) const;
  /// Each leaf's links to other switches both ways, read off its row (for the leaf classes).
  std::vector<std::vector<LeafSymmetry::Cabling>> leaf_cablings() const;
  /// A route inside node 0, its hops in walking order, each with its share of the latency.
  struct NodeRoute {
    std::vector<Hop> hops;
    std::vector<double> latencies;
  };
  template <class Distance, class NextHops, class Sink>
  void ecmp_walk(Vertex from, Vertex to, double share, Vertex lo, std::size_t span, Distance dist, NextHops next_hops, Sink&& sink) const;
  template <class Distance, class Allowed>
  void scan_next_hops(Vertex v, Distance dist, Allowed allowed, std::vector<std::pair<Vertex, std::size_t>>& out) const;
  template <class Sink>
  void route_in_node(Vertex from, Vertex to, Sink&& sink) const;
  const NodeRoute& node_route(std::size_t from, std::size_t to) const;
  /// The route between the representatives of a leaf pair (image.from != image.to).
  const LeafRoute& leaf_route(const LeafPairImage& image) const;
  /// A hop at a representative leaf, as it runs for the leaf pair `image` names.
  std::size_t renamed(const LeafRoute::End& end, const LeafPairImage& image) const;
  /// Least-cost distances from every network switch to a leaf, by switch index. Called with
  /// leaf_routes_mutex_ held: it fills network_distance_ on first use.
  const std::vector<std::int64_t>& distances_to(Vertex leaf) const;
  /// A NIC's cable to its leaf, both ways, and the leaf.
  struct NicCable {
    std::size_t up = 0, down = 0;
    double up_latency = 0, down_latency = 0;
    Vertex leaf = 0;
  };
  const NicCable& cable(Vertex nic) const;
  /// The node-local parts of a route, hop by hop to `sink(link, share, latency)`, and its leaf pair
  /// when it crosses the network.
  template <class Sink>
  void node_parts(int src_gpu, int dst_gpu, Sink&& sink, Vertex& out_leaf, Vertex& in_leaf) const;
  template <bool kNodeLinks>
  void add_route(int src_gpu, int dst_gpu, double share, LinkLoads& loads) const;
  /// Where a route between two nodes leaves and enters them: its two legs, the NICs' cables, and
  /// the link id offsets of the two nodes.
  struct NodeLeg;
  struct Crossing {
    const NodeLeg* out = nullptr;
    const NodeLeg* in = nullptr;
    const NicCable* up = nullptr;
    const NicCable* down = nullptr;
    std::size_t src_shift = 0, dst_shift = 0;
  };
  Crossing crossing(int src_gpu, int dst_gpu) const;
  /// A route between two nodes without its links: the latency of its parts inside the nodes (NIC
  /// cables included, summed in walking order as node_parts() does) and its two leaves.
  double node_parts_latency(int src_gpu, int dst_gpu, Vertex& out_leaf, Vertex& in_leaf) const;
  /// Walks, in node 0, the parts of the routes between nodes inside their two nodes (node_legs_).
  void measure_legs();
  /// The GPU whose NIC a route between nodes leaves by.
  int sender_of(int src_gpu, int dst_gpu) const;
  /// A route between nodes from its source GPU to the NIC it leaves by (PXN's relay included), hop
  /// by hop to `sink`; the NIC.
  template <class Sink>
  Vertex leave_node(int src_gpu, int dst_gpu, Sink&& sink) const;

  const Cluster* cluster_;
  std::size_t node_size_;
  /// Routing costs of node 0's links, then of the network's (the links of other nodes are never
  /// walked: node routes are node 0's shifted).
  std::vector<std::int64_t> cost_;
  std::size_t network_links_ = 0;  ///< the first network link's id
  std::int64_t cost(std::size_t link) const {
    return cost_[link < network_links_ ? link : link - network_links_ + cluster_->links_per_node()];
  }
  /// node_distance_[to * node_size_ + from]: cost from local vertex `from` to local vertex `to`.
  std::vector<std::int64_t> node_distance_;
  std::unique_ptr<SwitchGraph> switch_graph_;
  LeafSymmetry symmetry_;
  std::vector<NicCable> cables_;  ///< per global NIC index
  /// A route between nodes inside one of its nodes, in node 0 (every node is laid out alike: node n's
  /// links are these shifted): its hops in walking order, each with its latency, the NIC it passes
  /// (its index in the node) and the hops' latencies summed from 0 in that order.
  struct NodeLeg {
    struct Hop {
      std::size_t link = 0;
      double share = 1.0, latency = 0;
    };
    std::vector<Hop> hops;
    std::size_t nic = 0;
    double latency = 0;
  };
  /// Walked once per pair of local GPUs, where a route between nodes leaves its source node (up to
  /// the NIC, PXN's relay included; by source * gpus per node + destination local index) and per
  /// local GPU where it enters its destination node (from the NIC), so the thousands of twins of a
  /// collective look their node parts up. Empty without NICs or a second node.
  struct NodeLegs {
    std::vector<NodeLeg> leaving, arriving;
  } legs_;
  /// Each network switch's links out to other switches, and the cheapest of all its links out (cables
  /// to NICs included).
  struct SwitchLinks {
    /// The links to network switches by increasing target, with their costs: the ECMP walk's
    /// candidates, contiguous. A slot is a place in this order, which every leaf of a class lists
    /// alike. (A network is cabled in the order of its vertices: the graph's out-edge order.)
    struct Out {
      Vertex to = 0;
      std::size_t link = 0;
      std::int64_t cost = 0;
    };
    std::vector<Out> to_switches;
    std::int64_t min_cost = std::numeric_limits<std::int64_t>::max();

    const Out& slot(std::size_t k) const { return to_switches[k]; }
    /// The slot of the link to `target`, or to_switches.size() where there is none.
    std::size_t slot_of(Vertex target) const;
  };
  std::vector<SwitchLinks> switch_links_;
  /// The network's pods where every pod is cabled alike at the same costs and the cores are shared
  /// alike: exchanging two pods (switch for switch, in vertex order) maps the switch graph onto
  /// itself, so the distances to a leaf of pod q are those to the same leaf of pod 0, exchanged.
  struct Pods {
    bool alike = false;
    std::vector<int> pod;               ///< per switch index: its pod, -1 for a switch of none
    std::vector<std::uint32_t> place;   ///< per switch index: its place among its pod's switches
    std::vector<std::vector<Vertex>> members;  ///< per pod, in vertex order
    /// The switch v maps to when pods 0 and q are exchanged.
    Vertex swapped(Vertex v, Vertex first, int q) const {
      const int k = pod[v - first];
      if (k == 0) return members[static_cast<std::size_t>(q)][place[v - first]];
      if (k == q) return members[0][place[v - first]];
      return v;
    }
  } pods_;
  std::int64_t min_switch_link_cost_ = 0;  ///< the cheapest link between two network switches
  /// Routes inside a node already walked, by node-0 local vertex pair (every node is laid out alike):
  /// read without a lock (a router is shared by the threads of a search), written once under one.
  std::unique_ptr<std::atomic<const NodeRoute*>[]> node_routes_;
  mutable std::vector<std::unique_ptr<NodeRoute>> node_route_store_;
  mutable std::mutex node_routes_mutex_;
  /// Routes between representative leaves already walked, and the distances to the leaves they end
  /// at (per leaf index, empty until asked).
  mutable std::map<std::pair<Vertex, Vertex>, LeafRoute> leaf_routes_;
  mutable std::vector<std::vector<std::int64_t>> network_distance_;
  mutable std::mutex leaf_routes_mutex_;
};

}  // namespace parasim::topology
