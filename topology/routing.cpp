#include "topology/routing.hpp"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <boost/graph/dijkstra_shortest_paths_no_color_map.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace parasim::topology {

std::int64_t link_cost(const LinkInfo& link) {
  return std::max<std::int64_t>(1, std::llround(1e15 / link.bandwidth.value()));
}

namespace {

constexpr std::int64_t kUnreachable = std::numeric_limits<std::int64_t>::max();

// Node 0's links alone, and the network's switches alone: compact graphs for the least-cost searches.
using WeightedGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                            boost::property<boost::edge_weight_t, std::int64_t>>;

// Keeps node 0's links that leave a forwarding vertex or the root. The search runs from the
// destination; links are symmetric, so its distances are the distances *to* the root, and a vertex
// is expanded only if a route may pass through it.
struct RegionEdges {
  const WeightedGraph* node = nullptr;
  const Graph* g = nullptr;
  Vertex root = 0;
  bool operator()(const WeightedGraph::edge_descriptor& e) const {
    const Vertex u = boost::source(e, *node);
    return u == root || forwards_traffic((*g)[u].kind);
  }
};


void merge(std::vector<Hop>& hops) {
  std::sort(hops.begin(), hops.end(), [](const Hop& a, const Hop& b) { return a.link < b.link; });
  std::vector<Hop> out;
  for (const auto& h : hops) {
    if (!out.empty() && out.back().link == h.link) out.back().share += h.share;
    else out.push_back(h);
  }
  hops = std::move(out);
}

// Node 0's links and the network's: routes inside a node are walked in node 0.
std::vector<std::int64_t> link_costs(const Cluster& cluster) {
  std::vector<std::int64_t> cost;
  const std::size_t network = cluster.first_network_link();
  cost.reserve(cluster.links_per_node() + cluster.link_count() - network);
  // Links come in runs of one bandwidth (a node's NVLinks, the NIC cables, the uplinks): its cost
  // is computed once per run.
  double bandwidth = -1;
  std::int64_t last = 0;
  const auto add = [&](std::size_t id) {
    const auto& link = cluster.link(id);
    if (link.bandwidth.value() != bandwidth) bandwidth = link.bandwidth.value(), last = link_cost(link);
    cost.push_back(last);
  };
  for (std::size_t id = 0; id < cluster.links_per_node(); ++id) add(id);
  for (std::size_t id = network; id < cluster.link_count(); ++id) add(id);
  return cost;
}

}  // namespace

// The network's switches alone, as a compact graph for the distances to a leaf: compressed rows
// read at once out of the switches' rows (an adjacency list allocates a property per edge, and a
// 16K-GPU network has 65k links between switches).
struct Router::SwitchGraph {
  using Graph = boost::compressed_sparse_row_graph<boost::directedS, boost::no_property, SwitchCost>;
  Graph graph;
};

Router::Router(const Cluster& cluster)
    : cluster_(&cluster),
      node_size_(cluster.node_size()),
      cost_(link_costs(cluster)),
      network_links_(cluster.first_network_link()),
      switch_graph_(std::make_unique<SwitchGraph>()),
      node_routes_(new std::atomic<const NodeRoute*>[node_size_ * node_size_]) {
  for (std::size_t i = 0; i < node_size_ * node_size_; ++i) node_routes_[i].store(nullptr, std::memory_order_relaxed);
  measure_node();
  index_network();
  symmetry_ = LeafSymmetry(cluster, leaf_cablings());
  find_pods();
  measure_legs();
}

// All nodes are laid out alike, so node 0's distances serve every node.
void Router::measure_node() {
  const Cluster& cluster = *cluster_;
  const Graph& g = cluster.graph();
  WeightedGraph node(node_size_);
  for (std::size_t id = 0; id < cluster.links_per_node(); ++id) {
    const Edge e = cluster.edge(id);
    boost::add_edge(boost::source(e, g), boost::target(e, g), cost(id), node);
  }
  node_distance_.resize(node_size_ * node_size_, kUnreachable);
  for (std::size_t to = 0; to < node_size_; ++to) {
    boost::filtered_graph<WeightedGraph, RegionEdges> region(node, RegionEdges{&node, &g, to});
    const auto distances = boost::make_iterator_property_map(node_distance_.data() + to * node_size_, boost::identity_property_map());
    boost::dijkstra_shortest_paths(region, static_cast<Vertex>(to), boost::distance_map(distances).distance_inf(kUnreachable));
  }
}

