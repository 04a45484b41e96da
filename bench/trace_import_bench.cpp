// Benchmarks of `calibrate from-trace`'s reader on synthetic Kineto traces of a chosen size: wall
// time to read, decompress and parse a file and join its kernels to their ops, the rate in MB/s of
// JSON, and the process's peak resident memory against the JSON's size. Target (calibration issue):
// a 1 GB trace in under 30 s, peak memory under 3x the decompressed size.
//   build/bench/parasim_bench --benchmark_filter=TraceImport
// The synthetic trace repeats the shape of a real training step (trace_step below): per layer an
// aten::linear / aten::addmm with Input Dims, its cudaLaunchKernel and GEMM kernel, two elementwise
// ops and kernels, an NCCL all-reduce with its metadata, and the ac2g flow events Kineto writes for
// each launch. Files go to $TMPDIR (or /tmp) and are removed afterwards.
#include <benchmark/benchmark.h>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <sys/resource.h>
#include <zlib.h>

#include "calibrate/kineto_trace.hpp"
#include "calibrate/trace_analysis.hpp"

namespace {

using namespace parasim;

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

/// The op that launches a layer's GEMM: aten::addmm with its Input Dims, the launch and the kernel,
/// joined by the ac2g flow events Kineto writes for each launch.
std::string gemm_events(std::int64_t t, std::int64_t op, std::int64_t launch) {
  std::string s;
  s += fmt::format(R"x({{"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 7, "tid": 7, "ts": {}.125, "dur": 42.5, )x"
                   R"x("args": {{"External id": {}, "Sequence number": {}, "Fwd thread id": 0, "Record function id": 0, )x"
                   R"x("Input Dims": [[4096], [8192, 4096], [4096, 4096], [], []], )x"
                   R"x("Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]}}}},
)x",
                   t, op, op);
  s += fmt::format(R"x({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": {}.250, "dur": 6.75, "args": {{"External id": {}, "cbid": 211, "correlation": {}}}}},
{{"ph": "s", "id": {}, "pid": 7, "tid": 7, "ts": {}.250, "cat": "ac2g", "name": "ac2g"}},
)x",
                   t + 10, op, launch, launch, t + 10);
  s += fmt::format(R"x({{"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", "pid": 0, "tid": 7, "ts": {}.375, "dur": 230.125, )x"
                   R"x("args": {{"External id": {}, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": {}, "registers per thread": 168, "shared memory": 213000, )x"
                   R"x("blocks per SM": 1, "warps per SM": 12, "grid": [132, 1, 1], "block": [384, 1, 1], "est. achieved occupancy %": 19}}}},
{{"ph": "f", "id": {}, "pid": 0, "tid": 7, "ts": {}.375, "cat": "ac2g", "name": "ac2g", "bp": "e"}},
)x",
                   t + 20, op, launch, launch, t + 20);
  return s;
}

/// The i-th elementwise op of a layer (aten::add_), its launch and its kernel.
std::string elementwise_events(std::int64_t t, int i, std::int64_t op, std::int64_t launch) {
  return fmt::format(R"x({{"ph": "X", "cat": "cpu_op", "name": "aten::add_", "pid": 7, "tid": 7, "ts": {}.5, "dur": 12.25, "args": {{"External id": {}, "Input Dims": [[8192, 4096], [8192, 4096], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"]}}}},
{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": {}.75, "dur": 4.5, "args": {{"External id": {}, "cbid": 211, "correlation": {}}}}},
{{"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)", "pid": 0, "tid": 7, "ts": {}.5, "dur": 70.25, "args": {{"External id": {}, "device": 0, "stream": 7, "correlation": {}, "grid": [65536, 1, 1], "block": [128, 1, 1]}}}},
)x",
                     t + 60 + 20 * i, op, t + 62 + 20 * i, op, launch, t + 260 + 80 * i, op, launch);
}

