#pragma once
// What a calibration run measured, whoever measured it: the trace importer (calibrate/trace_analysis)
// and the CUPTI collector (calibrate/cupti_records) both reduce GPU activity to these samples, and one
// fit (calibrate/profile_fit) turns them into a profile.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/profile.hpp"
#include "core/precision.hpp"

namespace parasim::calibrate {

/// One GEMM (all the kernels one matmul launched: split-K reductions and epilogues included).
struct GemmSample {
  Precision precision = Precision::bf16;
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
  double seconds = 0;
  int kernels = 1;
  bool burst = false;  ///< timed in a few launches at the boost clock (the collector), not in training
  int launches = 1;    ///< launches whose median `seconds` is
};

/// One collective. `bytes` is the whole buffer as nccl-tests counts it (see CollectivePoint).
struct CollectiveSample {
  CollectiveKind kind = CollectiveKind::all_reduce;
  int ranks = 2;
  double bytes = 0;
  double seconds = 0;
  std::string algorithm, protocol;  ///< from the NCCL kernel name where it says
  bool intra_node = true;           ///< all ranks in one node (NVLink or PCIe), else across the network
  std::optional<Fabric> fabric;     ///< when the measurement knows it (the collector checks peer access)
};

/// A memory-bound transfer: a device-to-device copy or an elementwise kernel, bytes read + written.
struct MemorySample {
  std::string kind;  ///< "copy" or "elementwise"
  double bytes = 0;
  double seconds = 0;
  int launches = 1;  ///< launches whose median `seconds` is
};

/// One GEMM run back to back long enough for the power limit to act: the median of its first launches
/// (the boost clock, as a short benchmark sees it) against the median of its last ones.
struct SustainedSample {
  Precision precision = Precision::bf16;
  std::int64_t m = 0, n = 0, k = 0;
  double burst_seconds = 0, sustained_seconds = 0;
  int launches = 0;          ///< all the launches of the run
  int burst_launches = 0, sustained_launches = 0;  ///< how many each median is of
  double run_seconds = 0;    ///< GPU time from the first launch's start to the last one's end
};

/// The same compute kernel alone and while a collective ran beside it on the same GPU: medians of
/// each, with how many launches each median is over.
struct ComputeOverlap {
  ComputeKind kind = ComputeKind::gemm;
  bool intra_node = true;  ///< the overlapping collectives stayed in the node
  std::optional<Fabric> fabric;
  double alone_s = 0, overlapped_s = 0;
  int alone = 0, overlapped = 0;
};

/// The same collective alone and while compute ran beside it.
struct CommOverlap {
  bool intra_node = true;
  std::optional<Fabric> fabric;
  double alone_s = 0, overlapped_s = 0;
  int alone = 0, overlapped = 0;
};

struct Measurements {
  std::vector<GemmSample> gemms;
  std::vector<CollectiveSample> collectives;
  std::vector<MemorySample> memory;
  std::vector<ComputeOverlap> compute_overlap;
  std::vector<CommOverlap> comm_overlap;
  std::optional<SustainedSample> sustained;
};

}  // namespace parasim::calibrate
