#pragma once
// What a GPU and its links really deliver, as fractions of their datasheet figures: GEMM efficiency
// by format, memory-bound bandwidth, attention kernels, kernel launch gaps, collective bandwidth and
// latency per fabric, and how much computation and communication slow each other when they overlap.
// Every figure carries its source (public measurement, or a stated assumption).
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

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
  bool operator==(const FabricProfile&) const = default;
};

/// A collective as measured (nccl-tests, a profiler trace, the CUPTI collector); broadcast and
/// reduce appear in traces though no plan produces them.
enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, broadcast, reduce };
inline constexpr std::array kAllCollectiveKinds{CollectiveKind::all_reduce, CollectiveKind::all_gather,
                                                CollectiveKind::reduce_scatter, CollectiveKind::all_to_all,
                                                CollectiveKind::send_recv, CollectiveKind::broadcast, CollectiveKind::reduce};
std::string_view collective_kind_name(CollectiveKind k);

/// A measured GEMM: batch x (m x k) · (k x n) in one format and the GPU time it took. With measured
/// points the cost model scales its shape law by the measured / law ratio of the nearest points,
/// interpolated in log space (calibrate/gemm_points.hpp).
struct GemmPoint {
  Precision precision = Precision::bf16;
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  Seconds time;
  std::string source;  ///< "public: …", "trace: …", "cupti: …"
  /// Timed in a short burst (a benchmark's few launches, the collector's probes) at the boost clock,
  /// rather than under the sustained power limit of training (a profiler trace of a training step):
  /// the cost model sets a burst point against the law without `sustained_clock`.
  bool burst = false;
  bool operator==(const GemmPoint&) const = default;
};

/// A measured collective: `bytes` is the whole buffer as nccl-tests counts it (all-reduce: the
/// buffer; all-gather: the gathered output; reduce-scatter: the input; all-to-all: what each rank
/// sends), over `ranks` ranks on a fabric, with the algorithm and protocol where known.
struct CollectivePoint {
  CollectiveKind collective = CollectiveKind::all_reduce;
  Fabric fabric = Fabric::nvlink;
  int ranks = 2;
  double bytes = 0;
  Seconds time;
  std::string algorithm;  ///< "ring", "tree", "nvls", … as NCCL names it; empty when unknown
  std::string protocol;   ///< "LL", "LL128", "SIMPLE"; empty when unknown
  std::string source;
  bool operator==(const CollectivePoint&) const = default;
};

/// A measured memory-bound transfer: a device-to-device copy or an elementwise kernel moving
/// `bytes` (read + written) in `time`.
struct MemoryPoint {
  std::string kind;  ///< "copy" or "elementwise"
  double bytes = 0;
  Seconds time;
  std::string source;
  bool operator==(const MemoryPoint&) const = default;
};

/// The shape the attention efficiencies of a profile are quoted at.
inline constexpr double kAttentionReferenceHeadDim = 128;
inline constexpr double kAttentionReferenceSeq = 16384;

struct Profile {
  std::string name;
  std::string source;
  /// The device as it names itself (CUDA device properties), kept even when no bundled hardware
  /// matches it; empty for profiles built from public figures.
  std::string gpu;
  /// The hardware (GpuSpec name) whose datasheet figures the fractions below refer to; empty when unknown.
  std::string hardware;
  bool what_if = false;  ///< derived from announced specifications, not from measurements of the part
  /// Where each number comes from, by key path in the profile YAML ("gemm.efficiency.bf16",
  /// "fabrics.nvlink"): "public: …", "trace: …", "cupti: …", "log: …" (calibrate fit on training logs) or
  /// "assumed: …". A section's entry covers its keys.
  std::map<std::string, std::string> sources;
  std::vector<GemmPoint> gemm_points;
  std::vector<CollectivePoint> collective_points;
  std::vector<MemoryPoint> memory_points;
  /// Best measured GEMM throughput as a fraction of the dense peak, per format, and the shape it was
  /// measured at (M, N, K). The cost model turns it into a main-loop efficiency by dividing out
  /// that shape's wave quantization and K fill, so every shape is priced by the same law.
  std::array<double, kAllPrecisions.size()> gemm_efficiency{};
  std::array<std::int64_t, 3> gemm_reference{8192, 8192, 8192};
  int gemm_tile = 128;        ///< output tile edge for wave quantization
  double gemm_k_half = 128;   ///< K at which the main loop's fill and drain halve the efficiency
  double memory_efficiency = 0.85;  ///< streaming kernels, fraction of HBM bandwidth
  /// Fraction of the burst tensor-core rate (what short benchmarks such as MAMF measure) that a GPU
  /// sustains through minutes of training under its board power limit: GEMMs and attention run at it.
  double sustained_clock = 1.0;
  /// Flash attention forward / backward, of the dense peak, at the kernels' reference shape: head dim
  /// kAttentionReferenceHeadDim, kAttentionReferenceSeq keys (the figures FlashAttention papers quote).
  double attention_forward_efficiency = 0.6;
  double attention_backward_efficiency = 0.5;
  /// The same for FlashAttention-1 (flash-attn 1.x), the kernel of 2022-23 PyTorch stacks: built for
  /// Ampere's mma.sync, it keeps its Ampere fractions on GPUs that issue those at full rate and halves
  /// them on Hopper, whose tensor cores reach their rate only through wgmma (training.flash_kernel).
  double attention_flash1_forward_efficiency = 0.40;
  double attention_flash1_backward_efficiency = 0.30;
  /// The same for FlashAttention-2 (flash-attn 2.x, PyTorch SDPA's flash backend): also Ampere's
  /// mma.sync, so its Ampere fractions halve on Hopper too.
  double attention_flash2_forward_efficiency = 0.61;
  double attention_flash2_backward_efficiency = 0.48;
  /// Fraction of the full s² work a causal flash kernel does (masked blocks skipped).
  double causal_work_fraction = 0.5;
  /// Keys at which a flash kernel's per-(query block) prologue and epilogue halve its efficiency:
  /// efficiency ∝ s_kv / (s_kv + seq_half); 0 turns the law off.
  double attention_seq_half = 0;
  /// Head dim at which the softmax exponentials (one per score, on the special-function units) take as
  /// long as the two matmuls (4·d FLOPs per score on the tensor cores): efficiency ∝ 1 / (1 + this / d).
  double attention_exp_head_dim = 0;
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
  bool operator==(const Profile&) const = default;
};

/// The bundled profile for a GPU by its name (A100*, A800*, H100*, H800*, H200*, B200, GB200,
/// RTX-4090); an unknown GPU gets the generic profile, whose figures are stated assumptions.
Profile default_profile(const std::string& gpu_name);

}  // namespace parasim::calibrate
