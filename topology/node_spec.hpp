#pragma once
// One server (or one NVLink rack): its GPUs, the fabric that joins them, the PCIe tree that hangs the
// GPUs and NICs off the CPUs, and the NICs with their GPU affinity.
#include <string>
#include <vector>

#include "core/schema.hpp"
#include "topology/gpu_spec.hpp"

namespace parasim::topology {

enum class IntraNodeFabric {
  nvswitch,  ///< every GPU on one NVLink switch domain at the GPU's full NVLink bandwidth
  pcie,      ///< GPUs talk through the PCIe switch tree and the CPUs
};

struct PcieTree {
  int generation = 4;  ///< of the switch links; defaults to the GPU's
  int lanes = 16;
  int sockets = 2;                 ///< CPUs; PCIe switches are spread evenly over them
  int switches = 4;                ///< PCIe switches per node; GPUs and NICs are spread evenly over them
  BytesPerSecond inter_socket;     ///< per direction (UPI / xGMI)
  Seconds latency;                 ///< per PCIe hop
  BytesPerSecond per_direction() const { return pcie_bandwidth(generation, lanes); }
  bool operator==(const PcieTree&) const = default;
};

struct NicSpec {
  int count = 0;
  BytesPerSecond bandwidth;   ///< per NIC, per direction (a 400 Gb/s NDR port = 50 GB/s each way)
  Seconds latency;            ///< adapter and host stack, one way
  std::vector<int> affinity;  ///< NIC index for each GPU (NCCL's closest NIC)
  bool operator==(const NicSpec&) const = default;
};

struct NodeSpec {
  std::string name;
  GpuSpec gpu;
  int gpus = 8;
  IntraNodeFabric fabric = IntraNodeFabric::nvswitch;
  Seconds fabric_latency;  ///< GPU-to-GPU one way across the NVLink fabric
  /// PCIe peer-to-peer between GPUs; GeForce drivers disable it, so GPU-to-GPU copies bounce
  /// through host memory on the sender's CPU.
  bool peer_to_peer = true;
  PcieTree pcie;
  NicSpec nics;

  /// PCIe switch a GPU hangs off (GPUs spread evenly and consecutively).
  int switch_of_gpu(int local_gpu) const { return local_gpu * pcie.switches / gpus; }
  /// PCIe switch a NIC hangs off (NICs spread evenly and consecutively).
  int switch_of_nic(int nic) const { return nic * pcie.switches / nics.count; }
  int socket_of_switch(int pcie_switch) const { return pcie_switch * pcie.sockets / pcie.switches; }
  bool operator==(const NodeSpec&) const = default;
};

extern const yaml::Schema kNodeSchema;
NodeSpec parse_node(const yaml::Record& record);

}  // namespace parasim::topology
