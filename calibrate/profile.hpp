#pragma once
// What a GPU and its links really deliver, as fractions of their datasheet figures: GEMM efficiency
// by format, memory-bound bandwidth, attention kernels, kernel launch gaps, collective bandwidth and
// latency per fabric, and how much computation and communication slow each other when they overlap.
// Every figure carries its source (public measurement, or a stated assumption).
#include <array>
#include <cstdint>
#include <string>

#include "core/precision.hpp"
#include "core/units.hpp"

namespace parasim::calibrate {

/// The fabric a transfer crosses: what sets its bandwidth, latency and overlap interference.
enum class Fabric { nvlink, pcie, network };
inline constexpr std::array kAllFabrics{Fabric::nvlink, Fabric::pcie, Fabric::network};
std::string_view fabric_name(Fabric f);

/// The kind of computation that overlaps a transfer.
enum class ComputeKind { gemm, attention, memory_bound };
std::string_view compute_kind_name(ComputeKind k);

/// NCCL's two ends of the protocol range on a fabric: Simple (full bandwidth, a larger fixed cost per
/// algorithm step) and LL (low latency, a fraction of the bandwidth). NCCL's tuner runs each
/// collective with whichever is faster for its size; so does the simulator.
struct FabricProfile {
  double efficiency = 0.8;  ///< Simple: achieved / nominal bandwidth of a large collective
  Seconds step_latency;     ///< Simple: software and protocol latency per algorithm step (beyond the wires)
  double ll_efficiency = 0.1;  ///< LL: achieved / nominal bandwidth
  Seconds ll_step_latency;     ///< LL: latency per algorithm step (beyond the wires)
};

struct Profile {
  std::string name;
  std::string source;
  /// Best measured GEMM throughput as a fraction of the dense peak, per format, and the shape it was
  /// measured at (M, N, K). The cost model turns it into a main-loop efficiency by dividing out
  /// that shape's wave quantization and K fill, so every shape is priced by the same law.
  std::array<double, kAllPrecisions.size()> gemm_efficiency{};
  std::array<std::int64_t, 3> gemm_reference{8192, 8192, 8192};
  int gemm_tile = 128;        ///< output tile edge for wave quantization
  double gemm_k_half = 128;   ///< K at which the main loop's fill and drain halve the efficiency
  double memory_efficiency = 0.85;  ///< streaming kernels, fraction of HBM bandwidth
  double attention_forward_efficiency = 0.6;   ///< flash attention forward, of the dense peak
  double attention_backward_efficiency = 0.5;
  /// Fraction of the full s² work a causal flash kernel does (masked blocks skipped).
  double causal_work_fraction = 0.5;
  Seconds kernel_launch;      ///< fixed time per kernel (launch, prologue, epilogue)
  Seconds collective_launch;  ///< fixed cost of starting a collective
  FabricProfile nvlink, pcie, network;
  bool nvls = false;            ///< NVLink SHARP (NVSwitch gen3+) reduces in the switch
  double nvls_efficiency = 0.6; ///< of the in-switch bound S / link bandwidth
  Seconds nvls_latency;         ///< fixed cost of an NVLS all-reduce beyond the launch
  /// Relative slowdown of compute while a transfer on a fabric overlaps it: [compute kind][fabric].
  std::array<std::array<double, 3>, 3> compute_slowdown{};
  /// Relative slowdown of a transfer on a fabric while compute overlaps it.
  std::array<double, 3> comm_slowdown{};

  const FabricProfile& fabric(Fabric f) const { return f == Fabric::nvlink ? nvlink : f == Fabric::pcie ? pcie : network; }
  double compute_slowdown_for(ComputeKind k, Fabric f) const {
    return compute_slowdown[static_cast<std::size_t>(k)][static_cast<std::size_t>(f)];
  }
};

/// The bundled profile for a GPU by its name (A100*, A800*, H100*, H800*, H200*, B200, GB200,
/// RTX-4090); an unknown GPU gets the generic profile, whose figures are stated assumptions.
Profile default_profile(const std::string& gpu_name);

}  // namespace parasim::calibrate
