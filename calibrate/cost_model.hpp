#pragma once
// Op → seconds on one GPU, from its datasheet (GpuSpec) and what it delivers (Profile).
//   GEMM: max(FLOPs / (peak · main-loop efficiency · wave quantization · K fill), bytes / (HBM ·
//         efficiency)) + kernel time. Wave quantization: ceil(M/tile)·ceil(N/tile) output tiles run in
//         waves of one per SM; a partial last wave idles the rest. K fill: K / (K + k_half).
//   Attention (flash): FLOPs · causal work fraction / (peak · attention efficiency), or its bytes
//         at HBM speed if that is slower, + launch.
//   Memory-bound: bytes / (HBM · efficiency) + launch.
//   Measured GEMM points (profile.gemm_points) scale a GEMM's time by the measured / law ratio
//   interpolated in log space (calibrate/gemm_points.hpp); without points the factor is exactly 1.
#include <vector>

#include "calibrate/gemm_points.hpp"
#include "calibrate/profile.hpp"
#include "topology/gpu_spec.hpp"
#include "workload/ops.hpp"

namespace parasim::calibrate {

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
  /// Dense peak for a format; fp8 falls back to nothing on GPUs without it (checked by the caller).
  FlopsPerSecond peak(Precision p) const;

 private:
  topology::GpuSpec gpu_;
  Profile profile_;
  GemmPointTable points_;
};

}  // namespace parasim::calibrate
