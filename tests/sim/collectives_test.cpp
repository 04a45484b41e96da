// The collective lowering alone (no engine): which algorithm it picks and the time it estimates for a
// collective running alone, against hand computations on small DGX clusters.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "calibrate/profile.hpp"
#include "sim/collectives.hpp"
#include "topology/group_bandwidth.hpp"
#include "tests/topology/fixtures.hpp"

using namespace parasim;
using namespace parasim::sim;
using workload::Collective;

namespace {

// Round numbers (as simulator_test.cpp's plain profile): NVLink 80% of 450 GB/s, 1 us per Simple step;
// network 5 us per Simple step; 10 us to launch; no NVLS.
calibrate::Profile plain_profile() {
  auto p = calibrate::default_profile("generic");
  p.collective_launch = Seconds(10e-6);
  p.nvlink = {0.8, Seconds(1e-6), 0.1, Seconds(0.5e-6)};
  p.network = {0.9, Seconds(5e-6), 0.1, Seconds(2e-6)};
  p.nvls = false;
  p.nvls_latency = Seconds(0);
  return p;
}

std::vector<int> range(int from, int to) {
  std::vector<int> r(static_cast<std::size_t>(to - from));
  std::iota(r.begin(), r.end(), from);
  return r;
}

}  // namespace

TEST_CASE("two-level all-reduce across two DGX nodes: both levels at once, the slower one sets the rate") {
  const topology::Cluster cluster(test::dgx_cluster(2));
  const topology::Router router(cluster);
  auto profile = plain_profile();
  profile.network.efficiency = 0.1;  // a slow network, so that the levels differ clearly,
  profile.network.ll_efficiency = 0.01;  // and LL a tenth of it again
  CollectiveLowering lowering(router, profile);
  const auto all = range(0, 16);
  const double S = 4294967296.0;  // 4 GiB: past NCCL's tree correction table
  const auto l = lowering.lower(Collective::all_reduce, 1, workload::Twins(all), S);
  REQUIRE(l.algorithm == Algorithm::hierarchical);
  REQUIRE(l.phases.size() == 1);
  // Per byte of the buffer: in the node 2·7/8 on each NVLink ring hop (360 GB/s: 205.7 GB/s of
  // buffer); across nodes each GPU sends its 1/8 shard, 2·1/2·1/8 = 1/8, through its own 400 Gb/s
  // NIC at 10%: 5 GB/s / (1/8) = 40 GB/s of buffer. Pipelined, the rate is the slower: 40 GB/s (in
  // three sequential phases it would be S/205.7 + S/40 + ...).
  const double rate = 40e9;
  // Latency: launch; 2·7 NVLink steps of 0.7 us wires + 1 us; 2 network steps of the route's wires + 5 us.
  double wire = 0;
  for (int j = 0; j < 8; ++j) wire = std::max(wire, router.route(j, 8 + j).latency.value());
  const double latency = 10e-6 + 14 * (router.route(0, 1).latency.value() + 1e-6) + 2 * (wire + 5e-6);
  CHECK(l.phases[0]->alone_rate == doctest::Approx(rate).epsilon(1e-9));
  CHECK(l.estimated.value() == doctest::Approx(latency + S / rate).epsilon(1e-9));
}

TEST_CASE("two-level all-reduce with NVLS in the nodes (NCCL's NVLS-tree): the switch's rate and latency") {
  const topology::Cluster cluster(test::dgx_cluster(2));
  const topology::Router router(cluster);
  auto profile = plain_profile();
  profile.nvls = true;
  profile.nvls_efficiency = 0.5;
  profile.nvls_latency = Seconds(20e-6);
  CollectiveLowering lowering(router, profile);
  const double S = 4294967296.0;
  const auto l = lowering.lower(Collective::all_reduce, 1, workload::Twins(range(0, 16)), S);
  REQUIRE(l.algorithm == Algorithm::hierarchical);
  // In the node each GPU pushes S into the switch and pulls S back at 450 GB/s x 0.5 = 225 GB/s;
  // across nodes the 1/8 shard at 50 GB/s x 0.9 per NIC: 360 GB/s of buffer. The switch sets the rate.
  CHECK(l.phases[0]->alone_rate == doctest::Approx(225e9).epsilon(1e-9));
  // Latency: launch + NVLS (2 wire steps of 0.35 us x 2 + 20 us) + 2 network steps.
  double wire = 0;
  for (int j = 0; j < 8; ++j) wire = std::max(wire, router.route(j, 8 + j).latency.value());
  const double latency = 10e-6 + 2 * 0.7e-6 + 20e-6 + 2 * (wire + 5e-6);
  CHECK(l.estimated.value() == doctest::Approx(latency + S / 225e9).epsilon(1e-9));
}

