#include "sim/collectives.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "topology/group_bandwidth.hpp"

namespace parasim::sim {

using calibrate::Fabric;
using workload::Collective;

std::string_view algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::ring: return "ring";
    case Algorithm::tree: return "tree";
    case Algorithm::nvls: return "nvls";
    case Algorithm::hierarchical: return "hierarchical";
    case Algorithm::direct: return "direct";
    case Algorithm::sharp: return "sharp";
    case Algorithm::pairwise: return "pairwise";
  }
  return "";
}

Fabric fabric_of(topology::LinkKind kind) {
  switch (kind) {
    case topology::LinkKind::nvlink: return Fabric::nvlink;
    case topology::LinkKind::pcie:
    case topology::LinkKind::inter_socket: return Fabric::pcie;
    default: return Fabric::network;
  }
}

CollectiveLowering::CollectiveLowering(const topology::Router& router, const calibrate::Profile& profile)
    : router_(&router), profile_(&profile) {}

CollectiveLowering::NearNodes::NearNodes(const topology::Cluster& cluster, std::span<const int> ranks, std::vector<unsigned char>& marks)
    : cluster_(&cluster), marks_(&marks) {
  marks.resize(static_cast<std::size_t>(cluster.node_count()), 0);
  for (const int rank : ranks) {
    auto& mark = marks[static_cast<std::size_t>(cluster.node_of(rank))];
    if (!mark) nodes_.push_back(cluster.node_of(rank));
    mark = 1;
  }
}

CollectiveLowering::NearNodes::~NearNodes() {
  for (const int node : nodes_) (*marks_)[static_cast<std::size_t>(node)] = 0;
}

void CollectiveLowering::NearNodes::add(const topology::Router& router, int a, int b, double share, topology::LinkLoads& all) const {
  if (near(a) || near(b)) router.accumulate(a, b, share, all);
  else router.accumulate_network(a, b, share, all);
}

topology::LinkLoads& CollectiveLowering::fresh(std::size_t i) {
  // Made on first use: each is dense over the cluster's links, and only the hierarchical
  // all-reduce needs four.
  while (scratch_.size() <= i) scratch_.emplace_back(router_->cluster().link_count());
  scratch_[i].clear();
  return scratch_[i];
}

LinkUsage CollectiveLowering::finish(topology::LinkLoads& all, double factor, int steps, topology::LinkLoads& own) const {
  router_->flush(own);
  router_->flush(all, &own);
  // Symmetry: a link only twins cross mirrors one the representative crosses, with the same load
  // from every (equally symmetric) transfer; keeping the representative's links loses no constraint.
  // Each link's load is divided by its fabric's efficiency; each link is read once (a cache miss
  // on a large cluster).
  const auto& links = own.links();  // in increasing id
  LinkUsage u;
  u.bytes_factor = factor;
  u.steps = steps;
  double rate = std::numeric_limits<double>::infinity();
  int slowest = 0;
  u.usage.reserve(links.size());
  u.capacities.reserve(links.size());
  for (const std::size_t link : links) {
    const auto& info = router_->cluster().link(link);
    const Fabric fabric = fabric_of(info.kind);
    const double w = all[link] / profile_->fabric(fabric).efficiency;
    u.usage.push_back({static_cast<FluidModel::ResourceId>(link), w});
    u.capacities.push_back(info.bandwidth.value());
    rate = std::min(rate, info.bandwidth.value() / w);
    slowest = std::max(slowest, static_cast<int>(fabric));  // nvlink < pcie < network
  }
  const double max_latency = std::max(all.max_latency, own.max_latency);
  u.fabric = static_cast<Fabric>(slowest);
  u.step_latency = Seconds(max_latency);  // the wires; price() adds the protocol's latency
  u.alone_rate = rate;
  return u;
}

