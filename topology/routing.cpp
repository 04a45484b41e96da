#include "topology/routing.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <limits>
#include <map>

namespace parasim::topology {
std::int64_t link_cost(const LinkInfo& link) {
  return std::max<std::int64_t>(1, std::llround(1e15 / link.bandwidth.value()));
}

namespace {

constexpr std::int64_t kUnreachable = std::numeric_limits<std::int64_t>::max();

// Keeps edges inside [begin, end) that leave a forwarding vertex or the root. The search runs from
// the destination; links are symmetric, so its distances are the distances *to* the root, and a
// vertex is expanded only if a route may pass through it.
struct RegionEdges {
  const Graph* g = nullptr;
  Vertex begin = 0, end = 0, root = 0;
  bool operator()(const Edge& e) const {
    const Vertex u = boost::source(e, *g), v = boost::target(e, *g);
    if (u < begin || u >= end || v < begin || v >= end) return false;
    return u == root || forwards_traffic((*g)[u].kind);
  }
};

// Distances from every vertex of [begin, end) to root, by Boost's Dijkstra over the filtered region.
std::vector<std::int64_t> distances_to(const Graph& g, Vertex root, Vertex begin, Vertex end) {
  boost::filtered_graph<Graph, RegionEdges> region(g, RegionEdges{&g, begin, end, root});
  std::vector<std::int64_t> dist(boost::num_vertices(g), kUnreachable);
  std::vector<Vertex> pred(boost::num_vertices(g));
  const auto weight = boost::make_function_property_map<Edge, std::int64_t>([&g](const Edge& e) { return link_cost(g[e]); });
  boost::dijkstra_shortest_paths(region, root,
                                 boost::predecessor_map(pred.data())
                                     .distance_map(dist.data())
                                     .weight_map(weight)
                                     .distance_inf(kUnreachable));
  return {dist.begin() + static_cast<std::ptrdiff_t>(begin), dist.begin() + static_cast<std::ptrdiff_t>(end)};
}

void merge(std::vector<Hop>& hops) {
  std::sort(hops.begin(), hops.end(), [](const Hop& a, const Hop& b) { return a.link < b.link; });
  std::vector<Hop> out;
  for (const auto& h : hops) {
    if (!out.empty() && out.back().link == h.link) out.back().share += h.share;
    else out.push_back(h);
  }
  hops = std::move(out);
}

}  // namespace

Router::Router(const Cluster& cluster) : cluster_(&cluster), node_size_(cluster.node_size()) {
  const Graph& g = cluster.graph();
  // All nodes are laid out alike, so node 0's distances serve every node.
  node_distance_.reserve(node_size_ * node_size_);
  for (std::size_t to = 0; to < node_size_; ++to) {
    const auto d = distances_to(g, static_cast<Vertex>(to), 0, static_cast<Vertex>(node_size_));
    node_distance_.insert(node_distance_.end(), d.begin(), d.end());
  }
  const Vertex first = cluster.first_switch();
  const Vertex end = static_cast<Vertex>(boost::num_vertices(g));
  const std::size_t switches = cluster.switch_count();
  network_distance_.assign(cluster.leaf_count() * switches, kUnreachable);
  for (Vertex v = first; v < end; ++v) {
    if (g[v].kind != VertexKind::leaf) continue;
    const auto d = distances_to(g, v, first, end);
    std::copy(d.begin(), d.end(), network_distance_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(g[v].index) * switches));
  }
}

void Router::add_link_hop(Vertex from, Vertex to, double share, std::vector<Hop>& hops, double& latency) const {
  const auto [e, ok] = boost::edge(from, to, cluster_->graph());
  if (!ok) throw std::logic_error("route over a missing link");
  const auto& info = cluster_->graph()[e];
  hops.push_back({info.id, share});
  latency += share * info.latency.value();
}

// Walks the shortest-path DAG from `from` to `to`, splitting the share evenly over next hops.
void Router::route_in_node(Vertex from, Vertex to, double share, std::vector<Hop>& hops, double& latency) const {
  if (from == to) return;
  const Graph& g = cluster_->graph();
  const Vertex base = from - from % node_size_;
  const auto dist = [&](Vertex v) { return node_distance_[(to - base) * node_size_ + (v - base)]; };
  if (dist(from) == kUnreachable) throw std::logic_error("no route inside the node");
  std::map<Vertex, double> level{{from, share}};
  while (!(level.size() == 1 && level.begin()->first == to)) {
    std::map<Vertex, double> next;
    for (const auto& [v, s] : level) {
      std::vector<Vertex> choices;
      for (auto [e, e_end] = boost::out_edges(v, g); e != e_end; ++e) {
        const Vertex w = boost::target(*e, g);
        if (w < base || w >= base + node_size_) continue;
        if (w != to && !forwards_traffic(g[w].kind)) continue;
        if (dist(w) != kUnreachable && dist(w) + link_cost(g[*e]) == dist(v)) choices.push_back(w);
      }
      for (Vertex w : choices) {
        add_link_hop(v, w, s / static_cast<double>(choices.size()), hops, latency);
        next[w] += s / static_cast<double>(choices.size());
      }
    }
    level = std::move(next);
  }
}