TEST_CASE("NVLS's fixed cost grows with the ranks it spans: the profile's figure at 8 ranks, x ranks / 8") {
  const topology::Cluster cluster(test::dgx_cluster(1));
  const topology::Router router(cluster);
  auto profile = plain_profile();
  profile.nvls = true;
  profile.nvls_efficiency = 0.6;
  profile.nvls_latency = Seconds(80e-6);
  CollectiveLowering lowering(router, profile);
  const double S = 8589934592.0;  // 8 GiB: NVLS beats the ring on 4 and 8 ranks alike
  const auto eight = lowering.lower(Collective::all_reduce, 1, workload::Twins(range(0, 8)), S);
  const auto four = lowering.lower(Collective::all_reduce, 2, workload::Twins(range(0, 4)), S);
  REQUIRE(eight.algorithm == Algorithm::nvls);
  REQUIRE(four.algorithm == Algorithm::nvls);
  // Launch 10 us, two wire steps of 0.7 us, 80 us x 8/8 or x 4/8, and S at 450 GB/s x 0.6 either way.
  CHECK(eight.estimated.value() == doctest::Approx(10e-6 + 1.4e-6 + 80e-6 + S / 270e9).epsilon(1e-9));
  CHECK(four.estimated.value() == doctest::Approx(10e-6 + 1.4e-6 + 40e-6 + S / 270e9).epsilon(1e-9));
}

TEST_CASE("the bundled profiles price a Simple step across the network at NCCL's 14 us") {
  const topology::Cluster cluster(test::dgx_cluster(2));
  const topology::Router router(cluster);
  const auto profile = calibrate::default_profile("H100-SXM5-80GB");
  CHECK(profile.network.step_latency.value() == doctest::Approx(14e-6).scale(0));  // NCCL tuning.cc hwLat[NET][Ring][Simple]
  CollectiveLowering lowering(router, profile);
  const double S = 67108864.0;  // 64 MiB from GPU 0 to GPU 8 (node 1) over their rail-0 NICs
  const auto l = lowering.lower(Collective::send_recv, 1, workload::Twins(std::vector<int>{0, 8}), S);
  REQUIRE(l.algorithm == Algorithm::direct);
  REQUIRE(l.protocols.size() == 1);
  // One step. The NIC sets the rate: 400 Gb/s = 50 GB/s x 0.9 = 45 GB/s. Simple: launch 10 us + the
  // route's wires + 14 us + S / 45 GB/s = 1.52 ms; LL (4 us a step, 5 GB/s) would take 13.4 ms.
  CHECK(l.phases[0]->alone_rate == doctest::Approx(45e9).epsilon(1e-9));
  CHECK(l.protocols[0] == Protocol::simple);
  const double wires = router.route(0, 8).latency.value();
  CHECK(l.latencies[0].value() == doctest::Approx(wires + 14e-6).epsilon(1e-9));
  CHECK(l.estimated.value() == doctest::Approx(10e-6 + wires + 14e-6 + S / 45e9).epsilon(1e-9));
}