std::vector<LatencyPart> CollectiveLowering::tree_latency(const std::vector<int>& ring) const {
  // The ring order runs through each island's ranks in turn: its hops say how many islands the tree
  // spans and what a hop inside one and a hop between two cost.
  const auto& cluster = router_->cluster();
  const int n = static_cast<int>(ring.size());
  int crossing = 0;
  LatencyPart inside{Fabric::nvlink, 0, Seconds(0)}, across{Fabric::network, 0, Seconds(0)};
  for (int i = 0; i < n; ++i) {
    const int a = ring[static_cast<std::size_t>(i)], b = ring[static_cast<std::size_t>((i + 1) % n)];
    const auto route = router_->route(a, b);
    Fabric slowest = Fabric::nvlink;
    for (const auto& hop : route.hops) slowest = std::max(slowest, fabric_of(cluster.link(hop.link).kind));
    const bool leaves = cluster.island_of(a) != cluster.island_of(b);
    auto& part = leaves ? across : inside;
    if (leaves) ++crossing;
    part.fabric = std::max(part.fabric, slowest);
    part.step_latency = std::max(part.step_latency, route.latency);
  }
  // Inside one island: a binary tree's depth up and down, every step at the slowest fabric (the
  // figure the profiles' in-node small-message latencies were fitted with).
  if (crossing == 0) return {};
  // Across islands, NCCL's tree: a chain through each island's m ranks under a binary tree over the
  // islands, up and down.
  inside.steps = 2 * (n / crossing - 1);
  across.steps = 2 * static_cast<int>(std::ceil(std::log2(crossing)));
  std::vector<LatencyPart> parts;
  if (inside.steps > 0) parts.push_back(inside);
  parts.push_back(across);
  return parts;
}

const LinkUsage& CollectiveLowering::ring(std::uint64_t group, const workload::Twins& twins, double factor, Pattern pattern) {
  const auto key = std::make_tuple(group, static_cast<int>(Algorithm::ring), static_cast<int>(std::lround(factor * 1e6)) ^ (static_cast<int>(pattern) << 28));
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  auto& all = fresh(0);
  auto& own = fresh(1);
  const NearNodes near(router_->cluster(), twins.front(), near_marks_);
  const auto representative = topology::ring_orders(router_->cluster(), twins.front());
  for (std::size_t t = 0; t < twins.size(); ++t) {
    const auto rings = t == 0 ? representative : topology::ring_orders(router_->cluster(), twins[t]);
    for (const auto& r : rings) {
      for (std::size_t i = 0; i < r.size(); ++i) near.add(*router_, r[i], r[(i + 1) % r.size()], 1.0 / static_cast<double>(rings.size()), all);
    }
  }
  for (const auto& r : representative) {
    for (std::size_t i = 0; i < r.size(); ++i) router_->accumulate(r[i], r[(i + 1) % r.size()], 1.0, own);
  }
  const int n = static_cast<int>(representative.front().size());
  const int steps = pattern == Pattern::tree ? 2 * static_cast<int>(std::ceil(std::log2(n))) : (pattern == Pattern::two_passes ? 2 : 1) * (n - 1);
  LinkUsage u = finish(all, factor, steps, own);
  if (pattern == Pattern::tree) u.parts = tree_latency(representative.front());
  if (!u.parts.empty()) {
    // Twins run at once and the collective ends with the slowest: its network steps take the wires
    // of the slowest route of any twin.
    u.parts.back().step_latency = u.step_latency;
    u.steps = 0;
    for (const auto& part : u.parts) u.steps += part.steps;
  }
  return cache_.emplace(key, std::move(u)).first->second;
}

