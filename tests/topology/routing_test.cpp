#include <doctest/doctest.h>

#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <limits>
#include <set>

#include "tests/topology/fixtures.hpp"
#include "topology/routing.hpp"

using namespace parasim;
using namespace parasim::topology;

namespace {
std::vector<LinkKind> kinds(const Cluster& c, const Route& r) {
  std::vector<LinkKind> out;
  for (const auto& h : r.hops) out.push_back(c.link(h.link).kind);
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("GPUs of one NVSwitch node talk over NVLink, not their shared PCIe switch") {
  const Cluster c(test::dgx_cluster(1));
  const Router router(c);
  const Route r = router.route(0, 1);  // GPUs 0 and 1 also share PCIe switch 0
  CHECK(kinds(c, r) == std::vector{LinkKind::nvlink, LinkKind::nvlink});
  CHECK(router.bottleneck(0, 1).value() == doctest::Approx(450e9).scale(0));
  // Two NVLink hops of 0.35 us each.
  CHECK(r.latency.value() == doctest::Approx(0.7e-6).scale(0));
}

TEST_CASE("GPUs on two nodes: out through the NIC on the destination's rail") {
  const Cluster c(test::dgx_cluster(2));
  const Router router(c);
  // GPU 0 -> GPU 8 (node 1, position 0): PCIe to NIC 0, rail-0 leaf, NIC 0, PCIe: 6 links.
  const Route same_rail = router.route(0, 8);
  CHECK(kinds(c, same_rail) == std::vector{LinkKind::pcie, LinkKind::pcie, LinkKind::pcie, LinkKind::pcie, LinkKind::nic, LinkKind::nic});
  CHECK(router.bottleneck(0, 8).value() == doctest::Approx(50e9).scale(0));  // the 400 Gb/s NIC
  // GPU 0 -> GPU 9 (position 1): PXN hands over on NVLink to local GPU 1, whose NIC 1 is on rail 1,
  // like GPU 9's; the traffic never crosses a spine.
  const Route pxn = router.route(0, 9);
  const auto k = kinds(c, pxn);
  CHECK(std::count(k.begin(), k.end(), LinkKind::nvlink) == 2);
  CHECK(std::count(k.begin(), k.end(), LinkKind::leaf_spine) == 0);
  for (const auto& h : pxn.hops) CHECK(h.share == 1.0);
  // Latency: PCIe 0.5 us x 4, NIC 1 us + switch 0.3 us on the uplink, NIC 1 us on the downlink.
  CHECK(same_rail.latency.value() == doctest::Approx(4 * 0.5e-6 + (1e-6 + 0.3e-6) + (1e-6 + 0.3e-6)).scale(0));
}

TEST_CASE("across leaves the flow is split evenly over all spines (ECMP)") {
  const Cluster c(test::dgx_cluster(64));  // 2 leaves per rail, 16 leaves x 32 up / 64 = 8 spines
  REQUIRE(c.spine_count() == 8);
  const Router router(c);
  const Route r = router.route(0, 32 * 8);  // node 0 to node 32: rail 0, other leaf
  int up = 0;
  for (const auto& h : r.hops) {
    if (c.link(h.link).kind == LinkKind::leaf_spine) {
      ++up;
      CHECK(h.share == doctest::Approx(1.0 / 8).scale(0));
    }
  }
  CHECK(up == 16);  // 8 spines up, 8 spines down
  // Each leaf-spine link: 32 x 50 GB/s / 8 = 200 GB/s, carrying 1/8 of the flow; the NIC limits.
  CHECK(router.bottleneck(0, 32 * 8).value() == doctest::Approx(50e9).scale(0));
}

TEST_CASE("a PCIe box: GPUs meet at their switch or the CPUs, and share one NIC") {
  auto spec = test::dgx_cluster(2, 1.0, 1);
  spec.node.fabric = IntraNodeFabric::pcie;
  spec.node.pcie.generation = 4;
  spec.node.gpu.pcie_generation = 4;
  const Cluster c(spec);
  const Router router(c);
  // Gen4 x16: 16 GT/s x 16 lanes x 128/130 / 8 = 31.5 GB/s per direction.
  CHECK(router.bottleneck(0, 1).value() == doctest::Approx(31.5077e9).epsilon(1e-4));
  // GPU 0 (switch 0, socket 0) to GPU 7 (switch 3, socket 1): gpu-sw, sw-cpu, cpu-cpu, cpu-sw, sw-gpu.
  CHECK(kinds(c, router.route(0, 7)) ==
        std::vector{LinkKind::pcie, LinkKind::pcie, LinkKind::pcie, LinkKind::pcie, LinkKind::inter_socket});
  // Across nodes, no PXN without NVLink: GPU 0's own PCIe link to the one NIC limits (31.5 < 50 GB/s).
  CHECK(router.bottleneck(0, 8).value() == doctest::Approx(31.5077e9).epsilon(1e-4));
}

TEST_CASE("without PCIe peer-to-peer, copies between GPUs bounce through host memory") {
  auto spec = test::dgx_cluster(1, 1.0, 1);
  spec.node.fabric = IntraNodeFabric::pcie;
  spec.node.peer_to_peer = false;
  const Cluster c(spec);
  const Router router(c);
  // GPU 0 and GPU 1 share PCIe switch 0, but the copy goes up to CPU 0 and back down:
  // gpu0-sw0, sw0-cpu0, cpu0-sw0, sw0-gpu1; the switch-to-CPU link carries the data both ways.
  CHECK(kinds(c, router.route(0, 1)) == std::vector{LinkKind::pcie, LinkKind::pcie, LinkKind::pcie, LinkKind::pcie});
}

TEST_CASE("a route inside node n is node 0's with its link ids shifted by n nodes' links") {
  // The router walks node-local routes once, in node 0: node 3's copy must cross node 3's own links,
  // the same kinds with the same shares and latency.
  const Cluster c(test::dgx_cluster(4));
  const Router router(c);
  const std::size_t per_node = c.links_per_node();
  REQUIRE(per_node > 0);
  const Route in0 = router.route(0, 5), in3 = router.route(3 * 8 + 0, 3 * 8 + 5);
  REQUIRE(in3.hops.size() == in0.hops.size());
  for (std::size_t i = 0; i < in0.hops.size(); ++i) {
    CHECK(in3.hops[i].link == in0.hops[i].link + 3 * per_node);
    CHECK(in3.hops[i].share == in0.hops[i].share);
    CHECK(c.link(in3.hops[i].link).kind == c.link(in0.hops[i].link).kind);
  }
  CHECK(in3.latency.value() == in0.latency.value());
  // The node-local part of a cross-node route shifts too: out of node 2 and into node 3 over their own NICs.
  for (const auto& h : router.route(2 * 8 + 1, 3 * 8 + 1).hops) {
    if (c.link(h.link).kind == LinkKind::pcie) CHECK((h.link / per_node == 2 || h.link / per_node == 3));
  }
}

TEST_CASE("the last hop into a leaf found by lookup: a spine of a two-tier mesh goes straight down") {
  // 64 nodes: leaf to leaf through every spine; each route ends with one hop per spine into the
  // destination leaf, never a detour through another leaf.
  const Cluster c(test::dgx_cluster(64));
  const Router router(c);
  const Route r = router.route(0, 32 * 8);
  const Vertex dest_leaf = c.leaf_of(c.nic_of(32 * 8));
  int down = 0;
  for (const auto& h : r.hops) {
    const auto e = c.edge(h.link);
    if (c.link(h.link).kind == LinkKind::leaf_spine && boost::target(e, c.graph()) == dest_leaf) ++down;
  }
  CHECK(down == 8);
}

TEST_CASE("a route far from the links read adds its latency alone: the same as its walked hops'") {
  // A collective's far twins only need their routes' latency (accumulate_network); it comes from the
  // node parts measured once, and must equal the latency summed hop by hop, to the bit.
  auto pcie = test::dgx_cluster(64, 1.0, 1);
  pcie.node.fabric = IntraNodeFabric::pcie;
  pcie.node.pcie.generation = 4;
  pcie.node.gpu.pcie_generation = 4;
  for (const auto& spec : {test::dgx_cluster(64), pcie}) {
    const Cluster c(spec);
    const Router router(c);
    for (const auto& [a, b] : {std::pair{0, 8}, {0, 9}, {3, 32 * 8 + 5}, {32 * 8 + 7, 2}, {1, 6}}) {
      LinkLoads network(c.link_count()), whole(c.link_count());
      router.accumulate_network(a, b, 1.0, network);
      router.accumulate(a, b, 1.0, whole);
      router.flush(network);
      router.flush(whole);
      CHECK(network.max_latency == router.route(a, b).latency.value());
      CHECK(whole.max_latency == network.max_latency);
      // Only the network part: no link inside a node, nor a NIC's cable.
      for (const std::size_t link : network.links()) CHECK(c.link(link).kind != LinkKind::nic);
    }
  }
}

namespace {

// The network links of every least-cost path between two leaves, found apart from the router: Boost's
// Dijkstra over the switches alone, from the destination (costs are the same both ways), then the
// links that keep to a least-cost path, followed from the source.
std::set<std::size_t> least_cost_links(const Cluster& c, Vertex from, Vertex to) {
  using Weighted = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                                         boost::property<boost::edge_weight_t, std::int64_t>>;
  const Vertex first = c.first_switch();
  Weighted w(c.switch_count());
  for (std::size_t id = c.first_network_link(); id < c.link_count(); ++id) {
    const auto [u, v] = c.ends(id);
    if (u >= first && v >= first) boost::add_edge(u - first, v - first, link_cost(c.link(id)), w);
  }
  std::vector<std::int64_t> d(c.switch_count());
  boost::dijkstra_shortest_paths(w, to - first, boost::distance_map(d.data()));
  std::set<std::size_t> out;
  std::vector<Vertex> frontier{from};
  std::set<Vertex> seen{from};
  while (!frontier.empty()) {
    const Vertex u = frontier.back();
    frontier.pop_back();
    for (std::size_t id = c.first_network_link(); id < c.link_count(); ++id) {
      const auto [a, b] = c.ends(id);
      if (a != u || b < first || d[b - first] + link_cost(c.link(id)) != d[u - first]) continue;
      out.insert(id);
      if (seen.insert(b).second && b != to) frontier.push_back(b);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("pods cabled alike: a route to any pod keeps to every least-cost path and no other") {
  // Three whole pods of 64 nodes: the distances to a leaf of pods 1 and 2 are pod 0's with the pods
  // exchanged, not searched; the routes must still be exactly the least-cost paths.
  auto spec = test::dgx_cluster(192);
  spec.network.tiers = 3;
  spec.network.pod_nodes = 64;
  spec.network.core_oversubscription = 2;
  const Cluster c(spec);
  const Router router(c);
  for (const auto& [src_node, dst_node] : {std::pair{0, 64}, std::pair{70, 140}, std::pair{130, 3}, std::pair{150, 191}, std::pair{65, 100}}) {
    const int src = src_node * 8 + 3, dst = dst_node * 8 + 3;
    const Vertex out_leaf = c.leaf_of(c.nic_of(src)), in_leaf = c.leaf_of(c.nic_of(dst));
    std::set<std::size_t> network;
    for (const auto& h : router.route(src, dst).hops) {
      const auto [u, v] = c.ends(h.link);
      if (u >= c.first_switch() && v >= c.first_switch()) network.insert(h.link);
    }
    CAPTURE(src_node);
    CAPTURE(dst_node);
    CHECK(network == least_cost_links(c, out_leaf, in_leaf));
  }
}