namespace {

// The switch graph's edges row by row (each row by target), read in place for the compressed
// graph's sorted-edges constructor: (source, target) pairs or their costs.
template <class Rows, bool kCosts>
class RowEdges {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = std::conditional_t<kCosts, Router::SwitchCost, std::pair<std::size_t, std::size_t>>;
  using difference_type = std::ptrdiff_t;
  using pointer = const value_type*;
  using reference = const value_type&;

  RowEdges(const Rows& rows, std::size_t row, Vertex first) : rows_(&rows), row_(row), first_(first) { settle(); }
  reference operator*() const { return current_; }
  pointer operator->() const { return &current_; }
  RowEdges& operator++() {
    ++k_;
    settle();
    return *this;
  }
  RowEdges operator++(int) {
    RowEdges before = *this;
    ++*this;
    return before;
  }
  bool operator==(const RowEdges& o) const { return row_ == o.row_ && k_ == o.k_; }

 private:
  // Past empty rows, and the edge there read.
  void settle() {
    while (row_ < rows_->size() && k_ == (*rows_)[row_].to_switches.size()) ++row_, k_ = 0;
    if (row_ == rows_->size()) return;
    const auto& out = (*rows_)[row_].to_switches[k_];
    if constexpr (kCosts) current_ = {out.cost};
    else current_ = {row_, out.to - first_};
  }
  const Rows* rows_;
  std::size_t row_, k_ = 0;
  Vertex first_;
  value_type current_{};
};

}  // namespace

std::size_t Router::SwitchLinks::slot_of(Vertex target) const {
  const auto it = std::lower_bound(to_switches.begin(), to_switches.end(), target, [](const Out& o, Vertex t) { return o.to < t; });
  return it != to_switches.end() && it->to == target ? static_cast<std::size_t>(it - to_switches.begin()) : to_switches.size();
}

// One pass over the network's links: each switch's links and the NICs' cables; the switch graph is
// then read out of the switches' rows.
void Router::index_network() {
  const Cluster& cluster = *cluster_;
  const Graph& g = cluster.graph();
  const Vertex first = cluster.first_switch();
  const std::size_t switches = cluster.switch_count();
  switch_links_.resize(switches);
  for (std::size_t s = 0; s < switches; ++s) switch_links_[s].to_switches.reserve(boost::out_degree(first + s, g));
  cables_.resize(static_cast<std::size_t>(cluster.node_count() * cluster.spec().node.nics.count));
  min_switch_link_cost_ = std::numeric_limits<std::int64_t>::max();
  std::size_t edges = 0;
  for (std::size_t id = network_links_; id < cluster.link_count(); ++id) {
    const auto [u, v] = cluster.ends(id);
    if (u < first || v < first) {
      // A NIC's cable (the network's only links with an end inside a node).
      const bool up = u < first;
      auto& c = cables_[cluster.nic_index(up ? u : v)];
      c.leaf = up ? v : u;
      (up ? c.up : c.down) = id;
      (up ? c.up_latency : c.down_latency) = cluster.link(id).latency.value();
      if (up) continue;
    }
    auto& links = switch_links_[u - first];
    links.min_cost = std::min(links.min_cost, cost(id));
    if (v >= first) {
      links.to_switches.push_back({v, id, cost(id)});
      min_switch_link_cost_ = std::min(min_switch_link_cost_, cost(id));
      ++edges;
    }
  }
  const auto by_target = [](const SwitchLinks::Out& a, const SwitchLinks::Out& b) { return a.to < b.to; };
  for (auto& links : switch_links_) {
    auto& out = links.to_switches;
    if (!std::is_sorted(out.begin(), out.end(), by_target)) std::sort(out.begin(), out.end(), by_target);
  }
  using Pairs = RowEdges<std::vector<SwitchLinks>, false>;
  using Costs = RowEdges<std::vector<SwitchLinks>, true>;
  switch_graph_->graph = SwitchGraph::Graph(boost::edges_are_sorted, Pairs(switch_links_, 0, first), Pairs(switch_links_, switches, first),
                                            Costs(switch_links_, 0, first), switches, edges);
  network_distance_.resize(cluster.leaf_count());
}

