#include <doctest/doctest.h>

#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "calibrate/kineto_trace.hpp"
#include "calibrate/trace_analysis.hpp"
#include "core/error.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {

std::string error_of(const std::string& json) {
  try {
    parse_kineto_trace(json, "t.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// A small trace in Kineto's shape: one A100 SXM, a linear layer's GEMM launched from aten::addmm,
// an NCCL all-reduce with its metadata on the kernel, a copy, and a kernel that overlaps the NCCL one.
const std::string kTrace = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "numSms": 108, "totalGlobalMem": 85031714816,
                        "computeMajor": 8, "computeMinor": 0, "warpSize": 32}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 10, "tid": 11, "ts": 1000, "dur": 50,
     "args": {"External id": 1, "Input Dims": [[4, 1024], [4096, 1024], [4096]], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 10, "tid": 11, "ts": 1005, "dur": 40,
     "args": {"External id": 2, "Input Dims": [[4096], [4, 1024], [1024, 4096], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 1010, "dur": 5, "args": {"correlation": 100}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 1020, "dur": 5, "args": {"correlation": 101}},
    {"ph": "X", "cat": "kernel", "name": "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32", "pid": 0, "tid": 7,
     "ts": 2000.5, "dur": 10.25, "args": {"device": 0, "stream": 7, "correlation": 100, "External id": 100, "grid": [32, 1, 1], "block": [128, 1, 1]}},
    {"ph": "X", "cat": "kernel", "name": "void cublasLt::splitKreduce_kernel<32, 16>", "pid": 0, "tid": 7,
     "ts": 2011, "dur": 1.75, "args": {"device": 0, "stream": 7, "correlation": 101, "External id": 101}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 20,
     "ts": 3000, "dur": 100, "args": {"device": 0, "stream": 20, "correlation": 102, "Collective name": "allreduce", "In msg nelems": 262144,
     "Out msg nelems": 262144, "Group size": 4, "dtype": "Float"}},
    {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >", "pid": 0, "tid": 7,
     "ts": 3010, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 103}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 7, "ts": 4000, "dur": 3,
     "args": {"device": 0, "stream": 7, "correlation": 104, "bytes": 1048576}},
    {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}},
    {"ph": "f", "cat": "ac2g", "id": 100, "pid": 0, "tid": 7, "ts": 2000, "bp": "e", "name": "ac2g"}
  ]
})json";

}  // namespace

TEST_CASE("Chrome trace microseconds become integer nanoseconds from the text itself") {
  // 4458677009853.422 us = 4458677009853422 ns, which a double (ulp 0.5 us there) cannot hold.
  CHECK(microseconds_text_to_ns("4458677009853.422") == 4458677009853422);
  CHECK(microseconds_text_to_ns("41") == 41000);
  CHECK(microseconds_text_to_ns("2.5") == 2500);
  // The fourth decimal rounds half up: 1.0005 us = 1000.5 ns -> 1001; 1.0004 -> 1000.
  CHECK(microseconds_text_to_ns("1.0005") == 1001);
  CHECK(microseconds_text_to_ns("1.0004") == 1000);
  CHECK(microseconds_text_to_ns("-3.25") == -3250);
  CHECK(microseconds_text_to_ns("1.5e3") == 1500000);
  // Up to about 292 years of nanoseconds; beyond, no number (never a wrapped one).
  CHECK(microseconds_text_to_ns("9223372036854774") == 9223372036854774000);
  CHECK_FALSE(microseconds_text_to_ns("9223372036854776").has_value());
  CHECK_FALSE(microseconds_text_to_ns("99999999999999999999999").has_value());
  CHECK_FALSE(microseconds_text_to_ns("-1e300").has_value());
  CHECK_FALSE(microseconds_text_to_ns("2.02e226").has_value());
}

