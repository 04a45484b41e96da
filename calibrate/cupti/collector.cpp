// parasim-calibrate-gpu: measures the GPUs of this node and writes a calibration profile.
//
//   parasim-calibrate-gpu --out node.yaml [--hardware hw.yaml] [--iterations 10] [--quick] [--no-nccl]
//
// What it runs (the sweep of calibrate/cupti_records.hpp), timing every kernel, copy and memset with
// the CUPTI Activity API (GPU timestamps, never host timers):
//   - cuBLAS GEMMs over a shape grid in every format the GPU's tensor cores run (FP32, TF32, BF16,
//     FP16; FP8 through cuBLASLt from compute capability 8.9), on GPU 0;
//   - device-to-device copies and a memory-bound elementwise kernel (cuBLAS SAXPY: reads x and y,
//     writes y) from 1 MiB to 1 GiB;
//   - NCCL all-reduce, all-gather, reduce-scatter, all-to-all (grouped send/recv) and send/recv between
//     ring neighbours across all local GPUs, 1 KiB to 1 GiB, once with NCCL_PROTO=Simple and once with
//     NCCL_PROTO=LL so that each protocol's latency and bandwidth are fitted on their own;
//   - a GEMM while an all-reduce runs beside it on every GPU, against both alone: the overlap slowdown.
// The measurements are fitted (calibrate/profile_fit.hpp) from the bundled profile of the GPU family
// with the datasheet of the bundled hardware file whose name is the device's (or --hardware), and
// written as a profile YAML that `parasim calibrate show` and `simulate` read.
//
// Exit codes: 0 profile written; 1 internal error; 2 bad arguments or unusable input files; 4 no CUDA
// GPU on this machine (or no driver); 5 a CUDA, cuBLAS, NCCL or CUPTI call failed while measuring.
// Every error is one line on stderr.
#include <CLI/CLI.hpp>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "calibrate/cupti_records.hpp"
#include "calibrate/profile_fit.hpp"
#include "calibrate/profile_yaml.hpp"
#include "calibrate/trace_import.hpp"
#include "core/error.hpp"
#include "core/schema.hpp"
#include "core/suggest.hpp"

namespace {

using namespace parasim;
using namespace parasim::calibrate;

constexpr int kExitBadInput = 2;
constexpr int kExitNoGpu = 4;
constexpr int kExitMeasurement = 5;

struct MeasurementError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NoGpu : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw MeasurementError(fmt::format("{}: {}", what, cudaGetErrorString(e)));
}
void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) throw MeasurementError(fmt::format("{}: cuBLAS status {}", what, static_cast<int>(e)));
}
void check(ncclResult_t e, const char* what) {
  if (e != ncclSuccess) throw MeasurementError(fmt::format("{}: {}", what, ncclGetErrorString(e)));
}
void check(CUptiResult e, const char* what) {
  if (e != CUPTI_SUCCESS) {
    const char* text = "unknown";
    cuptiGetResultString(e, &text);
    throw MeasurementError(fmt::format("{}: {}", what, text));
  }
}

// ---- CUPTI activity buffers -----------------------------------------------------------------------

std::mutex log_mutex;
ActivityLog* active_log = nullptr;
constexpr std::size_t kBufferBytes = 8u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  std::vector<ActivityRecord> records;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    ActivityRecord r;
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        r.kind = ActivityRecord::Kind::kernel;
        r.correlation = k->correlationId;
        r.start_ns = k->start;
        r.end_ns = k->end;
        r.device = k->deviceId;
        r.stream = k->streamId;
        r.name = k->name ? k->name : "";
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* c = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        r.kind = ActivityRecord::Kind::memcpy;
        r.correlation = c->correlationId;
        r.start_ns = c->start;
        r.end_ns = c->end;
        r.device = c->deviceId;
        r.stream = c->streamId;
        r.bytes = c->bytes;
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* s = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        r.kind = ActivityRecord::Kind::memset;
        r.correlation = s->correlationId;
        r.start_ns = s->start;
        r.end_ns = s->end;
        r.device = s->deviceId;
        r.stream = s->streamId;
        r.bytes = s->bytes;
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* x = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        r.kind = ActivityRecord::Kind::external_correlation;
        r.correlation = x->correlationId;
        r.external_id = x->externalId;
        break;
      }
      default: continue;
    }
    records.push_back(std::move(r));
  }
  std::free(buffer);
  std::lock_guard<std::mutex> lock(log_mutex);
  if (active_log) {
    for (const auto& r : records) active_log->record(r);
  }
}