// The network's pods as the cluster labels its switches, each pod's in vertex order.
Router::Pods Router::pods_of(const Cluster& c) {
  const Graph& g = c.graph();
  const Vertex first = c.first_switch();
  Pods p;
  p.pod.assign(c.switch_count(), -1);
  p.place.assign(c.switch_count(), 0);
  for (std::size_t s = 0; s < c.switch_count(); ++s) {
    const int k = g[first + s].pod;
    if (k < 0) continue;
    if (static_cast<std::size_t>(k) >= p.members.size()) p.members.resize(static_cast<std::size_t>(k) + 1);
    p.pod[s] = k;
    p.place[s] = static_cast<std::uint32_t>(p.members[static_cast<std::size_t>(k)].size());
    p.members[static_cast<std::size_t>(k)].push_back(first + s);
  }
  return p;
}

// Pod k's i-th switch lists, target for target, what pod 0's i-th lists with pod 0 read for pod k:
// the same costs, its targets in its own pod or shared. Rows are by target; pods' switches are
// contiguous in vertex order where a network is built pod by pod, and anything else fails here.
bool Router::pods_cabled_alike(const Pods& p) const {
  const Vertex first = cluster_->first_switch();
  const auto same = [&](const SwitchLinks::Out& t, const SwitchLinks::Out& t0, int k) {
    if (t.cost != t0.cost) return false;
    const int kt = p.pod[t.to - first];
    if (kt == k) return p.pod[t0.to - first] == 0 && p.place[t.to - first] == p.place[t0.to - first];
    return kt < 0 && t.to == t0.to;
  };
  for (std::size_t k = 1; k < p.members.size(); ++k) {
    if (p.members[k].size() != p.members[0].size()) return false;
    for (std::size_t i = 0; i < p.members[k].size(); ++i) {
      const auto& row = switch_links_[p.members[k][i] - first].to_switches;
      const auto& row0 = switch_links_[p.members[0][i] - first].to_switches;
      if (row.size() != row0.size()) return false;
      for (std::size_t j = 0; j < row.size(); ++j) {
        if (!same(row[j], row0[j], static_cast<int>(k))) return false;
      }
    }
  }
  return true;
}

// Every switch of no pod (the cores) reaches each pod as it reaches pod 0: place for place, at the
// same costs, in target order.
bool Router::pods_shared_alike(const Pods& p) const {
  const Vertex first = cluster_->first_switch();
  std::vector<std::size_t> seen(p.members.size());
  std::vector<const SwitchLinks::Out*> to_pod0;
  for (std::size_t s = 0; s < p.pod.size(); ++s) {
    if (p.pod[s] >= 0) continue;
    const auto& row = switch_links_[s].to_switches;
    to_pod0.clear();
    for (const auto& t : row) {
      if (p.pod[t.to - first] == 0) to_pod0.push_back(&t);
    }
    std::fill(seen.begin(), seen.end(), 0);
    for (const auto& t : row) {
      const int k = p.pod[t.to - first];
      if (k <= 0) continue;
      auto& r = seen[static_cast<std::size_t>(k)];
      if (r >= to_pod0.size() || to_pod0[r]->cost != t.cost || p.place[to_pod0[r]->to - first] != p.place[t.to - first]) return false;
      ++r;
    }
    for (std::size_t k = 1; k < seen.size(); ++k) {
      if (seen[k] != to_pod0.size()) return false;
    }
  }
  return true;
}

void Router::find_pods() {
  Pods p = pods_of(*cluster_);
  p.alike = p.members.size() >= 2 && pods_cabled_alike(p) && pods_shared_alike(p);
  if (p.alike) pods_ = std::move(p);
}

