#pragma once
// Clusters for topology tests, built in code so each test states the hardware it assumes.
#include "topology/cluster_spec.hpp"

namespace parasim::test {

/// H100 SXM: 900 GB/s NVLink (450 each way), PCIe gen5 x16.
inline topology::GpuSpec h100() {
  topology::GpuSpec g;
  g.name = "H100";
  g.compute_capability = {9, 0};
  g.peak[static_cast<std::size_t>(Precision::bf16)] = FlopsPerSecond(989.4e12);
  g.hbm_capacity = Bytes(80.0 * (1ull << 30));
  g.hbm_bandwidth = BytesPerSecond(3.35e12);
  g.nvlink = topology::NvlinkSpec{BytesPerSecond(900e9), 18};
  g.pcie_generation = 5;
  return g;
}

/// DGX-H100-like node: 8 GPUs on one NVSwitch, 4 PCIe switches with 2 GPUs and 2 NICs each,
/// 2 sockets, 8 NICs of 400 Gb/s (50 GB/s), NIC i for GPU i.
inline topology::NodeSpec dgx(int nics = 8, double nic_gbps = 400) {
  topology::NodeSpec n;
  n.name = "dgx";
  n.gpu = h100();
  n.gpus = 8;
  n.fabric = topology::IntraNodeFabric::nvswitch;
  n.fabric_latency = Seconds(0.7e-6);
  n.pcie = {5, 16, 2, 4, BytesPerSecond(60e9), Seconds(0.5e-6)};
  n.nics.count = nics;
  n.nics.bandwidth = BytesPerSecond(nic_gbps * 1e9 / 8);
  n.nics.latency = Seconds(2e-6);
  for (int g = 0; g < 8; ++g) n.nics.affinity.push_back(g * nics / 8);
  return n;
}

/// `nodes` DGX nodes on a rail-optimized two-tier network of 64-port switches.
inline topology::ClusterSpec dgx_cluster(int nodes, double oversubscription = 1.0, int nics = 8) {
  topology::ClusterSpec c;
  c.name = "test";
  c.node = dgx(nics);
  c.nodes = nodes;
  c.network.kind = topology::NetworkKind::rail_optimized;
  c.network.tiers = 2;
  c.network.switch_radix = 64;
  c.network.oversubscription = oversubscription;
  c.network.pod_nodes = nodes;
  c.network.switch_latency = Seconds(0.3e-6);
  return c;
}

}  // namespace parasim::test