/// Everything launched inside one scope belongs to one iteration of one probe.
class ProbeScope {
 public:
  ProbeScope(std::size_t probe, int iteration) {
    check(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, probe_iteration_id(probe, iteration)),
          "cuptiActivityPushExternalCorrelationId");
  }
  ~ProbeScope() {
    uint64_t id = 0;
    cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
  }
  ProbeScope(const ProbeScope&) = delete;
  ProbeScope& operator=(const ProbeScope&) = delete;
};

// ---- device memory --------------------------------------------------------------------------------

struct DeviceBuffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  DeviceBuffer(std::size_t n) : bytes(n) {
    check(cudaMalloc(&ptr, n), "cudaMalloc");
    check(cudaMemset(ptr, 0, n), "cudaMemset");
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// ---- GEMMs ----------------------------------------------------------------------------------------

struct GemmRunner {
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;
  cudaStream_t stream = nullptr;
  std::unique_ptr<DeviceBuffer> a, b, c, workspace;

  GemmRunner(std::size_t matrix_bytes, cudaStream_t s) : stream(s) {
    check(cublasCreate(&handle), "cublasCreate");
    check(cublasSetStream(handle, stream), "cublasSetStream");
    check(cublasLtCreate(&lt), "cublasLtCreate");
    a = std::make_unique<DeviceBuffer>(matrix_bytes);
    b = std::make_unique<DeviceBuffer>(matrix_bytes);
    c = std::make_unique<DeviceBuffer>(matrix_bytes);
    workspace = std::make_unique<DeviceBuffer>(std::size_t{64} << 20);
  }
  ~GemmRunner() {
    cublasLtDestroy(lt);
    cublasDestroy(handle);
  }

  /// A and B hold random numbers of format `p` (random_operands): a 16 MiB pattern, repeated.
  void fill(Precision p) {
    const auto pattern = random_operands(p, std::size_t{16} << 20, static_cast<std::uint64_t>(p) + 1);
    for (auto* buffer : {a.get(), b.get()}) {
      for (std::size_t at = 0; at < buffer->bytes; at += pattern.size()) {
        const std::size_t n = std::min(pattern.size(), buffer->bytes - at);
        check(cudaMemcpy(static_cast<char*>(buffer->ptr) + at, pattern.data(), n, cudaMemcpyHostToDevice), "cudaMemcpy");
      }
    }
  }

