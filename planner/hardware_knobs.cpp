#include "planner/hardware_knobs.hpp"

#include <algorithm>
#include <cmath>

namespace parasim::planner {
namespace {

int scaled_count(int n, double factor) { return std::max(1, static_cast<int>(std::lround(n * factor))); }

// The overlap factors live in the calibration profile; a scenario without one of its own is priced by
// its GPU's bundled profile, which is made explicit before it changes.
calibrate::Profile& own_profile(sim::Scenario& s) {
  if (!s.profile) s.profile = s.effective_profile();
  return *s.profile;
}

bool always(const sim::Scenario&) { return true; }
bool networked(const sim::Scenario& s) { return s.cluster.nodes > 1 && s.cluster.node.nics.count > 0; }
bool has_nics(const sim::Scenario& s) { return s.cluster.node.nics.count > 0; }

const HardwareKnob kKnobs[] = {
    {"peak-flops", "GPU dense peak FLOP/s, every format (cluster.node.hardware.peak.*)", KnobKind::compute,
     [](sim::Scenario& s, double f) {
       for (auto& p : s.cluster.node.gpu.peak) {
         if (p) *p = *p * f;
       }
     },
     always},
    {"hbm-bandwidth", "GPU memory bandwidth (cluster.node.hardware.hbm.bandwidth)", KnobKind::bandwidth,
     [](sim::Scenario& s, double f) { s.cluster.node.gpu.hbm_bandwidth = s.cluster.node.gpu.hbm_bandwidth * f; }, always},
    {"hbm-capacity", "GPU memory capacity (cluster.node.hardware.hbm.capacity)", KnobKind::capacity,
     [](sim::Scenario& s, double f) { s.cluster.node.gpu.hbm_capacity = s.cluster.node.gpu.hbm_capacity * f; }, always},
    {"nvlink-bandwidth", "NVLink bandwidth per GPU (cluster.node.hardware.nvlink.bandwidth)", KnobKind::bandwidth,
     [](sim::Scenario& s, double f) {
       if (auto& nv = s.cluster.node.gpu.nvlink) nv->bidirectional = nv->bidirectional * f;
     },
     [](const sim::Scenario& s) { return s.cluster.node.gpu.nvlink.has_value(); }},
    {"nic-bandwidth", "network adapter bandwidth (cluster.node.nics.bandwidth)", KnobKind::bandwidth,
     [](sim::Scenario& s, double f) { s.cluster.node.nics.bandwidth = s.cluster.node.nics.bandwidth * f; }, networked},
    {"pcie-bandwidth", "PCIe lanes of the GPU link and the switch tree, rounded (cluster.node.hardware.pcie.lanes, cluster.node.pcie.lanes)",
     KnobKind::bandwidth,
     [](sim::Scenario& s, double f) {
       s.cluster.node.gpu.pcie_lanes = scaled_count(s.cluster.node.gpu.pcie_lanes, f);
       s.cluster.node.pcie.lanes = scaled_count(s.cluster.node.pcie.lanes, f);
     },
     always},
    {"inter-socket-bandwidth", "CPU-to-CPU link bandwidth (cluster.node.pcie.inter_socket)", KnobKind::bandwidth,
     [](sim::Scenario& s, double f) { s.cluster.node.pcie.inter_socket = s.cluster.node.pcie.inter_socket * f; },
     [](const sim::Scenario& s) { return s.cluster.node.pcie.sockets > 1; }},
    {"nvlink-latency", "GPU-to-GPU latency across the NVLink fabric (cluster.node.fabric.latency)", KnobKind::latency,
     [](sim::Scenario& s, double f) { s.cluster.node.fabric_latency = s.cluster.node.fabric_latency * f; },
     [](const sim::Scenario& s) { return s.cluster.node.fabric == topology::IntraNodeFabric::nvswitch; }},
    {"nic-latency", "network adapter and host stack latency (cluster.node.nics.latency)", KnobKind::latency,
     [](sim::Scenario& s, double f) { s.cluster.node.nics.latency = s.cluster.node.nics.latency * f; }, has_nics},
    {"switch-latency", "network switch latency (cluster.network.switch_latency)", KnobKind::latency,
     [](sim::Scenario& s, double f) { s.cluster.network.switch_latency = s.cluster.network.switch_latency * f; }, networked},
    {"pcie-latency", "latency per PCIe hop (cluster.node.pcie.latency)", KnobKind::latency,
     [](sim::Scenario& s, double f) { s.cluster.node.pcie.latency = s.cluster.node.pcie.latency * f; }, always},
    {"overlap-slowdown", "compute and communication slowing each other while they overlap (profile overlap.*)", KnobKind::overlap,
     [](sim::Scenario& s, double f) {
       auto& p = own_profile(s);
       for (auto& row : p.compute_slowdown) {
         for (auto& x : row) x *= f;
       }
       for (auto& x : p.comm_slowdown) x *= f;
     },
     always},
};

}  // namespace

std::span<const HardwareKnob> hardware_knobs() { return kKnobs; }

void scale_all(sim::Scenario& scenario, KnobKind kind, double factor) {
  for (const auto& knob : kKnobs) {
    if (knob.kind == kind) knob.scale(scenario, factor);
  }
}

}  // namespace parasim::planner
