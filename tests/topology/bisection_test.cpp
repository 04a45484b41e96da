#include <doctest/doctest.h>

#include "tests/topology/fixtures.hpp"
#include "topology/bisection.hpp"

using namespace parasim;
using namespace parasim::topology;

TEST_CASE("bisection of a non-blocking fat-tree is half the GPUs times the NIC bandwidth") {
  // 128 DGX nodes: the first 64 nodes' 512 NICs x 50 GB/s = 25.6 TB/s; the spines do not limit.
  CHECK(bisection_bandwidth(Cluster(test::dgx_cluster(128))).value() == doctest::Approx(25.6e12).scale(0));
  // Two nodes: 8 NICs x 50 GB/s.
  CHECK(bisection_bandwidth(Cluster(test::dgx_cluster(2))).value() == doctest::Approx(400e9).scale(0));
}

TEST_CASE("oversubscription halves the bisection") {
  // 2:1 leaves, 128 nodes: floor(64*2/3) = 42 downlinks, so each rail's leaves hold nodes 0-41,
  // 42-83, 84-125 and 126-127, with uplinks of (nodes x 50 GB/s) / 2. Per rail, the second half
  // (nodes 64-127) can receive at most: on leaf 1, 20 nodes x 50 = 1000 GB/s (from leaf 1's own
  // senders); on leaf 2, its uplinks' 42 x 50 / 2 = 1050 GB/s; on leaf 3, 2 x 50 / 2 = 50 GB/s.
  // The senders can supply that (leaf 0 uplinks 1050 + leaf 1's 22 nodes x 50 = 2150 GB/s), so the
  // cut is 2100 GB/s per rail x 8 rails = 16.8 TB/s.
  CHECK(bisection_bandwidth(Cluster(test::dgx_cluster(128, 2.0))).value() == doctest::Approx(16.8e12).scale(0));
}

TEST_CASE("inside one node the NVSwitch carries the bisection, plus the CPU link") {
  // GPUs 0-3 to 4-7: 4 x 450 GB/s over NVLink, and PCIe switches 0-1 (socket 0) reach 2-3 (socket 1)
  // only through the 60 GB/s CPU link.
  CHECK(bisection_bandwidth(Cluster(test::dgx_cluster(1))).value() == doctest::Approx(4 * 450e9 + 60e9).scale(0));
}