  /// One GEMM (or batched GEMM): C[m x n] = A[m x k] · B[k x n], column-major, in `p`.
  void run(Precision p, std::int64_t batch, std::int64_t m, std::int64_t n, std::int64_t k) {
    if (p == Precision::fp8) return run_fp8(m, n, k);
    const float one = 1.0f, zero = 0.0f;
    cudaDataType type = CUDA_R_32F;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    switch (p) {
      case Precision::fp32: compute = CUBLAS_COMPUTE_32F_PEDANTIC; break;
      case Precision::tf32: compute = CUBLAS_COMPUTE_32F_FAST_TF32; break;
      case Precision::bf16: type = CUDA_R_16BF; break;
      case Precision::fp16: type = CUDA_R_16F; break;
      case Precision::fp8: break;
    }
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    if (batch == 1) {
      check(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, mi, ni, ki, &one, a->ptr, type, mi, b->ptr, type, ki, &zero, c->ptr, type, mi, compute,
                         CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
    } else {
      check(cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, mi, ni, ki, &one, a->ptr, type, mi, m * k, b->ptr, type, ki, k * n, &zero,
                                       c->ptr, type, mi, m * n, static_cast<int>(batch), compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmStridedBatchedEx");
    }
  }

  /// FP8 (E4M3) inputs, BF16 output, FP32 accumulation; cuBLASLt wants A transposed ("TN").
  void run_fp8(std::int64_t m, std::int64_t n, std::int64_t k) {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    check(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)), "cublasLtMatmulDescSetAttribute");
    check(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof(none)), "cublasLtMatmulDescSetAttribute");
    check(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, static_cast<uint64_t>(k), static_cast<uint64_t>(m), k), "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k), "cublasLtMatrixLayoutCreate");
    check(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, static_cast<uint64_t>(m), static_cast<uint64_t>(n), m), "cublasLtMatrixLayoutCreate");
    cublasLtMatmulPreference_t pref = nullptr;
    check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const std::size_t ws = workspace->bytes;
    check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)), "cublasLtMatmulPreferenceSetAttribute");
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    check(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heuristic, &found), "cublasLtMatmulAlgoGetHeuristic");
    const float one = 1.0f, zero = 0.0f;
    if (found > 0) {
      check(cublasLtMatmul(lt, op, &one, a->ptr, la, b->ptr, lb, &zero, c->ptr, lc, c->ptr, lc, &heuristic.algo, workspace->ptr, ws, stream),
            "cublasLtMatmul");
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatmulDescDestroy(op);
    if (found == 0) throw MeasurementError(fmt::format("cuBLASLt has no FP8 algorithm for {} x {} x {}", m, n, k));
  }
};

std::size_t element_size(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4;
    case Precision::bf16:
    case Precision::fp16: return 2;
    case Precision::fp8: return 1;
  }
  return 4;
}

// ---- NCCL across the local GPUs ---------------------------------------------------------------------

struct Communicators {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<std::unique_ptr<DeviceBuffer>> send, recv;
  int n = 0;

  /// Communicators over all `n` GPUs, made with NCCL_PROTO=`protocol`.
  Communicators(int gpus, const char* protocol, std::size_t bytes) : n(gpus) {
    setenv("NCCL_PROTO", protocol, 1);
    comms.resize(static_cast<std::size_t>(n));
    std::vector<int> devices(static_cast<std::size_t>(n));
    for (int d = 0; d < n; ++d) devices[static_cast<std::size_t>(d)] = d;
    check(ncclCommInitAll(comms.data(), n, devices.data()), "ncclCommInitAll");
    unsetenv("NCCL_PROTO");
    for (int d = 0; d < n; ++d) {
      check(cudaSetDevice(d), "cudaSetDevice");
      cudaStream_t s = nullptr;
      check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
      streams.push_back(s);
      send.push_back(std::make_unique<DeviceBuffer>(bytes));
      recv.push_back(std::make_unique<DeviceBuffer>(bytes));
    }
  }
  ~Communicators() {
    for (int d = 0; d < n; ++d) {
      cudaSetDevice(d);
      cudaStreamSynchronize(streams[static_cast<std::size_t>(d)]);
      ncclCommDestroy(comms[static_cast<std::size_t>(d)]);
      cudaStreamDestroy(streams[static_cast<std::size_t>(d)]);
    }
  }
  Communicators(const Communicators&) = delete;
  Communicators& operator=(const Communicators&) = delete;

