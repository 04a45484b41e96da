#pragma once
// The cluster as a graph (Boost.Graph): GPUs, NVSwitches, PCIe switches, CPUs, NICs and the leaf,
// spine and core switches of the network, joined by links that carry a bandwidth per direction and
// a latency. Every physical link is two directed edges, one per direction, each with its own id.
//
// Layout: the vertices of node n are contiguous (GPUs, NVSwitch, PCIe switches, CPUs, NICs) and all
// nodes are laid out alike; the network's switches follow. A device island is the set of GPUs joined
// without leaving a node's fabric: the node (8 GPUs in a DGX, 72 in an NVL72 rack).
#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "topology/cluster_spec.hpp"

namespace parasim::topology {

enum class VertexKind { gpu, nvswitch, pcie_switch, cpu, nic, leaf, spine, core };
enum class LinkKind { nvlink, pcie, inter_socket, nic, leaf_spine, spine_core };

std::string_view vertex_kind_name(VertexKind kind);
std::string_view link_kind_name(LinkKind kind);

/// Switches and CPUs forward traffic; GPUs and NICs are only endpoints (NCCL's proxy-relayed PXN
/// traffic is modelled explicitly by the router, not by letting a GPU forward).
constexpr bool forwards_traffic(VertexKind k) { return k != VertexKind::gpu && k != VertexKind::nic; }

struct VertexInfo {
  VertexKind kind = VertexKind::gpu;
  int node = -1;   ///< owning node; -1 for network switches
  int index = 0;   ///< index among the vertices of this kind (per node for node parts, global for switches)
  int pod = -1;    ///< pod of a network switch (-1 for core switches and node parts)
};

struct LinkInfo {
  LinkKind kind = LinkKind::nvlink;
  BytesPerSecond bandwidth;  ///< this direction
  Seconds latency;
  std::size_t id = 0;
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexInfo, LinkInfo>;
using Vertex = Graph::vertex_descriptor;
using Edge = Graph::edge_descriptor;

class Cluster {
 public:
  /// Builds the graph. Throws std::invalid_argument for specs that parse_cluster would have rejected.
  explicit Cluster(ClusterSpec spec);
  // The edge descriptors kept by id point into the graph's edge storage: a copy would share them
  // with its source, while a move carries the storage (and the descriptors stay valid).
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  Cluster(Cluster&&) noexcept = default;
  Cluster& operator=(Cluster&&) noexcept = default;

  const ClusterSpec& spec() const { return spec_; }
  const Graph& graph() const { return graph_; }

  int gpu_count() const { return spec_.gpus(); }
  int node_count() const { return spec_.nodes; }
  int gpus_per_node() const { return spec_.node.gpus; }
  int island_size() const { return spec_.node.gpus; }
  int island_count() const { return spec_.nodes; }
  int island_of(int gpu) const { return node_of(gpu); }
  int node_of(int gpu) const { return gpu / spec_.node.gpus; }
  int local_index(int gpu) const { return gpu % spec_.node.gpus; }

  Vertex gpu_vertex(int gpu) const;
  /// The NIC NCCL uses for a GPU (the node's affinity table).
  Vertex nic_of(int gpu) const;
  /// The CPU (root complex) above a GPU's PCIe switch.
  Vertex cpu_of(int gpu) const;
  /// The network switch a NIC is cabled to.
  Vertex leaf_of(Vertex nic) const;
  /// A NIC's index over the whole cluster (node by node, then its index in the node), from its
  /// vertex number.
  std::size_t nic_index(Vertex nic) const;

  /// Number of vertices per node; node n's vertices are [n * node_size, (n + 1) * node_size).
  std::size_t node_size() const { return node_size_; }
  Vertex node_base(int node) const { return static_cast<Vertex>(node) * node_size_; }
  /// First network switch vertex; switches are [first_switch(), num_vertices).
  Vertex first_switch() const { return first_switch_; }
  std::size_t switch_count() const { return boost::num_vertices(graph_) - first_switch_; }
  std::size_t leaf_count() const { return leaves_; }
  std::size_t spine_count() const { return spines_; }
  std::size_t core_count() const { return cores_; }

  std::size_t link_count() const { return edges_.size(); }
  /// Links inside one node; node n's are the ids [n * links_per_node, (n + 1) * links_per_node), in
  /// the same order as node 0's, so a route inside node n is node 0's with its ids shifted.
  std::size_t links_per_node() const { return links_per_node_; }
  /// The network's links (NIC cables and those between switches) come after every node's.
  std::size_t first_network_link() const { return static_cast<std::size_t>(spec_.nodes) * links_per_node_; }
  Edge edge(std::size_t link_id) const { return edges_[link_id]; }
  /// A link's two ends (source, target), from a compact table: 8 bytes a cable where an edge
  /// descriptor is 24 (the router reads every network link's ends when it is built).
  std::pair<Vertex, Vertex> ends(std::size_t link_id) const {
    const auto& [a, b] = cable_ends_[link_id >> 1];
    return link_id & 1U ? std::pair<Vertex, Vertex>{b, a} : std::pair<Vertex, Vertex>{a, b};
  }
  /// Every cable is two links, a to b and b to a, with the ids 2k and 2k + 1.
  static std::size_t reverse_link(std::size_t link_id) { return link_id ^ 1U; }
  const LinkInfo& link(std::size_t link_id) const { return links_[link_id]; }
  const VertexInfo& vertex(Vertex v) const { return graph_[v]; }
  /// "node3/gpu5", "leaf17", … for traces and Graphviz.
  std::string vertex_name(Vertex v) const;

 private:
  void build_node(int node);
  void build_network();
  struct CabledLeaf {
    Vertex v;
    int ports;  ///< NIC ports cabled below it
  };
  /// One pod's leaves, every NIC of its nodes cabled to one (rail by rail on a rail-optimized network).
  std::vector<CabledLeaf> cable_pod(int pod, int first_node, int nodes, int& leaf_index);
  /// The spines above one pod's leaves; returns the ports they face down with.
  double add_pod_spines(int pod, const std::vector<CabledLeaf>& leaves, int& spine_index, std::vector<Vertex>& spines);
  /// A three-tier network's core above every pod's spines.
  void add_core(const std::vector<std::vector<Vertex>>& pod_spines, const std::vector<double>& pod_spine_down_ports);
  Vertex add_vertex(VertexInfo info);
  void add_link(Vertex a, Vertex b, LinkKind kind, BytesPerSecond bandwidth, Seconds latency);

  ClusterSpec spec_;
  Graph graph_;
  std::vector<Edge> edges_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> cable_ends_;  ///< per cable k: the ends of link 2k
  /// Each link's properties by id, contiguous (the graph keeps them in one allocation per edge,
  /// a cache miss per read where routing and lowering read them link after link).
  std::vector<LinkInfo> links_;
  std::vector<Vertex> nic_leaf_;  ///< per global NIC index
  std::size_t node_size_ = 0;
  std::size_t links_per_node_ = 0;
  Vertex first_switch_ = 0;
  std::size_t leaves_ = 0, spines_ = 0, cores_ = 0;
};

}  // namespace parasim::topology