const LinkUsage& CollectiveLowering::nvls(std::uint64_t group, const workload::Twins& twins) {
  const auto key = std::make_tuple(group, static_cast<int>(Algorithm::nvls), 0);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const auto& cluster = router_->cluster();
  const auto& g = cluster.graph();
  auto& all = fresh(0);
  auto& own = fresh(1);
  const NearNodes near(cluster, twins.front(), near_marks_);
  for (std::size_t t = 0; t < twins.size(); ++t) {
    for (int rank : twins[t]) {
      // Each GPU pushes its buffer into the switch and pulls the reduced result back.
      const auto v = cluster.gpu_vertex(rank);
      for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
        if (g[*e].kind != topology::LinkKind::nvlink) continue;
        const auto back = boost::edge(boost::target(*e, g), v, g).first;
        // In units of the NVLink ring efficiency, which finish() divides by again.
        const double w = profile_->nvlink.efficiency / profile_->nvls_efficiency;
        if (near.near(rank)) all.add(g[*e].id, w), all.add(g[back].id, w);
        if (t == 0) own.set(g[*e].id, 1.0), own.set(g[back].id, 1.0);
        all.max_latency = std::max(all.max_latency, 2 * g[*e].latency.value());
      }
    }
  }
  LinkUsage u = finish(all, 1.0, 2, own);
  u.ranks = static_cast<int>(twins.front().size());
  return cache_.emplace(key, std::move(u)).first->second;
}

const LinkUsage& CollectiveLowering::direct(std::uint64_t group, const workload::Twins& twins) {
  const auto key = std::make_tuple(group, static_cast<int>(Algorithm::direct), 0);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  auto& all = fresh(0);
  auto& own = fresh(1);
  const NearNodes near(router_->cluster(), twins.front(), near_marks_);
  for (const auto& g : twins) near.add(*router_, g[0], g[1], 1.0, all);
  router_->accumulate(twins.front()[0], twins.front()[1], 1.0, own);
  return cache_.emplace(key, finish(all, 1.0, 1, own)).first->second;
}

const LinkUsage& CollectiveLowering::sharp(std::uint64_t group, const workload::Twins& twins) {
  const auto key = std::make_tuple(group, static_cast<int>(Algorithm::sharp), 0);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  auto& all = fresh(0);
  auto& own = fresh(1);
  for (const auto& g : twins) {
    for (int rank : g) router_->accumulate_to_leaf(rank, 1.0, all);
  }
  for (int rank : twins.front()) router_->accumulate_to_leaf(rank, 1.0, own);
  const int steps = 2 * router_->cluster().spec().network.tiers;
  return cache_.emplace(key, finish(all, 1.0, steps, own)).first->second;
}

const LinkUsage& CollectiveLowering::pairwise(std::uint64_t group, const workload::Twins& twins) {
  const auto key = std::make_tuple(group, static_cast<int>(Algorithm::pairwise), 0);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  auto& all = fresh(0);
  auto& own = fresh(1);
  const std::size_t n = twins.front().size();
  // The rate is per-rank traffic (n−1)/n·S per second; each of the n−1 destinations gets 1/(n−1) of it.
  const double share = 1.0 / static_cast<double>(n - 1);
  const NearNodes near(router_->cluster(), twins.front(), near_marks_);
  for (const auto& g : twins) {
    for (int a : g) {
      for (int b : g) {
        if (a != b) near.add(*router_, a, b, share, all);
      }
    }
  }
  for (int a : twins.front()) {
    for (int b : twins.front()) {
      if (a != b) router_->accumulate(a, b, share, own);
    }
  }
  return cache_.emplace(key, finish(all, static_cast<double>(n - 1) / static_cast<double>(n), static_cast<int>(n - 1), own)).first->second;
}

namespace {

// The two levels of a hierarchical collective pipelined: one phase at the buffer's rate, each link
// loaded by both levels' traffic per byte.
LinkUsage pipelined(const topology::Cluster& cluster, const LinkUsage& in, const LinkUsage& out, bool nvls, int island_ranks) {
  std::map<FluidModel::ResourceId, double> weights;
  for (const auto& x : in.usage) weights[x.resource] += x.weight * in.bytes_factor;
  for (const auto& x : out.usage) weights[x.resource] += x.weight * out.bytes_factor;
  LinkUsage u;
  u.bytes_factor = 1.0;
  u.alone_rate = std::numeric_limits<double>::infinity();
  for (const auto& [link, w] : weights) {
    u.usage.push_back({link, w});
    u.capacities.push_back(cluster.link(link).bandwidth.value());
    u.alone_rate = std::min(u.alone_rate, u.capacities.back() / w);
  }
  u.fabric = std::max(in.fabric, out.fabric);
  u.steps = in.steps + out.steps;
  u.step_latency = std::max(in.step_latency, out.step_latency);
  u.parts = {{in.fabric, in.steps, in.step_latency, nvls, island_ranks}, {out.fabric, out.steps, out.step_latency, false, 1}};
  return u;
}

}  // namespace

