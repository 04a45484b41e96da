#include "topology/node_spec.hpp"

#include <fmt/format.h>

namespace parasim::topology {
namespace {

using yaml::Field;
using yaml::FieldType;
using yaml::Schema;

constexpr std::string_view kFabricKinds[] = {"nvswitch", "pcie"};

constexpr Field kFabricFields[] = {
    {.name = "kind", .type = FieldType::choice, .description = "nvswitch: all GPUs on one NVLink switch domain; pcie: GPUs talk over the PCIe tree", .required = true, .choices = kFabricKinds},
    {.name = "latency", .type = FieldType::duration, .description = "GPU-to-GPU latency across the NVLink fabric, one way", .default_text = "0.7 us", .min = 0},
    {.name = "peer_to_peer", .type = FieldType::boolean, .description = "pcie only: GPUs copy to each other directly over PCIe; false (GeForce drivers) bounces copies through host memory", .default_text = "true"},
};
constexpr Schema kFabricSchema{"fabric", "How the GPUs of a node are joined.", kFabricFields};

constexpr Field kPcieTreeFields[] = {
    {.name = "generation", .type = FieldType::integer, .description = "PCIe generation of the switch links; default: the GPU's", .min = 1, .max = 6},
    {.name = "lanes", .type = FieldType::integer, .description = "lanes per switch link", .default_text = "16", .min = 1, .max = 32},
    {.name = "sockets", .type = FieldType::integer, .description = "CPU sockets; PCIe switches are spread evenly over them", .default_text = "2", .min = 1},
    {.name = "switches", .type = FieldType::integer, .description = "PCIe switches per node; GPUs and NICs are spread evenly and consecutively over them", .default_text = "4", .min = 1},
    {.name = "inter_socket", .type = FieldType::bandwidth, .description = "CPU-to-CPU link bandwidth per direction (UPI, xGMI)", .default_text = "40 GB/s", .min = 0, .min_exclusive = true},
    {.name = "latency", .type = FieldType::duration, .description = "latency per PCIe hop", .default_text = "0.5 us", .min = 0},
};
constexpr Schema kPcieTreeSchema{"pcie", "The PCIe switch tree that joins GPUs, NICs and CPUs.", kPcieTreeFields};

constexpr Field kNicFields[] = {
    {.name = "count", .type = FieldType::integer, .description = "NICs per node", .required = true, .min = 1},
    {.name = "bandwidth", .type = FieldType::bandwidth, .description = "per NIC per direction, e.g. 400 Gb/s", .required = true, .min = 0, .min_exclusive = true},
    {.name = "latency", .type = FieldType::duration, .description = "adapter and host stack latency, one way", .default_text = "2 us", .min = 0},
    {.name = "affinity", .type = FieldType::integer_list, .description = "NIC index for each GPU (the NIC NCCL uses for it); default: spread evenly", .min = 0},
};
constexpr Schema kNicSchema{"nics", "Network adapters of a node.", kNicFields};

constexpr Field kNodeFields[] = {
    {.name = "name", .type = FieldType::string, .description = "node name, e.g. DGX-H100", .required = true},
    {.name = "description", .type = FieldType::string, .description = "free text"},
    {.name = "hardware", .type = FieldType::reference, .description = "the GPU: a file (relative path), a bundled name (h200, a100-sxm4-40gb) or an inline section", .required = true, .schema = &kGpuSchema, .bundled = "scenarios/hardware"},
    {.name = "gpus", .type = FieldType::integer, .description = "GPUs per node", .required = true, .min = 1},
    {.name = "fabric", .type = FieldType::section, .description = "how the GPUs are joined", .required = true, .schema = &kFabricSchema},
    {.name = "pcie", .type = FieldType::section, .description = "the PCIe tree", .default_text = "{}", .schema = &kPcieTreeSchema},
    {.name = "nics", .type = FieldType::section, .description = "network adapters; absent for a stand-alone machine", .schema = &kNicSchema},
};

}  // namespace

const yaml::Schema kNodeSchema{"node", "A server: GPUs, their fabric, the PCIe tree and the NICs.", kNodeFields};

NodeSpec parse_node(const yaml::Record& r) {
  NodeSpec n;
  n.name = r.string("name");
  n.gpu = parse_gpu(r.section("hardware"));
  n.gpus = static_cast<int>(r.integer("gpus"));
  const auto& fabric = r.section("fabric");
  n.fabric = fabric.string("kind") == "nvswitch" ? IntraNodeFabric::nvswitch : IntraNodeFabric::pcie;
  n.fabric_latency = fabric.duration("latency");
  n.peer_to_peer = fabric.boolean("peer_to_peer");
  if (n.fabric == IntraNodeFabric::nvswitch && !n.peer_to_peer) {
    fabric.fail("peer_to_peer", "an NVSwitch node always has peer-to-peer over NVLink");
  }
  if (n.fabric == IntraNodeFabric::nvswitch && !n.gpu.nvlink) {
    fabric.fail("kind", fmt::format("nvswitch needs a GPU with NVLink, and {} has no nvlink section", n.gpu.name));
  }

  const auto& pcie = r.section("pcie");
  n.pcie.generation = pcie.has("generation") ? static_cast<int>(pcie.integer("generation")) : n.gpu.pcie_generation;
  n.pcie.lanes = static_cast<int>(pcie.integer("lanes"));
  n.pcie.sockets = static_cast<int>(pcie.integer("sockets"));
  n.pcie.switches = static_cast<int>(pcie.integer("switches"));
  n.pcie.inter_socket = pcie.bandwidth("inter_socket");
  n.pcie.latency = pcie.duration("latency");
  if (n.pcie.switches < n.pcie.sockets) {
    pcie.fail("switches", fmt::format("{} PCIe switches cannot be spread over {} sockets", n.pcie.switches, n.pcie.sockets));
  }
  if (n.pcie.switches > n.gpus) {
    pcie.fail("switches", fmt::format("{} PCIe switches for {} GPUs leaves switches without a GPU", n.pcie.switches, n.gpus));
  }

  if (r.has("nics")) {
    const auto& nics = r.section("nics");
    n.nics.count = static_cast<int>(nics.integer("count"));
    n.nics.bandwidth = nics.bandwidth("bandwidth");
    n.nics.latency = nics.duration("latency");
    if (nics.has("affinity")) {
      const auto& a = nics.integers("affinity");
      if (static_cast<int>(a.size()) != n.gpus) {
        nics.fail("affinity", fmt::format("lists {} entries but the node has {} GPUs", a.size(), n.gpus));
      }
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] >= n.nics.count) {
          nics.fail("affinity", fmt::format("GPU {} names NIC {} but the node has {} NIC{} (0..{})", i, a[i], n.nics.count,
                                            n.nics.count == 1 ? "" : "s", n.nics.count - 1));
        }
        n.nics.affinity.push_back(static_cast<int>(a[i]));
      }
    } else {
      for (int g = 0; g < n.gpus; ++g) n.nics.affinity.push_back(g * n.nics.count / n.gpus);
    }
  }
  return n;
}

}  // namespace parasim::topology
