#include <doctest/doctest.h>

#include "tests/topology/fixtures.hpp"
#include "topology/cluster.hpp"

using namespace parasim;
using namespace parasim::topology;

namespace {
std::size_t links_of(const Cluster& c, LinkKind kind) {
  std::size_t n = 0;
  for (std::size_t id = 0; id < c.link_count(); id += 2) n += c.link(id).kind == kind;
  return n;
}
}  // namespace

TEST_CASE("a DGX node: one NVSwitch domain, a PCIe tree and eight NICs") {
  const Cluster c(test::dgx_cluster(1));
  CHECK(c.gpu_count() == 8);
  CHECK(c.island_count() == 1);
  CHECK(c.island_size() == 8);
  // 8 GPUs + 1 NVSwitch + 4 PCIe switches + 2 CPUs + 8 NICs.
  CHECK(c.node_size() == 23);
  CHECK(links_of(c, LinkKind::nvlink) == 8);
  CHECK(links_of(c, LinkKind::pcie) == 8 + 8 + 4);  // GPUs, NICs, switch uplinks
  CHECK(links_of(c, LinkKind::inter_socket) == 1);
  CHECK(c.leaf_count() == 0);  // a single node needs no network
  // Every link exists in both directions with the same bandwidth.
  for (std::size_t id = 0; id < c.link_count(); id += 2) CHECK(c.link(id).bandwidth == c.link(id + 1).bandwidth);
  // NVLink 900 GB/s bidirectional = 450 GB/s per direction.
  CHECK(c.link(0).bandwidth.value() == doctest::Approx(450e9).scale(0));
}

TEST_CASE("128 nodes on a rail-optimized fat-tree of 64-port switches") {
  const Cluster c(test::dgx_cluster(128));
  // Non-blocking leaves split 64 ports 32 down / 32 up: 128 nodes / 32 = 4 leaves per rail, x 8 rails.
  CHECK(c.leaf_count() == 32);
  // 32 leaves x 32 uplinks = 1024 ports over 64-port spines = 16 spines.
  CHECK(c.spine_count() == 16);
  CHECK(links_of(c, LinkKind::nic) == 1024);
  CHECK(links_of(c, LinkKind::leaf_spine) == 32 * 16);
  // Each leaf's 32 x 50 GB/s of uplink capacity spread over 16 spines: 100 GB/s per leaf-spine link.
  for (std::size_t id = 0; id < c.link_count(); id += 2) {
    if (c.link(id).kind == LinkKind::leaf_spine) CHECK(c.link(id).bandwidth.value() == doctest::Approx(100e9).scale(0));
  }
  // Rail r's NICs share leaves; NIC 0 of node 0 and NIC 0 of node 31 on one leaf, node 32 on the next.
  CHECK(c.leaf_of(c.nic_of(0)) == c.leaf_of(c.nic_of(31 * 8)));
  CHECK(c.leaf_of(c.nic_of(0)) != c.leaf_of(c.nic_of(32 * 8)));
  CHECK(c.leaf_of(c.nic_of(0)) != c.leaf_of(c.nic_of(1)));
  CHECK(c.island_of(17) == 2);
}

TEST_CASE("oversubscription thins the uplinks and three tiers add a core") {
  // 2:1 leaves: floor(64*2/3) = 42 downlinks; 128 nodes -> 4 leaves per rail; uplink capacity is
  // what is cabled below divided by 2.
  const Cluster two(test::dgx_cluster(128, 2.0));
  double up = 0, down = 0;
  for (std::size_t id = 0; id < two.link_count(); id += 2) {
    if (two.link(id).kind == LinkKind::leaf_spine) up += two.link(id).bandwidth.value();
    if (two.link(id).kind == LinkKind::nic) down += two.link(id).bandwidth.value();
  }
  CHECK(up == doctest::Approx(down / 2).scale(0));

  auto spec = test::dgx_cluster(64);
  spec.network.tiers = 3;
  spec.network.pod_nodes = 32;
  spec.network.core_oversubscription = 4;
  const Cluster three(spec);
  CHECK(three.core_count() > 0);
  double core_up = 0;
  for (std::size_t id = 0; id < three.link_count(); id += 2) {
    if (three.link(id).kind == LinkKind::spine_core) core_up += three.link(id).bandwidth.value();
  }
  // 512 NICs x 50 GB/s below, 1:4 towards the core.
  CHECK(core_up == doctest::Approx(512 * 50e9 / 4).scale(0));
}

TEST_CASE("a fat-tree puts all NICs of a node on one leaf") {
  auto spec = test::dgx_cluster(8);
  spec.network.kind = NetworkKind::fat_tree;
  const Cluster c(spec);
  // 32 downlinks / 8 NICs = 4 nodes per leaf -> 2 leaves.
  CHECK(c.leaf_count() == 2);
  CHECK(c.leaf_of(c.nic_of(0)) == c.leaf_of(c.nic_of(7)));
  CHECK(c.leaf_of(c.nic_of(0)) == c.leaf_of(c.nic_of(3 * 8)));
  CHECK(c.leaf_of(c.nic_of(0)) != c.leaf_of(c.nic_of(4 * 8)));
}

TEST_CASE("a link's ends from the compact table are its edge's, both directions of every cable") {
  auto spec = test::dgx_cluster(144);
  spec.network.tiers = 3;
  spec.network.pod_nodes = 64;
  const Cluster c(spec);
  std::size_t mismatched = 0;
  for (std::size_t id = 0; id < c.link_count(); ++id) {
    const auto e = c.edge(id);
    const auto [u, v] = c.ends(id);
    mismatched += u != boost::source(e, c.graph()) || v != boost::target(e, c.graph());
  }
  CHECK(mismatched == 0);
  CHECK(c.ends(Cluster::reverse_link(c.first_network_link())) ==
        std::pair{c.ends(c.first_network_link()).second, c.ends(c.first_network_link()).first});
}