const LinkUsage& CollectiveLowering::hierarchical(std::uint64_t group, const workload::Twins& twins, bool nvls) {
  const auto key = std::make_tuple(group, static_cast<int>(Algorithm::hierarchical), nvls ? 1 : 0);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const auto& cluster = router_->cluster();
  const auto& g = cluster.graph();
  auto& intra = fresh(0);
  auto& inter = fresh(1);
  auto& own_intra = fresh(2);
  auto& own_inter = fresh(3);
  int m = 0, p = 0;
  const NearNodes near(cluster, twins.front(), near_marks_);
  for (std::size_t t = 0; t < twins.size(); ++t) {
    const auto islands = topology::ranks_by_island(cluster, twins[t]);
    m = static_cast<int>(islands.front().size());
    p = static_cast<int>(islands.size());
    for (const auto& members : islands) {
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (nvls) {
          // As nvls(): the rank's buffer up to the switch and the reduced buffer back.
          const auto v = cluster.gpu_vertex(members[i]);
          for (auto [e, end] = boost::out_edges(v, g); e != end; ++e) {
            if (g[*e].kind != topology::LinkKind::nvlink) continue;
            const auto back = boost::edge(boost::target(*e, g), v, g).first;
            const double w = profile_->nvlink.efficiency / profile_->nvls_efficiency;
            if (near.near(members[i])) intra.add(g[*e].id, w), intra.add(g[back].id, w);
            if (t == 0) own_intra.set(g[*e].id, 1.0), own_intra.set(g[back].id, 1.0);
            intra.max_latency = std::max(intra.max_latency, 2 * g[*e].latency.value());
          }
        } else {
          near.add(*router_, members[i], members[(i + 1) % members.size()], 1.0, intra);
          if (t == 0) router_->accumulate(members[i], members[(i + 1) % members.size()], 1.0, own_intra);
        }
      }
    }
    for (int j = 0; j < m; ++j) {
      for (int i = 0; i < p; ++i) {
        const int a = islands[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
        const int b = islands[static_cast<std::size_t>((i + 1) % p)][static_cast<std::size_t>(j)];
        near.add(*router_, a, b, 1.0, inter);
        if (t == 0) router_->accumulate(a, b, 1.0, own_inter);
      }
    }
  }
  // Per byte of the buffer: reduce-scatter and all-gather in the island, 2(m−1)/m (NVLS: 1 up, 1
  // down, counted by its weights); all-reduce of the 1/m shard across islands, 2(p−1)/p/m.
  const LinkUsage in = finish(intra, nvls ? 1.0 : 2.0 * (m - 1) / m, nvls ? 2 : 2 * (m - 1), own_intra);
  const LinkUsage out = finish(inter, 2.0 * (p - 1) / p / m, 2 * (p - 1), own_inter);
  return cache_.emplace(key, pipelined(cluster, in, out, nvls, m)).first->second;
}

std::string_view protocol_name(Protocol p) { return p == Protocol::simple ? "simple" : "ll"; }

