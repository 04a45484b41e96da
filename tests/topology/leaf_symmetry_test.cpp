#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "tests/topology/fixtures.hpp"
#include "topology/leaf_symmetry.hpp"
#include "topology/routing.hpp"

using namespace parasim;
using namespace parasim::topology;

namespace {

// Three tiers, pods of 64 nodes: 2 leaves a rail in a whole pod; a last pod of 16 nodes has leaves of
// half the members and half the uplink capacity.
ClusterSpec three_tier(int nodes) {
  auto s = test::dgx_cluster(nodes);
  s.network.tiers = 3;
  s.network.pod_nodes = 64;
  s.network.core_oversubscription = 1;
  return s;
}

std::vector<Vertex> leaves(const Cluster& c) {
  std::vector<Vertex> out;
  for (Vertex v = c.first_switch(); v < c.first_switch() + c.switch_count(); ++v) {
    if (c.vertex(v).kind == VertexKind::leaf) out.push_back(v);
  }
  return out;
}

// Each leaf's links to other switches both ways, listed in link id order or in its reverse.
std::vector<std::vector<LeafSymmetry::Cabling>> cablings(const Cluster& c, bool reversed) {
  std::vector<std::vector<LeafSymmetry::Cabling>> out(c.switch_count());
  const Vertex first = c.first_switch();
  const std::size_t begin = c.first_network_link(), end = c.link_count();
  for (std::size_t k = 0; k < end - begin; ++k) {
    const std::size_t id = reversed ? end - 1 - k : begin + k;
    const auto [u, v] = c.ends(id);
    if (u < first || v < first) continue;
    const auto& link = c.link(id);
    if (c.vertex(u).kind == VertexKind::leaf) out[u - first].emplace_back(v, true, link.bandwidth.value(), link.latency.value());
    if (c.vertex(v).kind == VertexKind::leaf) out[v - first].emplace_back(u, false, link.bandwidth.value(), link.latency.value());
  }
  return out;
}

}  // namespace

TEST_CASE("leaves cabled alike are one class: a pod's leaves, apart from a smaller pod's") {
  const Cluster c(three_tier(144));  // pods of 64, 64 and 16 nodes
  const LeafSymmetry sym(c);
  // Leaves of one pod reach the same spines; leaves of different pods reach different spines.
  CHECK(sym.class_count() == 3);
  const Cluster two_tier(test::dgx_cluster(64));  // 16 leaves under the same 8 spines
  CHECK(LeafSymmetry(two_tier).class_count() == 1);
}

TEST_CASE("the classes do not depend on the order a leaf's cablings are listed in") {
  // The router lists each leaf's links from its own rows (out, then the same cable in), the
  // cluster-only constructor in link id order: the same classes either way.
  const Cluster c(three_tier(144));
  const LeafSymmetry by_links(c);
  const LeafSymmetry by_reversed(c, cablings(c, true));
  REQUIRE(by_reversed.class_count() == by_links.class_count());
  for (const Vertex leaf : leaves(c)) CHECK(by_reversed.representative(leaf) == by_links.representative(leaf));
  // A leaf cabled differently is told apart whatever the order: drop one cabling of the first leaf
  // (one of a pod's 16).
  auto short_one = cablings(c, false);
  short_one[leaves(c).front() - c.first_switch()].pop_back();
  CHECK(LeafSymmetry(c, std::move(short_one)).class_count() == by_links.class_count() + 1);
}

TEST_CASE("a leaf pair's image: representatives, and swaps that carry them back") {
  const Cluster c(test::dgx_cluster(64));
  const LeafSymmetry sym(c);
  const auto l = leaves(c);
  REQUIRE(l.size() == 16);
  for (Vertex a : l) {
    for (Vertex b : l) {
      if (a == b) continue;
      const auto im = sym.image(a, b);
      CHECK(im.from == l[0]);
      CHECK(im.to == l[1]);
      CHECK(im.back(im.from) == a);
      CHECK(im.back(im.to) == b);
      CHECK(im.back(c.first_switch() + c.switch_count() - 1) == c.first_switch() + c.switch_count() - 1);  // a spine stays
    }
  }
}

TEST_CASE("a renamed route is a route: every leaf pair's traffic leaves its own leaf and arrives whole") {
  // Flow conservation at every switch and the two end leaves, for GPU pairs across every pair of
  // pods (each walked once per pair of classes and renamed): a wrong renaming would load a link of
  // another leaf and break the balance.
  const Cluster c(three_tier(144));
  const Router router(c);
  const Graph& g = c.graph();
  for (int src_node : {0, 5, 33, 70, 100, 130}) {
    for (int dst_node : {1, 31, 40, 64, 111, 143}) {
      if (src_node == dst_node) continue;
      const int src = src_node * 8 + 2, dst = dst_node * 8 + 2;
      std::map<Vertex, double> net;  // out minus in, over network switches
      for (const auto& h : router.route(src, dst).hops) {
        const Edge e = c.edge(h.link);
        const Vertex u = boost::source(e, g), v = boost::target(e, g);
        if (u >= c.first_switch()) net[u] += h.share;
        if (v >= c.first_switch()) net[v] -= h.share;
      }
      // The NIC's cable brings the whole flow into the first leaf and takes it out of the last.
      for (const auto& [v, balance] : net) {
        CAPTURE(src_node);
        CAPTURE(dst_node);
        CHECK(std::abs(balance) < 1e-12);
      }
    }
  }
}