TEST_CASE("kernel classes by name, in the order of kernel_class.hpp") {
  CHECK(classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)") == KernelClass::nccl);
  CHECK(classify_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)") == KernelClass::nccl);
  CHECK(classify_kernel("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4> >") == KernelClass::attention);
  CHECK(classify_kernel("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw") == KernelClass::convolution);
  CHECK(classify_kernel("ampere_sgemm_128x64_nn") == KernelClass::gemm);
  CHECK(classify_kernel("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>") == KernelClass::gemm);
  // "fbgemm" is a library name, not a GEMM: its permute kernels are other work.
  CHECK(classify_kernel("void fbgemm_gpu::permute_2D_data_kernel<false, int, int, float>") == KernelClass::other);
  CHECK(classify_kernel("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float> >") == KernelClass::reduction);
  CHECK(classify_kernel("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 128, true, 1, true>") == KernelClass::reduction);
  CHECK(classify_kernel("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >") == KernelClass::elementwise);
  CHECK(classify_kernel("triton_poi_fused_add_cos_sin_0") == KernelClass::elementwise);
  // Seen in a PyTorch 2.11 / CUDA 13.0 trace of a Llama-2-7B layer on an H100 (tests/data/kineto/README.md):
  // cuBLAS's Hopper nvJet GEMMs, cuDNN's fused attention, and a cast that is no convolution.
  CHECK(classify_kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT") == KernelClass::gemm);
  CHECK(classify_kernel("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x128_1x4x1_cga1x1x1_kernel0_0") ==
        KernelClass::attention);
  CHECK(classify_kernel("void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, unsigned int)") == KernelClass::other);
  CHECK(classify_kernel("void cub::DeviceRadixSortOnesweepKernel<cub::DeviceRadixSortPolicy<long, int, int> >") == KernelClass::other);
}

TEST_CASE("NCCL kernel names say the collective, algorithm and protocol") {
  const auto old = parse_nccl_kernel_name("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)");
  CHECK(old.kind == CollectiveKind::send_recv);
  CHECK(old.algorithm == "ring");
  CHECK(old.protocol == "SIMPLE");
  const auto fresh = parse_nccl_kernel_name("ncclDevKernel_AllReduce_Sum_bf16_NVLS_TREE_SIMPLE(ncclDevKernelArgsStorage<4096ul>)");
  CHECK(fresh.kind == CollectiveKind::all_reduce);
  CHECK(fresh.algorithm == "nvls_tree");
  CHECK(fresh.protocol == "SIMPLE");
  const auto bare = parse_nccl_kernel_name("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)");
  CHECK_FALSE(bare.kind.has_value());
  CHECK(bare.protocol.empty());
}

TEST_CASE("GEMM shapes from the host op's Input Dims") {
  // aten::mm [[M, K], [K, N]]
  auto s = gemm_shape("aten::mm", {{512, 1024}, {1024, 256}});
  REQUIRE(s);
  CHECK((s->batch == 1 && s->m == 512 && s->n == 256 && s->k == 1024));
  // aten::addmm [bias, [M, K], [K, N], beta, alpha]
  s = gemm_shape("aten::addmm", {{96}, {1024, 1024}, {1024, 96}, {}, {}});
  REQUIRE(s);
  CHECK((s->m == 1024 && s->n == 96 && s->k == 1024));
  // aten::bmm [[B, M, K], [B, K, N]]
  s = gemm_shape("aten::bmm", {{8, 128, 64}, {8, 64, 128}});
  REQUIRE(s);
  CHECK((s->batch == 8 && s->m == 128 && s->n == 128 && s->k == 64));
  // aten::linear [[..., K], [N, K], bias]: M is the product of the leading dims, 2·2048 = 4096.
  s = gemm_shape("aten::linear", {{2, 2048, 1024}, {4096, 1024}, {4096}});
  REQUIRE(s);
  CHECK((s->m == 4096 && s->n == 4096 && s->k == 1024));
  CHECK_FALSE(gemm_shape("aten::add", {{4, 4}, {4, 4}}));
  CHECK_FALSE(gemm_shape("aten::mm", {{-1, 4}, {4, 4}}));
}

TEST_CASE("a small trace: identity, GPU events, host ops and launches") {
  const auto t = parse_kineto_trace(kTrace, "t.json");
  REQUIRE(t.devices.size() == 1);
  CHECK(t.devices[0].name == "NVIDIA A100-SXM4-80GB");
  CHECK(t.devices[0].sms == 108);
  CHECK(t.rank == 3);
  CHECK(t.world_size == 8);
  CHECK(t.events == 11);
  CHECK(t.gpu.size() == 5);
  CHECK(t.kernels() == 4);
  CHECK(t.ops.size() == 2);
  CHECK(t.launches.size() == 2);
  // 2000.5 us and 10.25 us, in nanoseconds.
  CHECK(t.gpu[0].start_ns == 2000500);
  CHECK(t.gpu[0].dur_ns == 10250);
  CHECK(t.gpu[0].klass == KernelClass::gemm);
  CHECK(t.gpu[2].klass == KernelClass::nccl);
  REQUIRE(t.gpu[2].comm >= 0);
  CHECK(t.comm[static_cast<std::size_t>(t.gpu[2].comm)].group_size == 4);
  CHECK(t.gpu[4].klass == KernelClass::memcpy);
  CHECK(t.gpu[4].bytes == 1048576);
}

TEST_CASE("the analysis joins kernels to their ops: GEMM shape and format, NCCL size and group, copies, overlap") {
  const auto a = analyze_traces({parse_kineto_trace(kTrace, "t.json")});
  // By class: the GEMM and its split-K reduction are both GEMM kernels, 10.25 + 1.75 us.
  CHECK(a.totals.count[static_cast<std::size_t>(KernelClass::gemm)] == 2);
  CHECK(a.totals.ns[static_cast<std::size_t>(KernelClass::gemm)] == 12000);
  CHECK(a.totals.count[static_cast<std::size_t>(KernelClass::nccl)] == 1);
  CHECK(a.kernels == 4);
  CHECK(a.kernels_with_op == 2);  // the two launched from aten::addmm; the others' launches are not in the trace
  // One GEMM: the innermost GEMM op is aten::addmm, [4, 1024] x [1024, 4096] in BF16; both kernels count.
  REQUIRE(a.measurements.gemms.size() == 1);
  const auto& g = a.measurements.gemms[0];
  CHECK((g.m == 4 && g.n == 4096 && g.k == 1024 && g.batch == 1));
  CHECK(g.precision == Precision::bf16);
  CHECK(g.kernels == 2);
  CHECK(g.seconds == doctest::Approx(12e-6).scale(0));
  // The all-reduce: 262144 floats = 1 MiB over the 4 ranks its metadata names; 100 us; the world of 8
  // fits one node of 8, so it stayed inside it.
  REQUIRE(a.measurements.collectives.size() == 1);
  const auto& c = a.measurements.collectives[0];
  CHECK(c.kind == CollectiveKind::all_reduce);
  CHECK(c.bytes == 1048576.0);
  CHECK(c.ranks == 4);
  CHECK(c.protocol == "LL");
  CHECK(c.algorithm == "ring");
  CHECK(c.intra_node);
  CHECK(c.seconds == doctest::Approx(100e-6).scale(0));
  // The device-to-device copy moved 1 MiB each way: 2 MiB in 3 us.
  REQUIRE(a.measurements.memory.size() == 1);
  CHECK(a.measurements.memory[0].kind == "copy");
  CHECK(a.measurements.memory[0].bytes == 2.0 * 1048576);
  // One elementwise launch overlapped the all-reduce, none ran alone: no pair to compare.
  CHECK(a.measurements.compute_overlap.empty());
}

TEST_CASE("collectives matched across ranks are timed by the fastest rank") {
  // Two ranks of a job of 2; each runs the same all-reduce; rank 0's kernel waited 400 us for rank 1.
  auto rank = [](int r, int dur) {
    return fmt::format(R"json({{"deviceProperties": [{{"id": 0, "name": "NVIDIA H100 80GB HBM3"}}],
      "distributedInfo": {{"rank": {}, "world_size": 2}},
      "traceEvents": [{{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 0, "tid": 20,
        "ts": 100, "dur": {}, "args": {{"device": 0, "correlation": 1, "Collective name": "allreduce", "In msg nelems": 1024,
        "Out msg nelems": 1024, "Group size": 2, "dtype": "BFloat16"}}}}]}})json",
                       r, dur);
  };
  const auto a = analyze_traces({parse_kineto_trace(rank(0, 420), "r0.json"), parse_kineto_trace(rank(1, 20), "r1.json")});
  REQUIRE(a.measurements.collectives.size() == 1);
  // 1024 bf16 elements = 2 KiB; the faster rank's 20 us.
  CHECK(a.measurements.collectives[0].bytes == 2048.0);
  CHECK(a.measurements.collectives[0].seconds == doctest::Approx(20e-6).scale(0));
}

