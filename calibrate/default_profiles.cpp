// Bundled profiles. Sources:
//  [MAMF]  stas00/ml-engineering, "Maximum Achievable Matmul FLOPS" table (../shared/data/gemm/
//          stas00_ml-engineering_mamf_best_matmul_tflops.md): best torch.mm BF16 / FP8 throughput.
//  [NCCL8] the same book's 8-GPU nccl-tests all_reduce tables (../shared/data/nccl/
//          stas00_ml-engineering_collective_bw_tables.md): A100 ring busbw 234.9 GB/s of 300 at 16 GiB;
//          H200 ring 367.2, NVLS 480.0 GB/s busbw of 450 per direction; small messages ~40 us.
//  [FA2]   Dao, "FlashAttention-2" (2023), A100 causal head-dim 128: ~190 TFLOP/s forward,
//          ~150 TFLOP/s backward of 312.
//  [AWS]   aws-samples nccl-tests 2-node outputs (../shared/data/nccl/aws_p4de_p5_2node_all_reduce_perf.txt).
//  [FA3]   Shah et al., "FlashAttention-3" (2024), H100 BF16 causal: 500-660 TFLOP/s forward.
//  [XLA]   OpenXLA's sm_90 matmul table (../shared/data/gemm/xla_matmul_perf_table_sm90.csv, 375 bf16
//          shapes on H100): fitted on 70% of its rows (every row i with i mod 10 < 7), the shape law
//          K fill K/(K + 128) and 4 us per kernel gives a median error of 9.6% on the other 30%
//          (the law with K/(K + 64) and no fixed time: 33%).
//  [POWER] Horace He, "Strangely, Matrix Multiplications on GPUs Run Faster When Given 'Predictable'
//          Data" (thonking.ai, 2024): cuBLAS BF16 8192^3 on A100 SXM (400 W) 257 TFLOP/s with randn
//          inputs, 295 with zeros (same kernel, under the power limit): training data keeps the GPU at
//          its power limit, where the tensor-core rate is 0.87 of the burst rate MAMF's 150-iteration
//          runs see; "matmuls on the H100 are primarily power limited" (same figure assumed).
//  [FA3S]  pytorch/benchmark PR #2391 (FA3 forward, H100, head dim 128, B*S = 16K): 430, 517, 566, 590,
//          614, 621 TFLOP/s at 512 ... 16K keys; s / (s + 240) fits every point within 1.5%.
//  [A100]  NVIDIA A100 whitepaper: 16 special-function (exp) ops per clock per SM, x 108 SMs x 1.41 GHz
//          = 2.44 T/s; one exponential per score against 4·d tensor-core FLOPs.
//  [MMA]   NVIDIA H100 whitepaper: an H100 SM's tensor cores deliver twice the A100 SM's dense rate per
//          clock, through Hopper's asynchronous warpgroup MMA (wgmma); code built for Ampere issues
//          mma.sync at the A100 rate per SM and clock, half of Hopper's. The FA3 paper's FlashAttention-2
//          on H100 (an sm80 kernel: 309-370 TFLOP/s forward, 0.31-0.37 of 989, head dim 128) is FA2's
//          ~0.6-0.7 of the A100 peak [FA2] halved. The same rule gives FA2 0.305 / 0.24; the project's
//          own H100 measurement of SDPA's flash backend (scenarios/profiles/measured/h100-attention-
//          torch2.11.json, causal, head dim 128, 4K-32K keys) is 0.31-0.33 forward, 0.25-0.32 backward.
//  [assumed] a stated default the calibration issue will replace with fitted values.
#include <algorithm>

#include "calibrate/profile.hpp"