// Every cable is two links, 2k and 2k + 1: a leaf's links in are its row's links out, reversed.
std::vector<std::vector<LeafSymmetry::Cabling>> Router::leaf_cablings() const {
  const Cluster& c = *cluster_;
  const Graph& g = c.graph();
  const Vertex first = c.first_switch();
  std::vector<std::vector<LeafSymmetry::Cabling>> out(c.switch_count());
  for (std::size_t s = 0; s < out.size(); ++s) {
    if (g[first + s].kind != VertexKind::leaf) continue;
    auto& list = out[s];
    list.reserve(2 * switch_links_[s].to_switches.size());
    for (const auto& o : switch_links_[s].to_switches) {
      const auto& up = c.link(o.link);
      const auto& down = c.link(Cluster::reverse_link(o.link));
      list.emplace_back(o.to, true, up.bandwidth.value(), up.latency.value());
      list.emplace_back(o.to, false, down.bandwidth.value(), down.latency.value());
    }
  }
  return out;
}

void LinkLoads::clear() {
  for (const std::size_t link : touched_) {
    used_[link] = 0;
  }
  touched_.clear();
  leaf_pairs.clear();
  flushed_leaves.clear();
  max_latency = 0;
}

const Router::NicCable& Router::cable(Vertex nic) const { return cables_[cluster_->nic_index(nic)]; }

// Walks the least-cost DAG from `from` to `to`, splitting the share evenly over the next hops w of v
// whose distance is v's less the link's cost (`next_hops(v, out)` lists them as (w, link id));
// each hop goes to sink(v, w, link, share, share x latency). The walk's vertices lie in [lo, lo + span).
template <class Distance, class NextHops, class Sink>
void Router::ecmp_walk(Vertex from, Vertex to, double share, Vertex lo, std::size_t span, Distance dist, NextHops next_hops,
                       Sink&& sink) const {
  if (dist(from) == kUnreachable) throw std::logic_error("no route");
  // A level's vertices in increasing order, each with its share; the parts reaching a vertex of the
  // next level are summed in the order they were sent (by sender, then by link), in a dense
  // accumulator over the walk's vertices (a core level of a three-tier fabric gets ~1,400 parts).
  std::vector<std::pair<Vertex, double>> level{{from, share}};
  std::vector<std::pair<Vertex, std::size_t>> choices;
  std::vector<double> sum(span, 0.0);
  std::vector<unsigned char> reached(span, 0);
  std::vector<Vertex> next;
  while (!(level.size() == 1 && level.front().first == to)) {
    next.clear();
    for (const auto& [v, s] : level) {
      choices.clear();
      next_hops(v, choices);
      // Distances that do not belong to the graph would leave the walk nowhere to go.
      if (choices.empty()) throw std::logic_error("no least-cost next hop");
      const double part = s / static_cast<double>(choices.size());
      for (const auto& [w, link] : choices) {
        sink(v, w, link, part, part * cluster_->link(link).latency.value());
        const std::size_t k = w - lo;
        if (reached[k]) {
          sum[k] += part;
        } else {
          reached[k] = 1;
          sum[k] = part;
          next.push_back(w);
        }
      }
    }
    std::sort(next.begin(), next.end());
    level.clear();
    for (const Vertex w : next) {
      level.emplace_back(w, sum[w - lo]);
      reached[w - lo] = 0;
    }
  }
}

// The next hops of v toward a destination by scanning v's links (the cluster has one link per
// direction between two vertices, so a link found is the link to its vertex).
template <class Distance, class Allowed>
void Router::scan_next_hops(Vertex v, Distance dist, Allowed allowed, std::vector<std::pair<Vertex, std::size_t>>& out) const {
  const Graph& g = cluster_->graph();
  for (auto [e, e_end] = boost::out_edges(v, g); e != e_end; ++e) {
    const Vertex w = boost::target(*e, g);
    if (allowed(w) && dist(w) != kUnreachable && dist(w) + cost(g[*e].id) == dist(v)) out.emplace_back(w, g[*e].id);
  }
}

