#include "topology/cluster.hpp"

#include <cmath>
#include <limits>
#include <fmt/format.h>
#include <stdexcept>

namespace parasim::topology {

std::string_view vertex_kind_name(VertexKind k) {
  switch (k) {
    case VertexKind::gpu: return "gpu";
    case VertexKind::nvswitch: return "nvswitch";
    case VertexKind::pcie_switch: return "pcie-switch";
    case VertexKind::cpu: return "cpu";
    case VertexKind::nic: return "nic";
    case VertexKind::leaf: return "leaf";
    case VertexKind::spine: return "spine";
    case VertexKind::core: return "core";
  }
  return "";
}

std::string_view link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::nvlink: return "nvlink";
    case LinkKind::pcie: return "pcie";
    case LinkKind::inter_socket: return "cpu-cpu";
    case LinkKind::nic: return "nic-leaf";
    case LinkKind::leaf_spine: return "leaf-spine";
    case LinkKind::spine_core: return "spine-core";
  }
  return "";
}

namespace {

// Node-local vertex offsets, identical for every node. The NICs come last: Cluster::nic_of and
// nic_index find them from the node's size, without the layout.
struct NodeLayout {
  int gpus, nvswitches, switches, sockets, nics;
  int gpu(int i) const { return i; }
  int nvswitch() const { return gpus; }
  int pcie_switch(int i) const { return gpus + nvswitches + i; }
  int cpu(int i) const { return gpus + nvswitches + switches + i; }
  int nic(int i) const { return gpus + nvswitches + switches + sockets + i; }
  int size() const { return gpus + nvswitches + switches + sockets + nics; }
};

NodeLayout layout_of(const NodeSpec& n) {
  return {n.gpus, n.fabric == IntraNodeFabric::nvswitch ? 1 : 0, n.pcie.switches, n.pcie.sockets, n.nics.count};
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// A leaf splits its ports between downlinks and uplinks in the oversubscription ratio.
int down_ports(int radix, double oversubscription) {
  return std::max(1, static_cast<int>(std::floor(radix * oversubscription / (1.0 + oversubscription))));
}

}  // namespace

Cluster::Cluster(ClusterSpec spec) : spec_(std::move(spec)) {
  const auto& n = spec_.node;
  if (n.gpus < 1 || spec_.nodes < 1) throw std::invalid_argument("a cluster needs at least one node with one GPU");
  if (spec_.nodes > 1 && n.nics.count < 1) throw std::invalid_argument("a multi-node cluster needs NICs");
  node_size_ = static_cast<std::size_t>(layout_of(n).size());
  for (int node = 0; node < spec_.nodes; ++node) {
    build_node(node);
    if (node == 0) links_per_node_ = edges_.size();
  }
  first_switch_ = boost::num_vertices(graph_);
  if (spec_.nodes > 1) build_network();
}

Vertex Cluster::add_vertex(VertexInfo info) { return boost::add_vertex(info, graph_); }

void Cluster::add_link(Vertex a, Vertex b, LinkKind kind, BytesPerSecond bandwidth, Seconds latency) {
  if (std::max(a, b) > std::numeric_limits<std::uint32_t>::max()) throw std::invalid_argument("a cluster of more than 2^32 vertices");
  cable_ends_.emplace_back(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b));
  for (auto [u, v] : {std::pair{a, b}, std::pair{b, a}}) {
    const LinkInfo info{kind, bandwidth, latency, edges_.size()};
    const auto [e, ok] = boost::add_edge(u, v, info, graph_);
    (void)ok;
    edges_.push_back(e);
    links_.push_back(info);
  }
}