TEST_CASE("what is not a usable NVIDIA trace fails with one line naming the file") {
  CHECK(error_of("") == "t.json: error: empty: the file holds no JSON");
  CHECK(error_of("  \n") == "t.json: error: empty: the file holds no JSON");
  CHECK(error_of("hello") == "t.json: error: not valid JSON (malformed: a value, comma or bracket is missing or out of place)");
  CHECK(error_of("this is not JSON\n") == "t.json: error: not valid JSON (it does not start with an object, a list or a value)");
  CHECK(error_of(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1)") ==
        "t.json: error: truncated JSON: the text ends inside a string, list or object");
  CHECK(error_of(R"({"workload_graph": []})") == "t.json: error: JSON of another shape: no traceEvents list (not a Chrome / Kineto trace)");
  CHECK(error_of("[1, 2]") == "t.json: error: JSON of another shape: a top-level list; a Kineto trace is an object with a traceEvents list");
  CHECK(error_of("42") == "t.json: error: JSON of another shape: a single value; a Kineto trace is an object with a traceEvents list");
  CHECK(error_of(R"({"traceEvents": {}})") == "t.json: error: JSON of another shape: traceEvents is not a list");
  CHECK(error_of(R"({"traceEvents": [3]})") == "t.json: error: JSON of another shape: traceEvents entry 0 is not an object");
  CHECK(error_of(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2}]})") ==
        "t.json: error: no GPU kernels in the trace (1 events; was it recorded with CUDA activities, not in CUPTI profiler-range mode?)");
  CHECK(error_of(R"({"deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X"}],
                    "traceEvents": [{"ph": "X", "cat": "kernel", "name": "Cijk_Ailk", "ts": 1, "dur": 2}]})") ==
        "t.json: error: a ROCm trace (AMD Instinct MI300X): calibrate from-trace reads NVIDIA CUDA traces only");
  CHECK(error_of(R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "ts": 1, "dur": 2, "args": {"correlation": 1}},
                    {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}]})") ==
        "t.json: error: a ROCm trace (hip runtime calls): calibrate from-trace reads NVIDIA CUDA traces only");
}

