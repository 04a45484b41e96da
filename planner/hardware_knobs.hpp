#pragma once
// The hardware parameters a sensitivity study perturbs, as a registry: each knob scales one figure
// of a loaded scenario (the GPU's datasheet, the node, the network, or the calibration profile's
// overlap interference) by a factor. The physics tests use the same knobs ("double every bandwidth").
#include <functional>
#include <span>
#include <string_view>

#include "sim/scenario.hpp"

namespace parasim::planner {

enum class KnobKind { compute, bandwidth, capacity, latency, overlap };

struct HardwareKnob {
  std::string_view name;         ///< "nic-bandwidth"
  std::string_view description;  ///< what it scales, by scenario key
  KnobKind kind;
  /// Scales the figure by `factor` (> 0). Integer figures (PCIe lanes) round to the nearest whole
  /// value, at least 1. A knob the scenario lacks (no NVLink, one node) leaves it unchanged.
  std::function<void(sim::Scenario&, double factor)> scale;
  /// Whether the scenario has the figure at all (no NICs on one node, no NVLink on a PCIe board).
  std::function<bool(const sim::Scenario&)> applies;
};

/// Every knob, in a fixed order.
std::span<const HardwareKnob> hardware_knobs();

/// Scales every knob of one kind (e.g. every bandwidth) by `factor`.
void scale_all(sim::Scenario& scenario, KnobKind kind, double factor);

}  // namespace parasim::planner