void Cluster::build_node(int node) {
  const auto& n = spec_.node;
  const NodeLayout l = layout_of(n);
  const Vertex base = node_base(node);
  for (int i = 0; i < l.gpus; ++i) add_vertex({VertexKind::gpu, node, i});
  if (l.nvswitches) add_vertex({VertexKind::nvswitch, node, 0});
  for (int i = 0; i < l.switches; ++i) add_vertex({VertexKind::pcie_switch, node, i});
  for (int i = 0; i < l.sockets; ++i) add_vertex({VertexKind::cpu, node, i});
  for (int i = 0; i < l.nics; ++i) add_vertex({VertexKind::nic, node, i});
  auto at = [&](int local) { return base + static_cast<Vertex>(local); };

  // The NVSwitch domain is a non-blocking crossbar: one vertex stands for all the switch chips, and
  // each GPU's link to it carries the GPU's full NVLink bandwidth per direction.
  if (l.nvswitches) {
    for (int i = 0; i < l.gpus; ++i) {
      add_link(at(l.gpu(i)), at(l.nvswitch()), LinkKind::nvlink, n.gpu.nvlink->per_direction(), n.fabric_latency / 2.0);
    }
  }
  const BytesPerSecond tree = n.pcie.per_direction();
  for (int i = 0; i < l.gpus; ++i) {
    const BytesPerSecond gpu_link = std::min(tree, n.gpu.pcie_per_direction());
    add_link(at(l.gpu(i)), at(l.pcie_switch(n.switch_of_gpu(i))), LinkKind::pcie, gpu_link, n.pcie.latency);
  }
  for (int i = 0; i < l.nics; ++i) {
    add_link(at(l.nic(i)), at(l.pcie_switch(n.switch_of_nic(i))), LinkKind::pcie, tree, n.pcie.latency);
  }
  for (int s = 0; s < l.switches; ++s) {
    add_link(at(l.pcie_switch(s)), at(l.cpu(n.socket_of_switch(s))), LinkKind::pcie, tree, n.pcie.latency);
  }
  for (int a = 0; a < l.sockets; ++a) {
    for (int b = a + 1; b < l.sockets; ++b) {
      add_link(at(l.cpu(a)), at(l.cpu(b)), LinkKind::inter_socket, n.pcie.inter_socket, n.pcie.latency);
    }
  }
}

std::vector<Cluster::CabledLeaf> Cluster::cable_pod(int pod, int first, int count, int& leaf_index) {
  const auto& net = spec_.network;
  const NodeLayout l = layout_of(spec_.node);
  const int nics = spec_.node.nics.count;
  const int leaf_down = down_ports(net.switch_radix, net.oversubscription);
  const Seconds hop = spec_.node.nics.latency / 2.0 + net.switch_latency;
  std::vector<CabledLeaf> leaves;
  auto cable = [&](Vertex leaf, int node, int nic) {
    const Vertex nv = node_base(node) + static_cast<Vertex>(l.nic(nic));
    add_link(nv, leaf, LinkKind::nic, spec_.node.nics.bandwidth, hop);
    nic_leaf_[static_cast<std::size_t>(node * nics + nic)] = leaf;
  };
  if (net.kind == NetworkKind::rail_optimized) {
    // Rail r: NIC r of every node, leaf_down nodes per leaf.
    for (int rail = 0; rail < nics; ++rail) {
      for (int g = 0; g < ceil_div(count, leaf_down); ++g) {
        const Vertex leaf = add_vertex({VertexKind::leaf, -1, leaf_index++, pod});
        const int members = std::min(leaf_down, count - g * leaf_down);
        for (int k = 0; k < members; ++k) cable(leaf, first + g * leaf_down + k, rail);
        leaves.push_back({leaf, members});
      }
    }
    return leaves;
  }
  const int per_leaf = leaf_down / nics;  // parse_cluster checked it is at least 1
  for (int g = 0; g < ceil_div(count, per_leaf); ++g) {
    const Vertex leaf = add_vertex({VertexKind::leaf, -1, leaf_index++, pod});
    const int members = std::min(per_leaf, count - g * per_leaf);
    for (int k = 0; k < members; ++k) {
      for (int r = 0; r < nics; ++r) cable(leaf, first + g * per_leaf + k, r);
    }
    leaves.push_back({leaf, members * nics});
  }
  return leaves;
}

double Cluster::add_pod_spines(int pod, const std::vector<CabledLeaf>& leaves, int& spine_index, std::vector<Vertex>& spines) {
  const auto& net = spec_.network;
  // A leaf's uplink capacity is what is cabled below it divided by the oversubscription.
  const int spine_down = net.tiers == 3 ? down_ports(net.switch_radix, net.core_oversubscription) : net.switch_radix;
  double up_ports = 0;
  for (const auto& lf : leaves) up_ports += lf.ports / net.oversubscription;
  const int count = std::max(1, static_cast<int>(std::ceil(up_ports / spine_down - 1e-9)));
  for (int s = 0; s < count; ++s) spines.push_back(add_vertex({VertexKind::spine, -1, spine_index++, pod}));
  for (const auto& lf : leaves) {
    const BytesPerSecond each = spec_.node.nics.bandwidth * (lf.ports / net.oversubscription / count);
    for (Vertex s : spines) add_link(lf.v, s, LinkKind::leaf_spine, each, net.switch_latency);
  }
  spines_ += static_cast<std::size_t>(count);
  return up_ports;
}