/// The layer's NCCL all-reduce kernel with the communicator metadata newer traces carry.
std::string all_reduce_event(std::int64_t t, std::int64_t nccl) {
  return fmt::format(R"x({{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 20, "ts": {}.0, "dur": 410.5, )x"
                     R"x("args": {{"External id": {}, "device": 0, "stream": 20, "correlation": {}, "Collective name": "allreduce", "In msg nelems": 16777216, "Out msg nelems": 16777216, )x"
                     R"x("Group size": 8, "dtype": "BFloat16", "In split size": "[]", "Out split size": "[]", "Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3, 4, 5, 6, 7]"}}}},
)x",
                     t + 250, nccl, nccl + 1000000000);
}

/// One layer's events, with times advancing by `t` (microseconds) and ids by `id`.
std::string trace_step(std::int64_t& t, std::int64_t& id) {
  const std::int64_t op = id++, launch = id++, copy_op = id++, copy_launch = id++, nccl = id++;
  std::string s = gemm_events(t, op, launch);
  for (int i = 0; i < 2; ++i) s += elementwise_events(t, i, copy_op + i, copy_launch + i);
  s += all_reduce_event(t, nccl);
  t += 500;
  id += 2;
  return s;
}

/// Writes a synthetic trace of about `bytes` of JSON; gzip-compressed (level 1) when `gz`.
std::filesystem::path write_trace(double bytes, bool gz) {
  const auto dir = std::filesystem::path(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  const auto path = dir / fmt::format("parasim_bench_trace_{}mb.json{}", static_cast<long>(bytes / 1e6), gz ? ".gz" : "");
  std::FILE* plain = gz ? nullptr : std::fopen(path.c_str(), "wb");
  gzFile z = gz ? gzopen(path.c_str(), "wb1") : nullptr;
  auto put = [&](const std::string& s) {
    if (z) gzwrite(z, s.data(), static_cast<unsigned>(s.size()));
    else std::fwrite(s.data(), 1, s.size(), plain);
  };
  put(R"x({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 84929216512, "computeMajor": 9, "computeMinor": 0, "numSms": 132, "warpSize": 32}],
"distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
"traceEvents": [
)x");
  std::int64_t t = 1700000000000000, id = 1;
  double written = 0;
  while (written < bytes) {
    const std::string step = trace_step(t, id);
    put(step);
    written += static_cast<double>(step.size());
  }
  put(R"x({"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}
], "traceName": "synthetic"})x");
  if (z) gzclose(z);
  if (plain) std::fclose(plain);
  return path;
}

void TraceImport(benchmark::State& state) {
  const double megabytes = static_cast<double>(state.range(0));
  const bool gz = state.range(1) != 0;
  const auto path = write_trace(megabytes * 1e6, gz);
  double json_bytes = 0, kernels = 0;
  for (auto _ : state) {
    std::vector<calibrate::KinetoTrace> traces;
    traces.push_back(calibrate::read_kineto_trace(path));
    const auto analysis = calibrate::analyze_traces(traces);
    json_bytes = static_cast<double>(traces.front().json_bytes);
    kernels = static_cast<double>(analysis.kernels);
    benchmark::DoNotOptimize(analysis);
  }
  std::filesystem::remove(path);
  state.counters["json_MB"] = json_bytes / 1e6;
  state.counters["kernels"] = kernels;
  state.counters["MB_per_s"] = benchmark::Counter(json_bytes / 1e6, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["peak_rss_MiB"] = peak_rss_bytes() / 1048576.0;
  state.counters["peak_over_json"] = peak_rss_bytes() / json_bytes;
}

}  // namespace

// (JSON megabytes, gzip): run each alone (a filter) for its own peak memory.
BENCHMARK(TraceImport)->Args({64, 0})->Args({64, 1})->Args({1000, 0})->Args({1000, 1})->Unit(benchmark::kMillisecond)->Iterations(1);
