#include <doctest/doctest.h>

#include "tests/topology/fixtures.hpp"
#include "topology/group_bandwidth.hpp"

using namespace parasim;
using namespace parasim::topology;

namespace {
RankGroup range(int first, int count, int stride = 1) {
  RankGroup g;
  for (int i = 0; i < count; ++i) g.push_back(first + i * stride);
  return g;
}
}  // namespace

TEST_CASE("ring bus bandwidth: one island vs one GPU per node vs two full nodes") {
  // (a) 8 GPUs of one DGX: every ring hop crosses the NVSwitch; each GPU sends and receives one hop,
  //     so each 450 GB/s NVLink direction carries load 1 -> 450 GB/s.
  {
    const Cluster c(test::dgx_cluster(1));
    const Router r(c);
    CHECK(ring_bus_bandwidth(r, range(0, 8))->value() == doctest::Approx(450e9).scale(0));
  }
  // (b) GPU 0 of 8 nodes: one ring, every hop leaves through a 400 Gb/s NIC -> 50 GB/s.
  {
    const Cluster c(test::dgx_cluster(8));
    const Router r(c);
    CHECK(ring_bus_bandwidth(r, range(0, 8, 8))->value() == doctest::Approx(50e9).scale(0));
  }
  // (c) 16 GPUs on 2 nodes: 8 rings (one per NIC) each carry 1/8 of the data. Each NIC carries one
  //     ring's crossing (load 1/8 -> 8 x 50 = 400 GB/s); each NVLink direction carries one hop of
  //     every ring (load 8 x 1/8 = 1 -> 450 GB/s). The NICs limit: min(450, 400) = 400 GB/s.
  {
    const Cluster c(test::dgx_cluster(2));
    const Router r(c);
    CHECK(ring_orders(c, range(0, 16)).size() == 8);
    CHECK(ring_bus_bandwidth(r, range(0, 16))->value() == doctest::Approx(400e9).scale(0));
  }
}

TEST_CASE("concurrent groups share links: eight DP groups through eight NICs or one") {
  // Data-parallel groups of a TP8 plan on 2 nodes: {i, 8 + i} for i = 0..7, all at once.
  std::vector<RankGroup> dp;
  for (int i = 0; i < 8; ++i) dp.push_back({i, 8 + i});
  // Eight NICs: group i crosses on NIC i both ways -> 50 GB/s each.
  {
    const Cluster c(test::dgx_cluster(2));
    const Router r(c);
    CHECK(ring_bus_bandwidth(r, dp)->value() == doctest::Approx(50e9).scale(0));
  }
  // One NIC per node (all GPUs' affinity 0): eight rings share one 50 GB/s NIC -> 50 / 8.
  {
    const Cluster c(test::dgx_cluster(2, 1.0, 1));
    const Router r(c);
    CHECK(ring_bus_bandwidth(r, dp)->value() == doctest::Approx(50e9 / 8).scale(0));
  }
  // A group of one moves nothing.
  {
    const Cluster c(test::dgx_cluster(1));
    const Router r(c);
    CHECK_FALSE(ring_bus_bandwidth(r, RankGroup{3}).has_value());
  }
}

TEST_CASE("strided groups inside a node and rings over an oversubscribed spine") {
  // TP pairs {0,1},{2,3},{4,5},{6,7} at once: disjoint NVLink ports -> 450 GB/s each.
  {
    const Cluster c(test::dgx_cluster(1));
    const Router r(c);
    std::vector<RankGroup> pairs{{0, 1}, {2, 3}, {4, 5}, {6, 7}};
    CHECK(ring_bus_bandwidth(r, pairs)->value() == doctest::Approx(450e9).scale(0));
  }
  // GPU 0 of 64 nodes (2 leaves per rail) on 4:1 oversubscribed leaves: floor(64*4/5) = 51 downlinks,
  // so one leaf holds nodes 0..50 and the other 51..63. The ring crosses between leaves twice; a
  // leaf's uplinks carry 51 x 50 / 4 = 637.5 GB/s (first leaf) and 13 x 50 / 4 = 162.5 GB/s (second)
  // spread evenly over all spines, each crossing loads them fully: the NIC (50 GB/s) still limits.
  {
    const Cluster c(test::dgx_cluster(64, 4.0));
    const Router r(c);
    CHECK(ring_bus_bandwidth(r, range(0, 64, 8))->value() == doctest::Approx(50e9).scale(0));
  }
}

TEST_CASE("hierarchical all-reduce over two full nodes") {
  const Cluster c(test::dgx_cluster(2));
  const Router r(c);
  const auto h = hierarchical_bandwidth(r, range(0, 16));
  CHECK(h.ranks_per_island == 8);
  CHECK(h.islands == 2);
  CHECK(h.intra->value() == doctest::Approx(450e9).scale(0));  // both islands' rings at once, separate NVSwitches
  CHECK(h.inter->value() == doctest::Approx(50e9).scale(0));   // 8 two-rank rings, one NIC each
  // Per byte of the buffer: RS + AG inside (2 x 7/8 / 450 GB/s) + AR of S/8 across (2 x 1/2 / 8 / 50 GB/s)
  // = 3.8889e-12 + 2.5e-12 s; bus = 2 x 15/16 / 6.3889e-12 = 293.5 GB/s.
  CHECK(h.bus->value() == doctest::Approx(2.0 * 15 / 16 / (2.0 * 7 / 8 / 450e9 + 2.0 * 1 / 2 / 8 / 50e9)).scale(0));
  CHECK(h.bus->value() == doctest::Approx(293.478e9).epsilon(1e-4));
}

TEST_CASE("ring orders: a group with each rank on its own node, or all on one, is its own ring") {
  const Cluster c(test::dgx_cluster(4));
  const RankGroup across{24, 0, 16, 8};  // one GPU of each node, in the group's order
  REQUIRE(ring_orders(c, across).size() == 1);
  CHECK(ring_orders(c, across).front() == across);
  const RankGroup inside{3, 1, 2};
  CHECK(ring_orders(c, inside) == std::vector<RankGroup>{inside});
  // Two nodes with two ranks each: two rings, each visiting the nodes' members in turn.
  CHECK(ring_orders(c, RankGroup{0, 1, 8, 9}) == std::vector<RankGroup>{{0, 1, 8, 9}, {1, 0, 9, 8}});
}