void Cluster::add_core(const std::vector<std::vector<Vertex>>& pod_spines, const std::vector<double>& pod_spine_down_ports) {
  const auto& net = spec_.network;
  const BytesPerSecond port = spec_.node.nics.bandwidth;
  double up_ports = 0;
  for (double down : pod_spine_down_ports) up_ports += down / net.core_oversubscription;
  const int cores = std::max(1, static_cast<int>(std::ceil(up_ports / net.switch_radix - 1e-9)));
  std::vector<Vertex> core;
  for (int c = 0; c < cores; ++c) core.push_back(add_vertex({VertexKind::core, -1, c, -1}));
  for (std::size_t pod = 0; pod < pod_spines.size(); ++pod) {
    const auto& spines = pod_spines[pod];
    const double per_spine_up = pod_spine_down_ports[pod] / net.core_oversubscription / static_cast<double>(spines.size());
    for (Vertex s : spines) {
      for (Vertex c : core) add_link(s, c, LinkKind::spine_core, port * (per_spine_up / cores), net.switch_latency);
    }
  }
  cores_ = static_cast<std::size_t>(cores);
}

void Cluster::build_network() {
  const auto& net = spec_.network;
  nic_leaf_.assign(static_cast<std::size_t>(spec_.nodes * spec_.node.nics.count), Vertex{});
  const int pod_nodes = net.tiers == 3 ? net.pod_nodes : spec_.nodes;
  const int pods = ceil_div(spec_.nodes, pod_nodes);
  std::vector<std::vector<Vertex>> pod_spines(static_cast<std::size_t>(pods));
  std::vector<double> pod_spine_down_ports(static_cast<std::size_t>(pods), 0.0);
  int leaf_index = 0, spine_index = 0;
  for (int pod = 0; pod < pods; ++pod) {
    const int first = pod * pod_nodes;
    const auto leaves = cable_pod(pod, first, std::min(pod_nodes, spec_.nodes - first), leaf_index);
    leaves_ += leaves.size();
    // A lone leaf in a two-tier network needs no spine: everything it connects is one hop apart.
    if (leaves.size() == 1 && net.tiers == 2) continue;
    const auto p = static_cast<std::size_t>(pod);
    pod_spine_down_ports[p] = add_pod_spines(pod, leaves, spine_index, pod_spines[p]);
  }
  if (net.tiers == 3 && pods > 0) add_core(pod_spines, pod_spine_down_ports);
}

Vertex Cluster::gpu_vertex(int gpu) const {
  if (gpu < 0 || gpu >= gpu_count()) throw std::out_of_range(fmt::format("no GPU {} in a cluster of {}", gpu, gpu_count()));
  return node_base(node_of(gpu)) + static_cast<Vertex>(local_index(gpu));
}

Vertex Cluster::nic_of(int gpu) const {
  const auto& n = spec_.node;
  if (n.nics.count == 0) throw std::logic_error(fmt::format("node {} has no NIC", n.name));
  // A node's NICs are its last vertices (NodeLayout).
  const int nic = n.nics.affinity[static_cast<std::size_t>(local_index(gpu))];
  return node_base(node_of(gpu)) + node_size_ - static_cast<Vertex>(n.nics.count) + static_cast<Vertex>(nic);
}

Vertex Cluster::cpu_of(int gpu) const {
  const auto& n = spec_.node;
  const int socket = n.socket_of_switch(n.switch_of_gpu(local_index(gpu)));
  return node_base(node_of(gpu)) + static_cast<Vertex>(layout_of(n).cpu(socket));
}

Vertex Cluster::leaf_of(Vertex nic) const {
  if (nic_leaf_.empty()) throw std::logic_error("leaf_of needs a cabled NIC");
  return nic_leaf_[nic_index(nic)];
}

std::size_t Cluster::nic_index(Vertex nic) const {
  // A node's NICs are its last vertices (NodeLayout): the index from the vertex number, without
  // reading the vertex (a cache miss per route on a large cluster).
  const auto count = static_cast<std::size_t>(spec_.node.nics.count);
  const std::size_t local = nic % node_size_;
  if (nic >= first_switch_ || local + count < node_size_) throw std::logic_error("not a NIC");
  return nic / node_size_ * count + (local + count - node_size_);
}

std::string Cluster::vertex_name(Vertex v) const {
  const auto& i = graph_[v];
  if (i.node >= 0) return fmt::format("node{}/{}{}", i.node, vertex_kind_name(i.kind), i.index);
  return fmt::format("{}{}", vertex_kind_name(i.kind), i.index);
}

}  // namespace parasim::topology