// Inside a node: only its own vertices, and only switches and CPUs in transit. Walked once in node 0
// per pair of local vertices; node n's route is the same with its link ids shifted.
const Router::NodeRoute& Router::node_route(std::size_t from, std::size_t to) const {
  auto& slot = node_routes_[from * node_size_ + to];
  if (const auto* known = slot.load(std::memory_order_acquire)) return *known;
  std::lock_guard<std::mutex> lock(node_routes_mutex_);
  if (const auto* known = slot.load(std::memory_order_acquire)) return *known;
  const Graph& g = cluster_->graph();
  const auto dist = [&](Vertex v) { return node_distance_[to * node_size_ + v]; };
  const auto allowed = [&](Vertex w) { return w < node_size_ && (w == to || forwards_traffic(g[w].kind)); };
  const auto next_hops = [&](Vertex v, auto& out) { scan_next_hops(v, dist, allowed, out); };
  auto& r = *node_route_store_.emplace_back(std::make_unique<NodeRoute>());
  ecmp_walk(static_cast<Vertex>(from), static_cast<Vertex>(to), 1.0, 0, node_size_, dist, next_hops, [&](Vertex, Vertex, std::size_t link, double share, double latency) {
    r.hops.push_back({link, share});
    r.latencies.push_back(latency);
  });
  slot.store(&r, std::memory_order_release);
  return r;
}

template <class Sink>
void Router::route_in_node(Vertex from, Vertex to, Sink&& sink) const {
  if (from == to) return;
  const Vertex base = from - from % node_size_;
  const auto& r = node_route(from - base, to - base);
  const std::size_t shift = base / node_size_ * cluster_->links_per_node();
  for (std::size_t i = 0; i < r.hops.size(); ++i) sink(r.hops[i].link + shift, r.hops[i].share, r.latencies[i]);
}

Router::~Router() = default;

const std::vector<std::int64_t>& Router::distances_to(Vertex leaf) const {
  auto& row = network_distance_[static_cast<std::size_t>(cluster_->graph()[leaf].index)];
  if (!row.empty()) return row;
  const Vertex first = cluster_->first_switch();
  const Vertex rep = symmetry_.representative(leaf);
  if (rep != leaf) {
    // Swapping the two leaves maps the network onto itself: the representative's distances with
    // theirs exchanged.
    row = distances_to(rep);
    std::swap(row[leaf - first], row[rep - first]);
    return row;
  }
  if (const int q = pods_.alike ? pods_.pod[leaf - first] : 0; q > 0) {
    // Exchanging pods 0 and q maps the switch graph onto itself (find_pods): the same leaf of pod
    // 0's distances, exchanged.
    const auto& base = distances_to(pods_.members[0][pods_.place[leaf - first]]);
    row.resize(base.size());
    for (std::size_t v = 0; v < base.size(); ++v) row[v] = base[pods_.swapped(first + v, first, q) - first];
    return row;
  }
  row.assign(cluster_->switch_count(), kUnreachable);
  const auto& sg = switch_graph_->graph;
  const auto distances = boost::make_iterator_property_map(row.data(), boost::identity_property_map());
  boost::dijkstra_shortest_paths_no_color_map(
      sg, leaf - first, boost::weight_map(boost::get(&SwitchCost::value, sg)).distance_map(distances).distance_inf(kUnreachable));
  return row;
}

