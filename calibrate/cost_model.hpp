#pragma once
// Op → seconds on one GPU, from its datasheet (GpuSpec) and what it delivers (Profile).
//   GEMM: max(FLOPs / (peak · main-loop efficiency · wave quantization · K fill), bytes / (HBM ·
//         efficiency)) + kernel time. Wave quantization: ceil(M/tile)·ceil(N/tile) output tiles run in
//         waves of one per SM; a partial last wave idles the rest. K fill: K / (K + k_half). A GEMM
//         whose operand rows do not start on 16 bytes (Op::aligned) gets no tensor-core kernel from
//         cuBLAS and runs at the CUDA cores' fp32 rate instead of the tensor-core peak.
//   GEMMs and attention run at the profile's sustained clock: the fraction of the burst tensor-core
//         rate (short benchmarks) a GPU keeps through training under its power limit.
//   Attention (flash): FLOPs · causal work / (peak · attention efficiency · sustained clock), or its
//         bytes at HBM speed if that is slower, + launch. The profile quotes the efficiency at head dim
//         128 and 16K keys; other shapes scale by the sequence fill s/(s + seq_half) and by the matmul
//         share 1/(1 + exp_head_dim/d) (one softmax exponential per score against 4·d matmul FLOPs), each
//         relative to the reference shape. Causal work: the causal fraction × (n + 1)/n for n key blocks
//         of kFlashBlock (the diagonal blocks run whole), relative to the reference.
//   Memory-bound: bytes / (HBM · efficiency) + launch.
//   Measured GEMM points (profile.gemm_points) scale a GEMM's time by the measured / law ratio
//   interpolated in log space (calibrate/gemm_points.hpp); without points the factor is exactly 1.
#include <vector>

#include "calibrate/gemm_points.hpp"
#include "calibrate/profile.hpp"
#include "topology/gpu_spec.hpp"
#include "workload/ops.hpp"

namespace parasim::calibrate {

/// Key block of flash kernels (FlashAttention-1/2/3 tile the keys by 128 at head dim 128).
inline constexpr double kFlashBlock = 128;
/// Matmul work of a flash backward against the FLOPs it is counted with (2 x forward): the scores are
/// recomputed, 5 matmuls for 4; FlashAttention's benchmarks count the backward as 2.5 x forward.
inline constexpr double kFlashBackwardWork = 1.25;

ComputeKind compute_kind(workload::OpKind kind);

class CostModel {
 public:
  CostModel(topology::GpuSpec gpu, Profile profile);

  const topology::GpuSpec& gpu() const { return gpu_; }
  const Profile& profile() const { return profile_; }

  Seconds op_time(const workload::Op& op) const;
  Seconds ops_time(const std::vector<workload::Op>& ops) const;
  /// The kind that takes most of the time of a list of ops (what an overlapping transfer slows).
  ComputeKind dominant_kind(const std::vector<workload::Op>& ops) const;
  /// The efficiency of a GEMM main loop free of wave and K-fill losses: the profile's best measured
  /// efficiency divided by the wave quantization and K fill of the shape it was measured at.
  double main_loop_efficiency(Precision p) const;
  /// Wave-quantization efficiency of an M x N output (times batch) on this GPU's SMs.
  double wave_efficiency(std::int64_t m, std::int64_t n, int batch) const;
  /// Flash attention efficiency of an attention op's shape (before the sustained clock).
  double attention_efficiency(const workload::Op& op) const;
  /// Keys a query of an attention op meets: its window or chunk on a local layer, else every key.
  static double attended_keys(const workload::Op& op);
  /// Dense peak for a format; fp8 falls back to nothing on GPUs without it (checked by the caller).
  FlopsPerSecond peak(Precision p) const;
  /// Whether `peak` has a figure for this format (tf32 falls back on fp32).
  bool has_peak(Precision p) const;

 private:
  topology::GpuSpec gpu_;
  Profile profile_;
  GemmPointTable points_;
};

}  // namespace parasim::calibrate