TEST_CASE("twins away from the representative's nodes load its links through the network only, exactly as whole routes") {
  // 128 DGX nodes on a two-tier network with 4:1 oversubscription (three leaves per rail): the
  // twins' flows share the representative's uplinks and spines. A pipeline send from each GPU of
  // nodes 0-63 to the same GPU of nodes 64-127 (the representative: GPU 0 to GPU 512) and a
  // data-parallel ring over GPU j of every node.
  const topology::Cluster cluster(test::dgx_cluster(128, 4.0));
  const topology::Router router(cluster);
  const auto profile = plain_profile();
  CollectiveLowering lowering(router, profile);
  std::vector<std::vector<int>> sends, rings(8);
  for (int g = 0; g < 512; ++g) sends.push_back({g, 512 + g});
  for (int j = 0; j < 8; ++j) {
    for (int n = 0; n < 128; ++n) rings[static_cast<std::size_t>(j)].push_back(8 * n + j);
  }
  const auto expect_whole_routes = [&](const LinkUsage& usage, const std::vector<std::vector<int>>& twins, bool ring) {
    topology::LinkLoads all(cluster.link_count()), own(cluster.link_count());
    for (std::size_t t = 0; t < twins.size(); ++t) {
      const auto& g = twins[t];
      const std::size_t hops = ring ? g.size() : 1;
      for (std::size_t i = 0; i < hops; ++i) {
        router.accumulate(g[i], g[(i + 1) % g.size()], 1.0, all);
        if (t == 0) router.accumulate(g[i], g[(i + 1) % g.size()], 1.0, own);
      }
    }
    router.flush(own);
    router.flush(all, &own);
    const auto& links = own.links();
    REQUIRE(usage.usage.size() == links.size());
    const auto network = std::count_if(links.begin(), links.end(), [&](std::size_t l) { return cluster.link(l).kind == topology::LinkKind::leaf_spine; });
    CHECK(network > 0);  // the representative crosses spines its twins cross too
    for (std::size_t i = 0; i < links.size(); ++i) {
      CHECK(usage.usage[i].resource == links[i]);
      const auto kind = cluster.link(links[i]).kind;
      CHECK(usage.usage[i].weight == all[links[i]] / profile.fabric(fabric_of(kind)).efficiency);
    }
  };
  const auto& send = lowering.lower(Collective::send_recv, 1, workload::Twins(sends), 1e6);
  expect_whole_routes(*send.phases.front(), sends, false);
  const auto& gather = lowering.lower(Collective::all_gather, 2, workload::Twins(rings), 1e6);
  expect_whole_routes(*gather.phases.front(), rings, true);
}

TEST_CASE("NCCL's tree across nodes: a chain through each node under a binary tree of nodes, up and down") {
  // A 64 KiB all-reduce over 32 ranks on 4 DGX nodes is latency-bound, and the tree's is the least:
  // 2 x 7 chain hops in a node on NVLink and 2 x log2(4) network steps (the ring: 62 steps, each at
  // the network's cost; the two-level all-reduce: 14 and 6).
  const topology::Cluster cluster(test::dgx_cluster(4));
  const topology::Router router(cluster);
  const auto profile = plain_profile();
  CollectiveLowering lowering(router, profile);
  const auto all = range(0, 32);
  const double S = 65536.0;
  const auto& l = lowering.lower(Collective::all_reduce, 1, workload::Twins(all), S);
  double crossing_wire = 0;
  for (const auto& ring : topology::ring_orders(cluster, all)) {
    for (std::size_t i = 0; i < ring.size(); ++i) crossing_wire = std::max(crossing_wire, router.route(ring[i], ring[(i + 1) % ring.size()]).latency.value());
  }
  const double nvlink_wire = router.route(0, 1).latency.value();
  const double tree_simple = 14 * (nvlink_wire + 1e-6) + 4 * (crossing_wire + 5e-6);
  const double tree_ll = 14 * (nvlink_wire + 0.5e-6) + 4 * (crossing_wire + 2e-6);
  REQUIRE(l.algorithm == Algorithm::tree);
  CHECK(l.phases[0]->steps == 18);
  CHECK(l.latencies[0].value() == doctest::Approx(l.protocols[0] == Protocol::ll ? tree_ll : tree_simple).epsilon(1e-9));
}