const Router::LeafRoute& Router::leaf_route(const LeafPairImage& image) const {
  std::lock_guard<std::mutex> lock(leaf_routes_mutex_);
  auto it = leaf_routes_.find({image.from, image.to});
  if (it != leaf_routes_.end()) return it->second;  // std::map nodes never move
  const Vertex first = cluster_->first_switch(), to_leaf = image.to;
  const auto& row = distances_to(to_leaf);
  const auto dist = [&](Vertex v) { return row[v - first]; };
  const auto next_hops = [&](Vertex v, std::vector<std::pair<Vertex, std::size_t>>& out) {
    // Only the destination itself can follow a switch that is closer to it than its cheapest link
    // plus the cheapest link anywhere: any other w would have 0 < dist(w) = dist(v) − cost(v, w) <
    // that cheapest link. The last hop of every route is such a step; found by a lookup instead
    // of a scan of the switch's links (a spine of a two-tier fabric reaches every leaf).
    const auto& links = switch_links_[v - first];
    if (dist(v) - links.min_cost < min_switch_link_cost_) {
      const std::size_t k = links.slot_of(to_leaf);
      if (k < links.to_switches.size() && links.slot(k).cost == dist(v)) out.emplace_back(to_leaf, links.slot(k).link);
      return;
    }
    for (const auto& o : links.to_switches) {
      if (dist(o.to) != kUnreachable && dist(o.to) + o.cost == dist(v)) out.emplace_back(o.to, o.link);
    }
  };
  LeafRoute r;
  const Graph& g = cluster_->graph();
  const auto slot = [&](Vertex leaf, Vertex other) {
    return static_cast<std::uint32_t>(switch_links_[leaf - first].slot_of(other));
  };
  ecmp_walk(image.from, to_leaf, 1.0, first, cluster_->switch_count(), dist, next_hops, [&](Vertex u, Vertex v, std::size_t link, double share, double latency) {
    const bool leaf_u = g[u].kind == VertexKind::leaf, leaf_v = g[v].kind == VertexKind::leaf;
    if (leaf_u && leaf_v) r.ends.push_back({u, v, {link, share}, true, 0, true}), r.leaf_to_leaf = true;
    else if (leaf_u) r.ends.push_back({u, v, {link, share}, true, slot(u, v)});
    else if (leaf_v) r.ends.push_back({u, v, {link, share}, false, slot(v, u)});
    else r.middle.push_back({link, share});
    r.latency += latency;
  });
  return leaf_routes_.emplace(std::pair{image.from, image.to}, std::move(r)).first->second;
}

std::size_t Router::renamed(const LeafRoute::End& end, const LeafPairImage& image) const {
  const Vertex first = cluster_->first_switch();
  if (end.between_leaves) {
    const Vertex u = image.back(end.from), v = image.back(end.to);
    if (u == end.from && v == end.to) return end.hop.link;
    const auto& links = switch_links_[u - first];
    return links.slot(links.slot_of(v)).link;
  }
  // A renamed leaf is cabled like its representative: the same switches in the same order.
  const Vertex leaf = image.back(end.leaf_sends ? end.from : end.to);
  if (leaf == (end.leaf_sends ? end.from : end.to)) return end.hop.link;
  const std::size_t up = switch_links_[leaf - first].slot(end.slot).link;
  return end.leaf_sends ? up : Cluster::reverse_link(up);
}

int Router::sender_of(int src_gpu, int dst_gpu) const {
  // PXN: on NVSwitch nodes hand the data over NVLink to the local GPU on the destination's rail.
  const Cluster& c = *cluster_;
  if (c.spec().node.fabric != IntraNodeFabric::nvswitch) return src_gpu;
  return c.node_of(src_gpu) * c.gpus_per_node() + c.local_index(dst_gpu);
}

template <class Sink>
Vertex Router::leave_node(int src_gpu, int dst_gpu, Sink&& sink) const {
  const Cluster& c = *cluster_;
  const int sender = sender_of(src_gpu, dst_gpu);
  const Vertex relay = c.gpu_vertex(sender), nic = c.nic_of(sender);
  route_in_node(c.gpu_vertex(src_gpu), relay, sink);
  route_in_node(relay, nic, sink);
  return nic;
}

template <class Sink>
void Router::node_parts(int src_gpu, int dst_gpu, Sink&& sink, Vertex& out_leaf, Vertex& in_leaf) const {
  const Cluster& c = *cluster_;
  out_leaf = in_leaf = 0;
  const int src_node = c.node_of(src_gpu), dst_node = c.node_of(dst_gpu);
  if (src_node == dst_node) {
    const Vertex src = c.gpu_vertex(src_gpu), dst = c.gpu_vertex(dst_gpu);
    if (c.spec().node.peer_to_peer) {
      route_in_node(src, dst, sink);
    } else {
      const Vertex host = c.cpu_of(src_gpu);  // staged in the sender's host memory
      route_in_node(src, host, sink);
      route_in_node(host, dst, sink);
    }
    return;
  }
  const Crossing x = crossing(src_gpu, dst_gpu);
  for (const auto& h : x.out->hops) sink(h.link + x.src_shift, h.share, h.latency);
  out_leaf = x.up->leaf;
  in_leaf = x.down->leaf;
  sink(x.up->up, 1.0, x.up->up_latency);
  sink(x.down->down, 1.0, x.down->down_latency);
  for (const auto& h : x.in->hops) sink(h.link + x.dst_shift, h.share, h.latency);
}