void CollectiveLowering::price(Lowering& l, double bytes) const {
  double total = profile_->collective_launch.value();
  l.protocols.clear();
  l.latencies.clear();
  l.rate_scales.clear();
  for (const auto* p : l.phases) {
    const auto& f = profile_->fabric(p->fabric);
    const double traffic = p->bytes_factor * bytes;
    const std::vector<LatencyPart> parts =
        p->parts.empty() ? std::vector<LatencyPart>{{p->fabric, p->steps, p->step_latency, l.algorithm == Algorithm::nvls, p->ranks}} : p->parts;
    double simple_latency = 0, ll_latency = 0;
    bool nvls = false;
    for (const auto& part : parts) {
      const auto& pf = profile_->fabric(part.fabric);
      const double wires = part.steps * part.step_latency.value();
      nvls = nvls || part.nvls;
      // NVLS's fixed cost, quoted at 8 ranks, grows with the ranks the switch reduces over.
      const double nvls_latency = profile_->nvls_latency.value() * part.ranks / 8.0;
      simple_latency += part.nvls ? wires + nvls_latency : wires + part.steps * pf.step_latency.value();
      ll_latency += part.nvls ? wires + nvls_latency : wires + part.steps * pf.ll_step_latency.value();
    }
    const double ll_scale = f.ll_efficiency / f.efficiency;
    const double simple = simple_latency + traffic / p->alone_rate;
    const double ll = ll_latency + traffic / (p->alone_rate * ll_scale);
    const bool use_ll = ll < simple && !nvls;
    l.protocols.push_back(use_ll ? Protocol::ll : Protocol::simple);
    l.latencies.push_back(Seconds(use_ll ? ll_latency : simple_latency));
    l.rate_scales.push_back(use_ll ? ll_scale : 1.0);
    total += use_ll ? ll : simple;
  }
  l.estimated = Seconds(total);
}

const Lowering& CollectiveLowering::lower(Collective kind, std::uint64_t group, const workload::Twins& twins, double bytes) {
  const ChosenKey memo{static_cast<int>(kind), group, std::bit_cast<std::uint64_t>(bytes)};
  if (auto it = chosen_.find(memo); it != chosen_.end()) return it->second;
  return chosen_.emplace(memo, choose(kind, group, twins, bytes)).first->second;
}

Lowering CollectiveLowering::choose(Collective kind, std::uint64_t group, const workload::Twins& twins, double bytes) {
  const int n = static_cast<int>(twins.front().size());
  const auto& cluster = router_->cluster();
  std::vector<Lowering> options;
  auto add = [&](Algorithm a, std::vector<const LinkUsage*> phases) {
    Lowering l;
    l.algorithm = a;
    l.phases = std::move(phases);
    price(l, bytes);
    options.push_back(std::move(l));
  };
  if (kind == Collective::send_recv) {
    add(Algorithm::direct, {&direct(group, twins)});
    return options.front();
  }
  if (kind == Collective::all_to_all) {
    add(Algorithm::pairwise, {&pairwise(group, twins)});
    return options.front();
  }
  if (kind == Collective::all_gather || kind == Collective::reduce_scatter) {
    add(Algorithm::ring, {&ring(group, twins, static_cast<double>(n - 1) / n, Pattern::one_pass)});
    return options.front();
  }
  add(Algorithm::ring, {&ring(group, twins, 2.0 * (n - 1) / n, Pattern::two_passes)});
  if (n > 2) add(Algorithm::tree, {&ring(group, twins, 2.0, Pattern::tree)});
  const bool nvswitch = cluster.spec().node.fabric == topology::IntraNodeFabric::nvswitch;
  if (cluster.spec().network.sharp && topology::ranks_by_island(cluster, twins.front()).size() > 1) add(Algorithm::sharp, {&sharp(group, twins)});
  if (nvswitch) {
    const auto islands = topology::ranks_by_island(cluster, twins.front());
    const bool even = std::all_of(islands.begin(), islands.end(), [&](const auto& i) { return i.size() == islands.front().size(); });
    if (islands.size() == 1 && profile_->nvls) add(Algorithm::nvls, {&nvls(group, twins)});
    else if (islands.size() > 1 && even && islands.front().size() > 1) {
      add(Algorithm::hierarchical, {&hierarchical(group, twins, false)});
      if (profile_->nvls) add(Algorithm::hierarchical, {&hierarchical(group, twins, true)});
    }
  }
  return *std::min_element(options.begin(), options.end(), [](const Lowering& a, const Lowering& b) { return a.estimated < b.estimated; });
}

}  // namespace parasim::sim
