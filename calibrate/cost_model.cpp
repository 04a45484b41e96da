#include "calibrate/cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

namespace parasim::calibrate {

using workload::OpKind;

ComputeKind compute_kind(OpKind kind) {
  switch (kind) {
    case OpKind::gemm: return ComputeKind::gemm;
    case OpKind::attention:
    case OpKind::attention_grad: return ComputeKind::attention;
    case OpKind::memory_bound: return ComputeKind::memory_bound;
  }
  return ComputeKind::gemm;
}

CostModel::CostModel(topology::GpuSpec gpu, Profile profile) : gpu_(std::move(gpu)), profile_(std::move(profile)) {
  // The law's time at each measured GEMM, taken while the table is still empty (ratio 1); a point timed
  // in a burst against the law at the burst clock, so that training's sustained clock still applies.
  // A point in a format this GPU has no peak for (an fp8 point on an A100) says nothing here.
  if (!profile_.gemm_points.empty()) {
    Profile burst = profile_;
    burst.gemm_points.clear();
    burst.sustained_clock = 1.0;
    const CostModel at_boost(gpu_, std::move(burst));
    points_ = GemmPointTable(profile_.gemm_points, [&](const workload::Op& op, bool is_burst) {
      if (!has_peak(op.precision)) return 0.0;
      return (is_burst ? at_boost : *this).op_time(op).value();
    });
  }
}

bool CostModel::has_peak(Precision p) const {
  return gpu_.peak_for(p) || (p == Precision::tf32 && gpu_.peak_for(Precision::fp32));
}

FlopsPerSecond CostModel::peak(Precision p) const {
  if (auto v = gpu_.peak_for(p)) return *v;
  // fp32 ops (loss, optimizer) on GPUs without a tf32 figure; fp8 never silently degrades.
  if (p == Precision::tf32 && gpu_.peak_for(Precision::fp32)) return *gpu_.peak_for(Precision::fp32);
  throw std::invalid_argument(fmt::format("{} has no {} peak", gpu_.name, precision_name(p)));
}

double CostModel::main_loop_efficiency(Precision p) const {
  const auto& ref = profile_.gemm_reference;
  const double k_fill = static_cast<double>(ref[2]) / (static_cast<double>(ref[2]) + profile_.gemm_k_half);
  return profile_.gemm_efficiency[static_cast<std::size_t>(p)] / (wave_efficiency(ref[0], ref[1], 1) * k_fill);
}

double CostModel::wave_efficiency(std::int64_t m, std::int64_t n, int batch) const {
  if (gpu_.sms <= 0) return 1.0;
  const std::int64_t tile = profile_.gemm_tile;
  const std::int64_t tiles = ((m + tile - 1) / tile) * ((n + tile - 1) / tile) * std::max(1, batch);
  const std::int64_t waves = (tiles + gpu_.sms - 1) / gpu_.sms;
  return static_cast<double>(tiles) / static_cast<double>(waves * gpu_.sms);
}

double CostModel::attended_keys(const workload::Op& op) {
  return op.window > 0 ? std::min(op.seq_kv, op.window) : op.seq_kv;
}

double CostModel::attention_efficiency(const workload::Op& op) const {
  const bool backward = op.kind == OpKind::attention_grad;
  double quoted = backward ? profile_.attention_backward_efficiency : profile_.attention_forward_efficiency;
  if (op.flash_kernel == workload::FlashKernel::flash1) {
    quoted = backward ? profile_.attention_flash1_backward_efficiency : profile_.attention_flash1_forward_efficiency;
  } else if (op.flash_kernel == workload::FlashKernel::flash2) {
    quoted = backward ? profile_.attention_flash2_backward_efficiency : profile_.attention_flash2_forward_efficiency;
  }
  // Head dim: one exponential per score on the special-function units, whose time adds to the rest
  // of the kernel's (4·d tensor-core FLOPs a score at the kernel's own efficiency). Per score, in units
  // of 4·d / peak: 1/quoted = 1/rest + E/d_ref at the reference head dim, so the rest runs at
  // 1/(1/quoted − E/d_ref), and at head dim d the kernel at 1/(1/rest + E/d). A kernel far from the
  // tensor-core peak (FlashAttention-1) loses little to its exponentials at small head dims.
  const double exp_dim = op.head_dim > 0 ? profile_.attention_exp_head_dim : 0.0;
  double rest = exp_dim > 0 ? 1.0 / (1.0 / quoted - exp_dim / kAttentionReferenceHeadDim) : quoted;
  // Sequence fill: each query block's prologue (Q load, statistics) and epilogue (normalize, write O)
  // amortize over the keys it meets.
  if (profile_.attention_seq_half > 0 && op.seq_kv > 0) {
    const auto fill = [&](double s) { return s / (s + profile_.attention_seq_half); };
    rest *= fill(attended_keys(op)) / fill(kAttentionReferenceSeq);
  }
  return exp_dim > 0 ? 1.0 / (1.0 / rest + exp_dim / op.head_dim) : rest;
}

Seconds CostModel::op_time(const workload::Op& op) const {
  const double hbm = gpu_.hbm_bandwidth.value() * profile_.memory_efficiency;
  const double memory = op.bytes / hbm;
  double compute = 0.0;
  switch (op.kind) {
    case OpKind::gemm: {
      // Operands off 16-byte rows: no tensor-core kernel applies, the CUDA cores run it (SIMT: the
      // fp32 rate and efficiency).
      const Precision rate = op.aligned ? op.precision : Precision::fp32;
      const double eff = main_loop_efficiency(rate);
      const double k_fill = static_cast<double>(op.k) / (static_cast<double>(op.k) + profile_.gemm_k_half);
      compute = op.flops / (peak(rate).value() * eff * wave_efficiency(op.m, op.n, op.batch) * k_fill * profile_.sustained_clock);
      break;
    }
    case OpKind::attention:
    case OpKind::attention_grad: {
      const double eff = attention_efficiency(op);
      double work = 1.0;
      if (op.causal) {
        // Masked blocks are skipped, the diagonal ones run whole: (n + 1) / n of the half for n key blocks.
        // A chunk is a causal square of its own; a sliding window of w keys over s is a band: of the
        // s·w its FLOPs count, s·w − w²/2 are computed, 2(1 − w/2s) of the causal half, with the
        // band's two edges of partial blocks.
        const auto diagonal = [](double s) { return 1.0 + kFlashBlock / std::max(s, 1.0); };
        const double keys = attended_keys(op);
        work = profile_.causal_work_fraction * diagonal(keys) / diagonal(kAttentionReferenceSeq);
        if (op.window > 0 && !op.chunked) work *= 2.0 * (1.0 - keys / (2.0 * std::max(1, op.seq_kv)));
      }
      // Flash backward recomputes the scores: five matmuls against the four its FLOPs count, and the
      // profile's backward efficiency is quoted on the five (FlashAttention's benchmarks count the
      // backward as 2.5x the forward).
      if (op.kind == OpKind::attention_grad) work *= kFlashBackwardWork;
      compute = op.flops * work / (peak(op.precision).value() * eff * profile_.sustained_clock);
      break;
    }
    case OpKind::memory_bound: break;
  }
  const double time = std::max(compute, memory) + profile_.kernel_launch.value();
  if (op.kind == OpKind::gemm && !points_.empty()) return Seconds(time * points_.ratio(op));
  return Seconds(time);
}

Seconds CostModel::ops_time(const std::vector<workload::Op>& ops) const {
  Seconds total;
  for (const auto& op : ops) total += op_time(op);
  return total;
}

ComputeKind CostModel::dominant_kind(const std::vector<workload::Op>& ops) const {
  std::array<double, 3> time{};
  for (const auto& op : ops) time[static_cast<std::size_t>(compute_kind(op.kind))] += op_time(op).value();
  return static_cast<ComputeKind>(std::max_element(time.begin(), time.end()) - time.begin());
}

}  // namespace parasim::calibrate