Route Router::route(int src_gpu, int dst_gpu) const {
  Route r;
  double latency = 0.0;
  Vertex out_leaf = 0, in_leaf = 0;
  node_parts(src_gpu, dst_gpu, [&](std::size_t link, double share, double hop_latency) {
    r.hops.push_back({link, share});
    latency += hop_latency;
  }, out_leaf, in_leaf);
  if (out_leaf != in_leaf) {
    const auto image = symmetry_.image(out_leaf, in_leaf);
    const auto& net = leaf_route(image);
    for (const auto& end : net.ends) r.hops.push_back({renamed(end, image), end.hop.share});
    r.hops.insert(r.hops.end(), net.middle.begin(), net.middle.end());
    latency += net.latency;
  }
  merge(r.hops);
  r.latency = Seconds(latency);
  return r;
}

// The far twins of a collective need only a route's latency (accumulate_network), and there are
// thousands of them: its parts inside its nodes are looked up, not walked.
void Router::measure_legs() {
  const Cluster& c = *cluster_;
  if (c.spec().node.nics.count == 0 || c.node_count() < 2) return;
  const int gpus = c.gpus_per_node();
  const Vertex first_nic = node_size_ - static_cast<Vertex>(c.spec().node.nics.count);
  const auto record = [](NodeLeg& leg) {
    return [&leg](std::size_t link, double share, double latency) {
      leg.hops.push_back({link, share, latency});
      leg.latency += latency;
    };
  };
  legs_.leaving.resize(static_cast<std::size_t>(gpus * gpus));
  legs_.arriving.resize(static_cast<std::size_t>(gpus));
  for (int src = 0; src < gpus; ++src) {
    for (int dst = 0; dst < gpus; ++dst) {
      // The destination in node 1: only its local index matters to the part in node 0.
      auto& leg = legs_.leaving[static_cast<std::size_t>(src * gpus + dst)];
      leg.nic = leave_node(src, gpus + dst, record(leg)) - first_nic;
    }
  }
  for (int dst = 0; dst < gpus; ++dst) {
    auto& leg = legs_.arriving[static_cast<std::size_t>(dst)];
    const Vertex nic = c.nic_of(dst);
    leg.nic = nic - first_nic;
    route_in_node(nic, c.gpu_vertex(dst), record(leg));
  }
}

Router::Crossing Router::crossing(int src_gpu, int dst_gpu) const {
  const Cluster& c = *cluster_;
  if (legs_.leaving.empty()) throw std::logic_error(fmt::format("node {} has no NIC", c.spec().node.name));
  const auto gpus = static_cast<std::size_t>(c.gpus_per_node());
  const auto nics = static_cast<std::size_t>(c.spec().node.nics.count);
  const auto src_node = static_cast<std::size_t>(c.node_of(src_gpu)), dst_node = static_cast<std::size_t>(c.node_of(dst_gpu));
  const auto dst_local = static_cast<std::size_t>(c.local_index(dst_gpu));
  Crossing x;
  x.out = &legs_.leaving[static_cast<std::size_t>(c.local_index(src_gpu)) * gpus + dst_local];
  x.in = &legs_.arriving[dst_local];
  x.up = &cables_[src_node * nics + x.out->nic];
  x.down = &cables_[dst_node * nics + x.in->nic];
  x.src_shift = src_node * c.links_per_node();
  x.dst_shift = dst_node * c.links_per_node();
  return x;
}

double Router::node_parts_latency(int src_gpu, int dst_gpu, Vertex& out_leaf, Vertex& in_leaf) const {
  const Crossing x = crossing(src_gpu, dst_gpu);
  // Summed in node_parts()'s order: the same double, to the bit.
  double latency = x.out->latency;
  latency += x.up->up_latency;
  latency += x.down->down_latency;
  for (const auto& h : x.in->hops) latency += h.latency;
  out_leaf = x.up->leaf;
  in_leaf = x.down->leaf;
  return latency;
}