void Router::route_in_network(Vertex from_leaf, Vertex to_leaf, std::vector<Hop>& hops, double& latency) const {
  if (from_leaf == to_leaf) return;
  {
    std::lock_guard<std::mutex> lock(leaf_routes_mutex_);
    if (auto it = leaf_routes_.find({from_leaf, to_leaf}); it != leaf_routes_.end()) {
      hops.insert(hops.end(), it->second.hops.begin(), it->second.hops.end());
      latency += it->second.latency;
      return;
    }
  }
  std::vector<Hop> own;
  double own_latency = 0;
  walk_network(from_leaf, to_leaf, own, own_latency);
  hops.insert(hops.end(), own.begin(), own.end());
  latency += own_latency;
  std::lock_guard<std::mutex> lock(leaf_routes_mutex_);
  leaf_routes_.emplace(std::pair{from_leaf, to_leaf}, LeafRoute{std::move(own), own_latency});
}

void Router::walk_network(Vertex from_leaf, Vertex to_leaf, std::vector<Hop>& hops, double& latency) const {
  const Graph& g = cluster_->graph();
  const Vertex first = cluster_->first_switch();
  const std::size_t switches = cluster_->switch_count();
  const std::size_t row = static_cast<std::size_t>(g[to_leaf].index) * switches;
  const auto dist = [&](Vertex v) { return network_distance_[row + (v - first)]; };
  if (dist(from_leaf) == kUnreachable) throw std::logic_error("no route between leaves");
  std::map<Vertex, double> level{{from_leaf, 1.0}};
  while (!(level.size() == 1 && level.begin()->first == to_leaf)) {
    std::map<Vertex, double> next;
    for (const auto& [v, s] : level) {
      std::vector<Vertex> choices;
      for (auto [e, e_end] = boost::out_edges(v, g); e != e_end; ++e) {
        const Vertex w = boost::target(*e, g);
        if (w >= first && dist(w) != kUnreachable && dist(w) + link_cost(g[*e]) == dist(v)) choices.push_back(w);
      }
      for (Vertex w : choices) {
        add_link_hop(v, w, s / static_cast<double>(choices.size()), hops, latency);
        next[w] += s / static_cast<double>(choices.size());
      }
    }
    level = std::move(next);
  }
}

Route Router::route(int src_gpu, int dst_gpu) const {
  const Cluster& c = *cluster_;
  Route r;
  double latency = 0.0;
  const Vertex src = c.gpu_vertex(src_gpu), dst = c.gpu_vertex(dst_gpu);
  if (c.node_of(src_gpu) == c.node_of(dst_gpu)) {
    if (c.spec().node.peer_to_peer) {
      route_in_node(src, dst, 1.0, r.hops, latency);
    } else {
      const Vertex host = c.cpu_of(src_gpu);  // staged in the sender's host memory
      route_in_node(src, host, 1.0, r.hops, latency);
      route_in_node(host, dst, 1.0, r.hops, latency);
    }
  } else {
    // PXN: on NVSwitch nodes hand the data over NVLink to the local GPU on the destination's rail.
    int sender = src_gpu;
    if (c.spec().node.fabric == IntraNodeFabric::nvswitch) {
      sender = c.node_of(src_gpu) * c.gpus_per_node() + c.local_index(dst_gpu);
    }
    const Vertex relay = c.gpu_vertex(sender);
    route_in_node(src, relay, 1.0, r.hops, latency);
    const Vertex out_nic = c.nic_of(sender), in_nic = c.nic_of(dst_gpu);
    route_in_node(relay, out_nic, 1.0, r.hops, latency);
    const Vertex out_leaf = c.leaf_of(out_nic), in_leaf = c.leaf_of(in_nic);
    add_link_hop(out_nic, out_leaf, 1.0, r.hops, latency);
    route_in_network(out_leaf, in_leaf, r.hops, latency);
    add_link_hop(in_leaf, in_nic, 1.0, r.hops, latency);
    route_in_node(in_nic, dst, 1.0, r.hops, latency);
  }
  merge(r.hops);
  r.latency = Seconds(latency);
  return r;
}

BytesPerSecond Router::bottleneck(int src_gpu, int dst_gpu) const {
  const Route r = route(src_gpu, dst_gpu);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& h : r.hops) best = std::min(best, cluster_->link(h.link).bandwidth.value() / h.share);
  return BytesPerSecond(best);
}

}  // namespace parasim::topology