namespace parasim::calibrate {
namespace {

constexpr std::size_t idx(Precision p) { return static_cast<std::size_t>(p); }

Profile generic() {
  Profile p;
  p.name = "generic";
  p.source = "assumed";
  p.gemm_efficiency[idx(Precision::fp32)] = 0.85;
  p.gemm_efficiency[idx(Precision::tf32)] = 0.70;
  p.gemm_efficiency[idx(Precision::bf16)] = 0.80;
  p.gemm_efficiency[idx(Precision::fp16)] = 0.80;
  p.gemm_efficiency[idx(Precision::fp8)] = 0.70;
  p.gemm_k_half = 128;                       // [XLA]
  p.sustained_clock = 0.87;                  // [POWER] 257 / 295 TFLOP/s, A100 cuBLAS 8192^3 power-limited / not
  p.attention_seq_half = 240;                // [FA3S] fitted on the FA3 forward sweep, 512-16K keys
  p.attention_exp_head_dim = 32;             // [A100] 312 TFLOP/s / (4 x 2.44 T exp/s)
  // FlashAttention-1 where the GPU issues Ampere's mma.sync at full rate (Ampere, Ada): its A100 figures.
  p.attention_flash1_forward_efficiency = 0.40;   // [FA2] FA1 forward, the middle of 30-50%
  p.attention_flash1_backward_efficiency = 0.30;  // [FA2] FA1 backward, the middle of 25-35%
  // FlashAttention-2 where Ampere's mma.sync runs at full rate: [FA2] on the A100, ~190 of 312 forward,
  // ~150 backward.
  p.attention_flash2_forward_efficiency = 0.61;   // [FA2] 190 / 312
  p.attention_flash2_backward_efficiency = 0.48;  // [FA2] 150 / 312
  p.memory_efficiency = 0.85;                // [assumed] STREAM-like copy kernels reach 80-90% of HBM
  p.kernel_launch = Seconds(4e-6);           // [XLA] fixed time per kernel
  // Collectives [NCCL8 A100 8-GPU all-reduce, fitted: with 0.7 us of NVLink wires per step, LL
  // takes 10 + 14 x (0.7 + 1.8) = 45 us + traffic at 10% of the links (the flat ~45-100 us up to
  // 8 MiB), Simple 10 + 14 x (0.7 + 5.7) = 100 us + traffic at 76% (234.9 GB/s at 16 GiB); mean
  // |log error| 8.6% over 32 KiB-16 GiB].
  p.collective_launch = Seconds(10e-6);
  p.nvlink = {0.76, Seconds(5.7e-6), 0.10, Seconds(1.8e-6)};
  p.pcie = {0.80, Seconds(3e-6), 0.10, Seconds(1.5e-6)};     // [assumed]
  // [NCCLT] a Simple step across the network: NCCL's own tuning model (src/graph/tuning.cc, the
  // 2.19-era table with MNNVL support) prices a ring's network step at hwLat[NET][Ring][Simple] = 14 us
  // (9.6 us in older releases). It was ~5 us, 160 us of a 2x p4de small all-reduce over its 30 ring
  // steps, most of which cross NVLink, not the network.
  p.network = {0.90, Seconds(14e-6), 0.10, Seconds(4e-6)};
  p.nvls_latency = Seconds(80e-6);
  // Overlap interference [assumed, the calibration issue measures it]: NCCL kernels take SMs and
  // HBM bandwidth from compute; memory-bound kernels suffer most, and NVLink traffic (driven by copy
  // engines and SMs at hundreds of GB/s) more than network traffic.
  p.compute_slowdown = {{{0.10, 0.05, 0.04},    // gemm: nvlink, pcie, network
                         {0.10, 0.05, 0.04},    // attention
                         {0.25, 0.10, 0.08}}};  // memory-bound
  p.comm_slowdown = {0.10, 0.05, 0.05};
  return p;
}

}  // namespace

std::string_view fabric_name(Fabric f) {
  switch (f) {
    case Fabric::nvlink: return "nvlink";
    case Fabric::pcie: return "pcie";
    case Fabric::network: return "network";
  }
  return "";
}

std::string_view compute_kind_name(ComputeKind k) {
  switch (k) {
    case ComputeKind::gemm: return "gemm";
    case ComputeKind::attention: return "attention";
    case ComputeKind::memory_bound: return "memory_bound";
  }
  return "";
}

Profile default_profile(const std::string& gpu_name) {
  std::string n = gpu_name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  auto starts = [&](std::string_view prefix) { return n.rfind(prefix, 0) == 0; };
  Profile p = generic();
  if (starts("A100") || starts("A800")) {
    p.name = "a100";
    p.source = "public: [MAMF] [NCCL8] [FA2]";
    p.gemm_efficiency[idx(Precision::bf16)] = p.gemm_efficiency[idx(Precision::fp16)] = 0.869;  // [MAMF] 271.2 / 312
    p.gemm_reference = {1024, 10240, 5120};                                                       // [MAMF] best shape
    // FlashAttention-1, the flash kernel of the A100 era's PyTorch stacks (llm-foundry's 2023 benchmark
    // images pinned flash-attn 1.0.3). [FA2] measures it at 30-50% of the peak forward and 25-35%
    // backward (FLOPs counted as FlashAttention's benchmarks count them: backward 2.5x forward);
    // FlashAttention-2 reaches ~190 / 312 forward (0.61).
    p.attention_forward_efficiency = 0.40;   // [FA2] FA1 forward, the middle of 30-50%
    p.attention_backward_efficiency = 0.30;  // [FA2] FA1 backward, the middle of 25-35%
    p.nvlink = {0.76, Seconds(5.7e-6), 0.10, Seconds(1.8e-6)};  // [NCCL8] see generic()
  } else if (starts("H100") || starts("H800") || starts("H200") || starts("GH200")) {
    p.name = starts("H200") ? "h200" : "h100";
    p.source = "public: [MAMF] [NCCL8] [FA3]";
    p.gemm_efficiency[idx(Precision::bf16)] = p.gemm_efficiency[idx(Precision::fp16)] = 0.803;  // [MAMF] 794.5 / 989
    p.gemm_efficiency[idx(Precision::fp8)] = starts("H200") ? 0.734 : 0.709;                      // [MAMF] 1453.4 / 1402.6 of 1979
    p.gemm_reference = {2048, 2048, 13312};                                                       // [MAMF] best BF16 shape
    p.attention_forward_efficiency = 0.55;   // [FA3] ~540 / 989 at moderate sequence lengths
    p.attention_backward_efficiency = 0.45;  // [FA3] backward runs ~20% below forward
    p.attention_exp_head_dim = 63;           // [FA3] 989 TFLOP/s matmul / (4 x 3.9 TFLOP/s exponential)
    p.attention_flash1_forward_efficiency = 0.20;   // [MMA] FA1's A100 0.40 at half the tensor-core rate
    p.attention_flash1_backward_efficiency = 0.15;  // [MMA] FA1's A100 0.30 at half the tensor-core rate
    p.attention_flash2_forward_efficiency = 0.305;  // [MMA] FA2's A100 0.61 at half the tensor-core rate
    p.attention_flash2_backward_efficiency = 0.24;  // [MMA] FA2's A100 0.48 at half the tensor-core rate
    p.nvlink = {0.816, Seconds(5.7e-6), 0.10, Seconds(1.8e-6)};  // [NCCL8] H200 ring 367.2 / 450
    p.nvls = true;
    p.nvls_efficiency = 0.61;                // [NCCL8] NVLS busbw 480 = 2·7/8 · 450 · 0.61
    p.nvls_latency = Seconds(80e-6);         // [NCCL8] H200 NVLS: 16-64 MiB take 70-95 us beyond the bandwidth term
  } else if (starts("B200") || starts("GB200")) {
    p.name = starts("GB200") ? "gb200" : "b200";
    p.source = "public: [MAMF]; what-if for collectives and attention";
    p.gemm_efficiency[idx(Precision::bf16)] = p.gemm_efficiency[idx(Precision::fp16)] = starts("GB200") ? 0.729 : 0.776;  // [MAMF]
    p.gemm_efficiency[idx(Precision::fp8)] = starts("GB200") ? 0.723 : 0.763;                                             // [MAMF]
    p.gemm_reference = starts("GB200") ? std::array<std::int64_t, 3>{4096, 9728, 2048} : std::array<std::int64_t, 3>{1792, 16128, 3072};  // [MAMF]
    p.attention_forward_efficiency = 0.55;   // [assumed] as H100
    p.attention_backward_efficiency = 0.45;  // [assumed] as H100
    p.attention_exp_head_dim = 63;           // [assumed] as H100 [FA3]
    p.attention_flash1_forward_efficiency = 0.20;   // [assumed] as H100: Ampere's instructions at half the rate
    p.attention_flash1_backward_efficiency = 0.15;  // [assumed] as H100
    p.attention_flash2_forward_efficiency = 0.305;  // [assumed] as H100: FA2's A100 fractions halved
    p.attention_flash2_backward_efficiency = 0.24;  // [assumed] as H100
    p.nvlink = {0.80, Seconds(5.7e-6), 0.10, Seconds(1.8e-6)};  // [assumed] as A100/H100
    p.nvls = true;
    // [NCCL8] the two 8x B200 tables agree: NVLS busbw 838.0 GB/s at 8 GiB (nccl-tests) and 845.7 at
    // 16 GiB (torch) = 2·7/8 · 900 · 0.532 and · 0.537; each table is predicted with the other's figure.
    p.nvls_efficiency = 0.535;
  } else if (starts("RTX")) {
    p.name = "rtx-4090";
    p.source = "assumed (GeForce, no public training benchmarks in shared/data)";
  }
  return p;
}

}  // namespace parasim::calibrate