template <bool kNodeLinks>
void Router::add_route(int src_gpu, int dst_gpu, double share, LinkLoads& loads) const {
  double latency = 0.0;
  Vertex out_leaf = 0, in_leaf = 0;
  if (!kNodeLinks && !legs_.leaving.empty() && cluster_->node_of(src_gpu) != cluster_->node_of(dst_gpu)) {
    latency = node_parts_latency(src_gpu, dst_gpu, out_leaf, in_leaf);
  } else {
    node_parts(src_gpu, dst_gpu, [&](std::size_t link, double hop_share, double hop_latency) {
      if constexpr (kNodeLinks) loads.add(link, share * hop_share);
      latency += hop_latency;
    }, out_leaf, in_leaf);
  }
  if (out_leaf != in_leaf) {
    // The network part and its latency are added when the loads are flushed, once per leaf pair.
    auto& pair = loads.leaf_pairs[{out_leaf, in_leaf}];
    pair.share += share;
    pair.node_latency = std::max(pair.node_latency, latency);
  } else {
    loads.max_latency = std::max(loads.max_latency, latency);
  }
}

void Router::accumulate(int src_gpu, int dst_gpu, double share, LinkLoads& loads) const {
  add_route<true>(src_gpu, dst_gpu, share, loads);
}

void Router::accumulate_network(int src_gpu, int dst_gpu, double share, LinkLoads& loads) const {
  add_route<false>(src_gpu, dst_gpu, share, loads);
}

void Router::accumulate_to_leaf(int gpu, double share, LinkLoads& loads) const {
  const Cluster& c = *cluster_;
  double latency = 0;
  const auto sink = [&](std::size_t link, double hop_share, double hop_latency) {
    loads.add(link, share * hop_share);
    latency += hop_latency;
  };
  const Vertex v = c.gpu_vertex(gpu), nic = c.nic_of(gpu);
  route_in_node(v, nic, sink);
  const auto& cab = cable(nic);
  sink(cab.up, 1.0, cab.up_latency);
  sink(cab.down, 1.0, cab.down_latency);
  route_in_node(nic, v, sink);
  loads.max_latency = std::max(loads.max_latency, latency);
}

void Router::flush(LinkLoads& loads, const LinkLoads* only) const {
  struct Shared {
    const LeafRoute* route = nullptr;
    double share = 0, node_latency = 0;
  };
  std::map<std::pair<Vertex, Vertex>, Shared> by_image;
  const auto add = [&](std::size_t link, double load) {
    if (!only || only->has(link)) loads.add(link, load);
  };
  const auto near = [&](Vertex leaf) { return std::binary_search(only->flushed_leaves.begin(), only->flushed_leaves.end(), leaf); };
  for (const auto& [leaves, pair] : loads.leaf_pairs) {
    const auto image = symmetry_.image(leaves.first, leaves.second);
    auto& shared = by_image[{image.from, image.to}];
    if (!shared.route) shared.route = &leaf_route(image);
    if (!only) loads.flushed_leaves.push_back(leaves.first), loads.flushed_leaves.push_back(leaves.second);
    const bool ends_read = !only || shared.route->leaf_to_leaf || near(leaves.first) || near(leaves.second);
    if (ends_read) {
      for (const auto& end : shared.route->ends) add(renamed(end, image), pair.share * end.hop.share);
    }
    shared.share += pair.share;
    shared.node_latency = std::max(shared.node_latency, pair.node_latency);
  }
  for (const auto& [representatives, shared] : by_image) {
    for (const auto& h : shared.route->middle) add(h.link, shared.share * h.share);
    loads.max_latency = std::max(loads.max_latency, shared.node_latency + shared.route->latency);
  }
  loads.leaf_pairs.clear();
  std::sort(loads.flushed_leaves.begin(), loads.flushed_leaves.end());
  loads.flushed_leaves.erase(std::unique(loads.flushed_leaves.begin(), loads.flushed_leaves.end()), loads.flushed_leaves.end());
}

BytesPerSecond Router::bottleneck(int src_gpu, int dst_gpu) const {
  const Route r = route(src_gpu, dst_gpu);
  double best = std::numeric_limits<double>::infinity();
  for (const auto& h : r.hops) best = std::min(best, cluster_->link(h.link).bandwidth.value() / h.share);
  return BytesPerSecond(best);
}

}  // namespace parasim::topology