TEST_CASE("gzip: whole, several members in a row, truncated and corrupt") {
  std::ifstream in("tests/data/kineto/hta_a100_triton_kernel_tiny.json.gz", std::ios::binary);
  REQUIRE(in.good());
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string gz = buf.str();
  const std::string text = gunzip(gz, "x.gz");
  CHECK(text.size() == 16645);  // the JSON's size (gzip -l)
  CHECK(parse_kineto_trace(gz, "x.gz").kernels() == 1);
  // Two gzip members back to back read as their texts concatenated, as gzip(1) does.
  CHECK(gunzip(gz + gz, "x.gz").size() == 2 * text.size());
  CHECK_THROWS_WITH_AS(gunzip(gz.substr(0, gz.size() / 2), "x.gz"), "x.gz: error: truncated gzip data (the file ends inside the compressed stream)",
                       InputError);
  std::string bad = gz;
  for (std::size_t i = 100; i < 140; ++i) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  CHECK_THROWS_WITH_AS(gunzip(bad, "x.gz"), "x.gz: error: corrupt gzip data: invalid distances set", InputError);
}

TEST_CASE("the eight DLRM ranks: counts that tests/calibrate/kineto_count.py also finds") {
  std::vector<KinetoTrace> traces;
  for (const char* f : {"worker0_step_12.1694128201545", "worker1_step_12.1694128201556", "worker2_step_12.1694128201554",
                        "worker3_step_12.1694128201557", "worker4_step_12.1694128201547", "worker5_step_12.1694128201549",
                        "worker6_step_12.1694128201553", "worker7_step_12.1694128201553"}) {
    traces.push_back(read_kineto_trace(std::string("tests/data/kineto/param_dlrm_8rank_v100/") + f + ".pt.trace.json.gz"));
  }
  CHECK(traces[0].kernels() == 245);
  CHECK(traces[0].devices.front().name == "Tesla V100-SXM2-32GB");
  const auto a = analyze_traces(traces);
  // kineto_count.py: gemm 224, elementwise 1438, reduction 112, nccl 64, memcpy 128, memset 12, other 266.
  CHECK(a.totals.count[static_cast<std::size_t>(KernelClass::gemm)] == 224);
  CHECK(a.totals.count[static_cast<std::size_t>(KernelClass::elementwise)] == 1438);
  CHECK(a.totals.count[static_cast<std::size_t>(KernelClass::nccl)] == 64);
  CHECK(a.totals.count[static_cast<std::size_t>(KernelClass::memcpy)] == 128);
  // Each rank: 5 all-to-alls and 3 all-reduces, 8 x 8 = 64 NCCL kernels, matched into 8 collectives.
  CHECK(a.nccl_kernels == 64);
  CHECK(a.nccl_kernels_with_size == 64);
  CHECK(a.measurements.collectives.size() == 8);
  CHECK(a.gemm_kernels_with_shape == 224);
}
