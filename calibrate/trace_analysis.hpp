#pragma once
// From Kineto traces to measurements: kernels counted and timed by class, and joined to the host op
// that launched them to learn what they computed.
//
// The join: a kernel's correlation id names the runtime call (cudaLaunchKernel, cuLaunchKernel, …)
// that launched it; the innermost cpu_op on that call's thread whose interval holds the call is the
// op that launched it, and its enclosing ops are found by interval nesting. (Newer traces also link a
// kernel's External id to its op; that is used when the launch is missing.)
//   GEMM shape: the innermost enclosing aten::mm / addmm / bmm / baddbmm / matmul / linear /
//     _scaled_mm with Input Dims; all GEMM kernels one op launched are one GEMM. Format from the
//     input type (float is FP32, or TF32 when a kernel's name says tf32 / s1688 / xmma; BFloat16,
//     Half, Float8).
//   NCCL kernel: collective kind from the kernel name, refined by the host op (nccl:all_to_all is a
//     SendRecv kernel); algorithm and protocol from the kernel name (RING, TREE, NVLS, … / LL, LL128,
//     SIMPLE); size from the kernel's own metadata (In / Out msg nelems, dtype), else from the
//     nccl:* or c10d::* op's Input Dims; group size from the metadata (Group size), else the
//     all-gather / reduce-scatter in/out ratio, else the trace's only process group, else the world size.
//     A group is inside one node when the job's world fits in one node (--gpus-per-node).
//   Memory: device-to-device copies (2 x bytes moved) and elementwise kernels whose op recorded
//     tensor inputs (inputs plus an output as large as the largest input).
//   Overlap: a compute kernel is overlapped when collectives on its GPU cover at least half of it,
//     alone when none touches it; the same kernel (name and launch shape) compared both ways.
#include <array>
#include <string>
#include <vector>

#include "calibrate/kineto_trace.hpp"
#include "calibrate/measurements.hpp"

namespace parasim::calibrate {

struct ClassTotals {
  std::array<std::uint64_t, kKernelClasses> count{};
  std::array<std::int64_t, kKernelClasses> ns{};
  void add(KernelClass c, std::int64_t dur_ns) {
    ++count[static_cast<std::size_t>(c)];
    ns[static_cast<std::size_t>(c)] += dur_ns;
  }
};

struct TraceFileSummary {
  std::string file;
  std::string gpu;  ///< deviceProperties name of the device its kernels ran on (empty when not recorded)
  std::optional<int> rank, world_size;
  ClassTotals totals;
  std::uint64_t events = 0, json_bytes = 0, file_bytes = 0;
};

struct TraceAnalysis {
  std::vector<TraceFileSummary> files;
  ClassTotals totals;
  Measurements measurements;
  // How much of the trace the join could explain.
  std::size_t kernels = 0, kernels_with_op = 0;
  std::size_t gemm_kernels = 0, gemm_kernels_with_shape = 0;
  std::size_t nccl_kernels = 0, nccl_kernels_with_size = 0;
  std::vector<std::string> notes;  ///< assumptions the analysis had to make, for the report
};

struct TraceAnalysisOptions {
  int gpus_per_node = 8;
};

TraceAnalysis analyze_traces(const std::vector<KinetoTrace>& traces, const TraceAnalysisOptions& options = {});

/// GEMM (m, n, k, batch) of a host op from its name and input dims; nullopt when it is no GEMM op
/// or its dims do not say.
struct GemmShape {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;
};
std::optional<GemmShape> gemm_shape(std::string_view op, const std::vector<std::vector<std::int64_t>>& dims);

/// Bytes per element of a PyTorch type name ("float" 4, "c10::BFloat16" 2, …); 0 when unknown.
int dtype_bytes(std::string_view type);

/// The collective, algorithm and protocol an NCCL kernel's name says ("ncclKernel_AllReduce_RING_LL_Sum_float",
/// "ncclDevKernel_AllGather_RING_LL"): algorithm and protocol empty when the name does not say.
struct NcclKernelName {
  std::optional<CollectiveKind> kind;
  std::string algorithm, protocol;
};
NcclKernelName parse_nccl_kernel_name(std::string_view name);

}  // namespace parasim::calibrate