  /// One collective of `bytes` (nccl-tests' size) on every GPU at once, in bytes (ncclInt8).
  void run(CollectiveKind kind, std::size_t bytes) {
    check(ncclGroupStart(), "ncclGroupStart");
    for (int d = 0; d < n; ++d) {
      const auto i = static_cast<std::size_t>(d);
      void* s = send[i]->ptr;
      void* r = recv[i]->ptr;
      auto& c = comms[i];
      auto& st = streams[i];
      const std::size_t part = bytes / static_cast<std::size_t>(n);
      switch (kind) {
        case CollectiveKind::all_reduce: check(ncclAllReduce(s, r, bytes, ncclInt8, ncclSum, c, st), "ncclAllReduce"); break;
        case CollectiveKind::all_gather: check(ncclAllGather(s, r, part, ncclInt8, c, st), "ncclAllGather"); break;
        case CollectiveKind::reduce_scatter: check(ncclReduceScatter(s, r, part, ncclInt8, ncclSum, c, st), "ncclReduceScatter"); break;
        case CollectiveKind::broadcast: check(ncclBroadcast(s, r, bytes, ncclInt8, 0, c, st), "ncclBroadcast"); break;
        case CollectiveKind::reduce: check(ncclReduce(s, r, bytes, ncclInt8, ncclSum, 0, c, st), "ncclReduce"); break;
        case CollectiveKind::all_to_all:
          for (int peer = 0; peer < n; ++peer) {
            check(ncclSend(static_cast<char*>(s) + static_cast<std::size_t>(peer) * part, part, ncclInt8, peer, c, st), "ncclSend");
            check(ncclRecv(static_cast<char*>(r) + static_cast<std::size_t>(peer) * part, part, ncclInt8, peer, c, st), "ncclRecv");
          }
          break;
        case CollectiveKind::send_recv:
          // Each GPU sends to the next and receives from the previous: every link of the ring busy at once.
          check(ncclSend(s, bytes, ncclInt8, (d + 1) % n, c, st), "ncclSend");
          check(ncclRecv(r, bytes, ncclInt8, (d + n - 1) % n, c, st), "ncclRecv");
          break;
      }
    }
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

  void synchronize() {
    for (int d = 0; d < n; ++d) {
      check(cudaSetDevice(d), "cudaSetDevice");
      check(cudaStreamSynchronize(streams[static_cast<std::size_t>(d)]), "cudaStreamSynchronize");
    }
  }
};

// ---- the run ----------------------------------------------------------------------------------------

struct Options {
  std::string out = "gpu-profile.yaml", hardware, name;
  std::string hardware_dir = std::string(PARASIM_SOURCE_DIR) + "/scenarios/hardware";
  std::string profiles_dir = std::string(PARASIM_SOURCE_DIR) + "/scenarios/profiles";
  int iterations = 10;
  double sustain_seconds = 3;
  bool quick = false, no_nccl = false;
};

/// The local GPUs, or the reason there are none.
int count_gpus() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    throw NoGpu(fmt::format("no CUDA GPU on this machine ({}); run parasim-calibrate-gpu on a GPU node",
                                         e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found 0 devices"));
  }
  return n;
}

/// One 8192³ GEMM back to back for `seconds` after a second idle: its first launches run at the boost
/// clock a short benchmark sees, its last under the board's power limit, as training runs.
void sustain(ActivityLog& log, GemmRunner& gemm, cudaStream_t stream, const std::vector<Precision>& formats, double seconds) {
  Probe probe;
  probe.kind = ProbeKind::sustained_gemm;
  probe.precision = std::find(formats.begin(), formats.end(), Precision::bf16) != formats.end() ? Precision::bf16 : formats.back();
  probe.m = probe.n = probe.k = 8192;
  gemm.fill(probe.precision);
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const std::size_t id = log.add(probe);
  const auto began = std::chrono::steady_clock::now();
  constexpr int kMostLaunches = 0xffff;  // the iteration's 16 bits of the external correlation id
  for (int i = 0; i < kMostLaunches; ++i) {
    {
      ProbeScope scope(id, i);
      gemm.run(probe.precision, 1, probe.m, probe.n, probe.k);
    }
    if (i % 64 != 63) continue;
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");  // the host only decides when to stop
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count() >= seconds) break;
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

// The GEMM sweep on GPU 0, every format the GPU has; the id of the 8192^3 bf16 (else fp16) probe, the
// twin of the overlap probe.
std::optional<std::size_t> measure_gemms(ActivityLog& log, GemmRunner& gemm, cudaStream_t stream, const std::vector<Precision>& formats,
                                         const std::vector<GemmShape4>& shapes, int reps) {
  std::optional<std::size_t> overlap_alone;
  for (auto p : formats) {
    gemm.fill(p);
    for (const auto& s : shapes) {
      if (p == Precision::fp8 && s.batch > 1) continue;
      Probe probe;
      probe.kind = ProbeKind::gemm;
      probe.precision = p;
      probe.batch = s.batch;
      probe.m = s.m;
      probe.n = s.n;
      probe.k = s.k;
      const std::size_t id = log.add(probe);
      if (s.batch == 1 && s.m == 8192 && s.n == 8192 && s.k == 8192 && (p == Precision::bf16 || (!overlap_alone && p == Precision::fp16))) overlap_alone = id;
      for (int i = 0; i < reps; ++i) {
        ProbeScope scope(id, i);
        gemm.run(p, s.batch, s.m, s.n, s.k);
      }
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    }
  }
  return overlap_alone;
}

// Copies and the elementwise kernel (cuBLAS's saxpy) from 1 MiB up, by powers of 4.
void measure_memory(ActivityLog& log, GemmRunner& gemm, cudaStream_t stream, bool quick, int reps) {
  const double top = quick ? 268435456.0 : 1073741824.0;
  DeviceBuffer x(static_cast<std::size_t>(top)), y(static_cast<std::size_t>(top));
  for (double bytes = 1048576.0; bytes <= top; bytes *= 4) {
    Probe copy;
    copy.kind = ProbeKind::copy;
    copy.bytes = 2 * bytes;  // read and written
    const std::size_t copy_id = log.add(copy);
    for (int i = 0; i < reps; ++i) {
      ProbeScope scope(copy_id, i);
      check(cudaMemcpyAsync(y.ptr, x.ptr, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    }
    Probe axpy;
    axpy.kind = ProbeKind::elementwise;
    axpy.bytes = 3 * bytes;  // reads x and y, writes y
    const std::size_t axpy_id = log.add(axpy);
    const float alpha = 1.0f;
    const int elements = static_cast<int>(bytes / 4);
    for (int i = 0; i < reps; ++i) {
      ProbeScope scope(axpy_id, i);
      check(cublasSaxpy(gemm.handle, elements, &alpha, static_cast<const float*>(x.ptr), 1, static_cast<float*>(y.ptr), 1), "cublasSaxpy");
    }
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
}

// The fabric between the local GPUs: NVLink when the datasheet has it and every pair has peer access.
Fabric local_fabric(int gpus, const std::optional<topology::GpuSpec>& spec) {
  bool peers = true;
  for (int a = 0; a < gpus; ++a) {
    for (int b = 0; b < gpus; ++b) {
      int can = 0;
      if (a != b && cudaDeviceCanAccessPeer(&can, a, b) == cudaSuccess && !can) peers = false;
    }
  }
  return spec && spec->nvlink && peers ? Fabric::nvlink : Fabric::pcie;
}

// Every collective kind at every size over the communicators (made with one NCCL protocol); the id
// of the largest all-reduce probe.
std::optional<std::size_t> measure_collectives(ActivityLog& log, Communicators& comms, const std::string& protocol, Fabric fabric,
                                               const std::vector<double>& sizes, int reps) {
  std::optional<std::size_t> largest_all_reduce;
  for (auto kind : {CollectiveKind::all_reduce, CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::all_to_all,
                    CollectiveKind::send_recv}) {
    for (double bytes : sizes) {
      Probe probe;
      probe.kind = ProbeKind::collective;
      probe.collective = kind;
      probe.ranks = kind == CollectiveKind::send_recv ? 2 : comms.n;
      probe.bytes = bytes;
      probe.fabric = fabric;
      probe.protocol = protocol;
      const std::size_t id = log.add(probe);
      if (kind == CollectiveKind::all_reduce && bytes == sizes.back()) largest_all_reduce = id;
      for (int i = 0; i < reps; ++i) {
        ProbeScope scope(id, i);
        comms.run(kind, static_cast<std::size_t>(bytes));
      }
      comms.synchronize();
    }
  }
  return largest_all_reduce;
}

// Overlap: every GPU runs the overlap GEMM on its own stream while the largest all-reduce runs.
void measure_overlap(ActivityLog& log, Communicators& comms, std::size_t gemm_alone, std::size_t comm_alone, Fabric fabric, std::size_t buffer,
                     int reps) {
  const int gpus = comms.n;
  const Probe g = log.probes()[gemm_alone];  // a copy: adding probes below moves the list
  Probe gemm_beside;
  gemm_beside.kind = ProbeKind::gemm_beside_collective;
  gemm_beside.precision = g.precision;
  gemm_beside.m = g.m;
  gemm_beside.n = g.n;
  gemm_beside.k = g.k;
  gemm_beside.fabric = fabric;
  gemm_beside.alone = gemm_alone;
  const std::size_t gemm_id = log.add(gemm_beside);
  Probe comm_beside = log.probes()[comm_alone];
  comm_beside.kind = ProbeKind::collective_beside_gemm;
  comm_beside.alone = comm_alone;
  const std::size_t comm_id = log.add(comm_beside);
  std::vector<std::unique_ptr<GemmRunner>> runners;
  std::vector<cudaStream_t> compute(static_cast<std::size_t>(gpus));
  for (int d = 0; d < gpus; ++d) {
    check(cudaSetDevice(d), "cudaSetDevice");
    check(cudaStreamCreateWithFlags(&compute[static_cast<std::size_t>(d)], cudaStreamNonBlocking), "cudaStreamCreate");
    runners.push_back(std::make_unique<GemmRunner>(static_cast<std::size_t>(g.m * g.k) * element_size(g.precision) * 2,
                                                   compute[static_cast<std::size_t>(d)]));
  }
  for (int i = 0; i < reps; ++i) {
    {
      ProbeScope scope(comm_id, i);
      comms.run(CollectiveKind::all_reduce, buffer);
    }
    ProbeScope scope(gemm_id, i);
    for (int d = 0; d < gpus; ++d) {
      check(cudaSetDevice(d), "cudaSetDevice");
      runners[static_cast<std::size_t>(d)]->run(g.precision, 1, g.m, g.n, g.k);
    }
    comms.synchronize();
    for (int d = 0; d < gpus; ++d) {
      check(cudaSetDevice(d), "cudaSetDevice");
      check(cudaStreamSynchronize(compute[static_cast<std::size_t>(d)]), "cudaStreamSynchronize");
    }
  }
  runners.clear();
  for (auto s : compute) cudaStreamDestroy(s);
}

void measure(ActivityLog& log, const Options& o, int gpus, const cudaDeviceProp& prop, const std::optional<topology::GpuSpec>& spec) {
  const int reps = o.iterations + 2;  // two warm-up launches per probe
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  auto shapes = gemm_sweep();
  if (o.quick) shapes.resize(std::min<std::size_t>(shapes.size(), 6));
  std::size_t largest = 0;
  for (const auto& s : shapes) {
    largest = std::max({largest, static_cast<std::size_t>(s.batch * s.m * s.k), static_cast<std::size_t>(s.batch * s.k * s.n),
                        static_cast<std::size_t>(s.batch * s.m * s.n)});
  }
  std::optional<std::size_t> overlap_alone;
  {
    GemmRunner gemm(largest * 4, stream);
    const auto formats = gemm_formats(prop.major, prop.minor);
    overlap_alone = measure_gemms(log, gemm, stream, formats, shapes, reps);
    if (o.sustain_seconds > 0) sustain(log, gemm, stream, formats, o.sustain_seconds);
    measure_memory(log, gemm, stream, o.quick, reps);
  }

  if (gpus < 2 || o.no_nccl) return;
  const Fabric fabric = local_fabric(gpus, spec);
  auto sizes = collective_sweep();
  if (o.quick) sizes.resize(std::min<std::size_t>(sizes.size(), 7));
  const std::size_t buffer = static_cast<std::size_t>(sizes.back());
  for (const char* protocol : {"Simple", "LL"}) {
    Communicators comms(gpus, protocol, buffer);
    const bool simple = std::strcmp(protocol, "Simple") == 0;
    const auto comm_alone = measure_collectives(log, comms, simple ? "SIMPLE" : "LL", fabric, sizes, reps);
    if (simple && overlap_alone && comm_alone) measure_overlap(log, comms, *overlap_alone, *comm_alone, fabric, buffer, reps);
  }
  check(cudaSetDevice(0), "cudaSetDevice");
  cudaStreamDestroy(stream);
}

// The datasheet of the GPU (`--hardware`, else the bundled file its name matches) and the bundled
// profile of its family, as `calibrate from-trace` finds them.
struct Baseline {
  std::optional<std::filesystem::path> hardware;
  std::optional<topology::GpuSpec> spec;
  Profile profile;
};

Baseline baseline(const Options& o, const std::string& device) {
  Baseline b;
  b.hardware = o.hardware.empty() ? find_hardware(device, o.hardware_dir) : std::optional<std::filesystem::path>(o.hardware);
  if (b.hardware) b.spec = topology::parse_gpu(yaml::Record(yaml::load_file(*b.hardware), topology::kGpuSchema));
  const std::string family = default_profile(b.spec ? b.spec->name : normalized_gpu_name(device)).name;
  b.profile = default_profile(b.spec ? b.spec->name : normalized_gpu_name(device));
  std::error_code ec;
  if (std::filesystem::is_directory(o.profiles_dir, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(o.profiles_dir)) {
      if (e.path().extension() != ".yaml") continue;
      Profile p = load_profile(e.path());
      if (p.name == family) b.profile = std::move(p);
    }
  }
  for (const auto& key : unsourced_numbers(b.profile)) b.profile.sources[key] = fmt::format("assumed: the built-in {} profile's figure", b.profile.name);
  return b;
}

// Every probe measured with CUPTI recording the kernels, copies and memsets into `log`.
void record(ActivityLog& log, const Options& o, int gpus, const cudaDeviceProp& prop, const std::optional<topology::GpuSpec>& spec) {
  {
    std::lock_guard<std::mutex> lock(log_mutex);
    active_log = &log;
  }
  check(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
  // CUPTI writes an external-correlation record only before an API record (cupti_activity.h, at
  // cuptiActivityPushExternalCorrelationId): without the runtime and driver API kinds, no kernel could be
  // told to its probe (seen on an H200 with CUPTI 13.0: 2986 records, none claimed). cuBLAS launches
  // through either API; the API records themselves are dropped in buffer_completed.
  for (auto kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
                    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}) {
    check(cuptiActivityEnable(kind), "cuptiActivityEnable");
  }
  measure(log, o, gpus, prop, spec);
  for (int d = 0; d < gpus; ++d) {
    check(cudaSetDevice(d), "cudaSetDevice");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }
  check(cuptiActivityFlushAll(1), "cuptiActivityFlushAll");
  {
    std::lock_guard<std::mutex> lock(log_mutex);
    active_log = nullptr;
  }
}

void print_summary(const ActivityLog& log, const FitResult& r, std::size_t missing, const std::string& out) {
  std::cout << fmt::format("{} probes, {} CUPTI records ({} outside any probe); {} probes without a counted launch\n", log.probes().size(),
                           log.records(), log.unclaimed(), missing);
  for (const auto& q : r.quality) {
    std::cout << fmt::format("  {:<44} {:>4} samples  {}\n", q.what, q.samples,
                             q.fitted && q.note.empty() ? fmt::format("R² {:.3f}, median {:.1f}%, worst {:.1f}%: {}", q.r2, 100 * q.median_error,
                                                                      100 * q.worst_error, join_names(q.keys))
                                                        : q.note);
  }
  std::cout << fmt::format("Profile {} written to {}\n", r.profile.name, out);
}

int run(const Options& o) {
  const int gpus = count_gpus();
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const std::string device = prop.name;
  const Baseline base = baseline(o, device);

  int runtime = 0, nccl = 0;
  cudaRuntimeGetVersion(&runtime);
  ncclGetVersion(&nccl);
  const std::string source = fmt::format("cupti: parasim-calibrate-gpu on {} x {} (CUDA runtime {}.{}, NCCL {})", gpus, device, runtime / 1000,
                                         (runtime % 1000) / 10, nccl);
  std::cerr << fmt::format("parasim-calibrate-gpu: {} x {} (compute capability {}.{}); datasheet {}\n", gpus, device, prop.major, prop.minor,
                           base.hardware ? base.hardware->string() : std::string("unknown (--hardware)"));

  ActivityLog log;
  record(log, o, gpus, prop, base.spec);
  std::vector<std::size_t> missing;
  const Measurements m = log.reduce(&missing);
  FitOptions fit;
  fit.gpu = base.spec;
  fit.source = source;
  FitResult r = fit_profile(base.profile, m, fit);
  r.profile.name = o.name.empty() ? std::filesystem::path(o.out).stem().string() : o.name;
  r.profile.gpu = device;
  r.profile.hardware = base.spec ? base.spec->name : std::string();
  r.profile.what_if = false;
  r.profile.source = source;
  save_profile(r.profile, o.out);
  print_summary(log, r, missing.size(), o.out);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"parasim-calibrate-gpu - measure this node's GPUs (cuBLAS, copies, NCCL, overlap) with CUPTI and write a calibration profile"};
  Options o;
  app.add_option("--out", o.out, "profile YAML to write")->capture_default_str();
  app.add_option("--hardware", o.hardware, "hardware YAML of this GPU, when its name matches no bundled file");
  app.add_option("--hardware-dir", o.hardware_dir, "directory of the bundled hardware files")->capture_default_str();
  app.add_option("--bundled", o.profiles_dir, "directory of the bundled profiles")->capture_default_str();
  app.add_option("--iterations", o.iterations, "timed launches per probe (after 2 warm-up launches)")->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--name", o.name, "name of the profile (default: the --out file's stem)");
  app.add_option("--sustain", o.sustain_seconds, "seconds of one GEMM back to back for the sustained clock (0: none)")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_flag("--quick", o.quick, "a shorter sweep (fewer shapes and sizes)");
  app.add_flag("--no-nccl", o.no_nccl, "skip the collectives and the overlap probes");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "parasim-calibrate-gpu: error: " << e.what() << " (see --help)\n";
    return kExitBadInput;
  }
  try {
    return run(o);
  } catch (const parasim::InputError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const MeasurementError& e) {
    std::cerr << "parasim-calibrate-gpu: error: " << e.what() << "\n";
    return kExitMeasurement;
  } catch (const NoGpu& e) {
    std::cerr << "parasim-calibrate-gpu: error: " << e.what() << "\n";
    return kExitNoGpu;
  } catch (const std::exception& e) {
    std::cerr << "parasim-calibrate-gpu: internal error: " << e.what() << "\n";
    return 1;
  }
}
