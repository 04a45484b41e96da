#include "calibrate/cupti_records.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "calibrate/trace_analysis.hpp"

namespace parasim::calibrate {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool is_nccl(const ActivityRecord& r) { return r.kind == ActivityRecord::Kind::kernel && r.name.rfind("nccl", 0) == 0; }

double seconds(const ActivityRecord& r) { return static_cast<double>(r.end_ns - r.start_ns) * 1e-9; }

struct Span {
  std::uint64_t start, end;
};

/// Nanoseconds of [start, end) under a set of spans.
std::uint64_t covered(const std::vector<Span>& spans, std::uint64_t start, std::uint64_t end) {
  // Merge on the fly: the spans are few (one per launch under study).
  std::vector<Span> s = spans;
  std::sort(s.begin(), s.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
  std::uint64_t sum = 0, reach = start;
  for (const auto& x : s) {
    const std::uint64_t a = std::max(x.start, reach), b = std::min(x.end, end);
    if (b > a) {
      sum += b - a;
      reach = b;
    }
  }
  return sum;
}

}  // namespace

std::size_t ActivityLog::add(const Probe& probe) {
  probes_.push_back(probe);
  return probes_.size() - 1;
}

void ActivityLog::record(const ActivityRecord& r) {
  if (r.kind == ActivityRecord::Kind::external_correlation) {
    external_[r.correlation] = r.external_id;
  } else {
    kernels_.push_back(r);
  }
}

std::size_t ActivityLog::unclaimed() const {
  return static_cast<std::size_t>(
      std::count_if(kernels_.begin(), kernels_.end(), [&](const ActivityRecord& r) { return external_.find(r.correlation) == external_.end(); }));
}

std::vector<double> ActivityLog::iterations(std::size_t p) const {
  const Probe& probe = probes_.at(p);
  // This probe's records by iteration.
  std::map<int, std::vector<const ActivityRecord*>> by_iteration;
  for (const auto& r : kernels_) {
    const auto it = external_.find(r.correlation);
    if (it == external_.end() || (it->second >> 16) != p + 1) continue;
    by_iteration[static_cast<int>(it->second & 0xffff)].push_back(&r);
  }
  // For overlap probes: the other kind's kernels on each GPU.
  std::map<std::uint32_t, std::vector<Span>> beside;
  const bool gemm_beside = probe.kind == ProbeKind::gemm_beside_collective;
  const bool comm_beside = probe.kind == ProbeKind::collective_beside_gemm;
  if (gemm_beside || comm_beside) {
    for (const auto& r : kernels_) {
      if (r.kind != ActivityRecord::Kind::kernel || is_nccl(r) != gemm_beside) continue;
      const auto it = external_.find(r.correlation);
      if (it != external_.end() && (it->second >> 16) == p + 1) continue;  // its own records
      beside[r.device].push_back({r.start_ns, r.end_ns});
    }
  }
  std::vector<double> out;
  for (const auto& [iteration, records] : by_iteration) {
    if (iteration < probe.warmup) continue;
    std::map<std::uint32_t, double> per_device;
    std::uint64_t own = 0, under = 0;
    for (const auto* r : records) {
      const bool collective = probe.kind == ProbeKind::collective || comm_beside;
      if (collective && !is_nccl(*r)) continue;
      per_device[r->device] += seconds(*r);
      own += r->end_ns - r->start_ns;
      if (gemm_beside || comm_beside) under += covered(beside[r->device], r->start_ns, r->end_ns);
    }
    if (per_device.empty()) continue;
    if ((gemm_beside || comm_beside) && 2 * under < own) continue;  // not overlapped enough to count
    double t = 0;
    for (const auto& [device, s] : per_device) t = std::max(t, s);  // the slowest GPU bounds a collective
    out.push_back(t);
  }
  return out;
}

std::optional<SustainedSample> ActivityLog::sustained(std::size_t p) const {
  const auto times = iterations(p);
  if (times.size() < kSustainedMinLaunches) return std::nullopt;
  const std::size_t late = std::max(kSustainedWindow, times.size() / 5);
  const Probe& probe = probes_.at(p);
  SustainedSample s;
  s.precision = probe.precision;
  s.m = probe.m;
  s.n = probe.n;
  s.k = probe.k;
  s.burst_seconds = median(std::vector<double>(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(kSustainedWindow)));
  s.sustained_seconds = median(std::vector<double>(times.end() - static_cast<std::ptrdiff_t>(late), times.end()));
  s.launches = static_cast<int>(times.size());
  s.burst_launches = static_cast<int>(kSustainedWindow);
  s.sustained_launches = static_cast<int>(late);
  for (double t : times) s.run_seconds += t;
  return s;
}

CollectiveSample ActivityLog::collective_sample(std::size_t p, double seconds) const {
  const Probe& probe = probes_[p];
  CollectiveSample c;
  c.kind = probe.collective;
  c.ranks = probe.ranks;
  c.bytes = probe.bytes;
  c.seconds = seconds;
  c.intra_node = true;
  c.fabric = probe.fabric;
  c.algorithm = probe.algorithm;
  c.protocol = probe.protocol;
  if (!c.protocol.empty() && !c.algorithm.empty()) return c;
  // What the kernel names say, where NCCL names its kernels by algorithm and protocol.
  for (const auto& r : kernels_) {
    const auto it = external_.find(r.correlation);
    if (it == external_.end() || (it->second >> 16) != p + 1 || !is_nccl(r)) continue;
    const auto parsed = parse_nccl_kernel_name(r.name);
    if (c.protocol.empty()) c.protocol = parsed.protocol;
    if (c.algorithm.empty()) c.algorithm = parsed.algorithm;
    break;
  }
  return c;
}

Measurements ActivityLog::reduce(std::vector<std::size_t>* missing) const {
  Measurements m;
  std::vector<double> medians(probes_.size(), 0.0);
  std::vector<int> counts(probes_.size(), 0);
  for (std::size_t p = 0; p < probes_.size(); ++p) {
    const auto times = iterations(p);
    counts[p] = static_cast<int>(times.size());
    if (!times.empty()) medians[p] = median(times);
  }
  for (std::size_t p = 0; p < probes_.size(); ++p) {
    const Probe& probe = probes_[p];
    if (counts[p] == 0) {
      if (missing) missing->push_back(p);
      continue;
    }
    switch (probe.kind) {
      case ProbeKind::gemm: m.gemms.push_back({probe.precision, probe.batch, probe.m, probe.n, probe.k, medians[p], 1, true, counts[p]}); break;
      case ProbeKind::copy: m.memory.push_back({"copy", probe.bytes, medians[p], counts[p]}); break;
      case ProbeKind::elementwise: m.memory.push_back({"elementwise", probe.bytes, medians[p], counts[p]}); break;
      case ProbeKind::sustained_gemm: {
        auto s = sustained(p);
        if (s) {
          m.sustained = *s;
        } else if (missing) {
          missing->push_back(p);
        }
        break;
      }
      case ProbeKind::collective: m.collectives.push_back(collective_sample(p, medians[p])); break;
      case ProbeKind::gemm_beside_collective:
      case ProbeKind::collective_beside_gemm: {
        if (!probe.alone || counts[*probe.alone] == 0) {
          if (missing) missing->push_back(p);
          break;
        }
        if (probe.kind == ProbeKind::gemm_beside_collective) {
          m.compute_overlap.push_back({ComputeKind::gemm, true, probe.fabric, medians[*probe.alone], medians[p], counts[*probe.alone], counts[p]});
        } else {
          m.comm_overlap.push_back({true, probe.fabric, medians[*probe.alone], medians[p], counts[*probe.alone], counts[p]});
        }
        break;
      }
    }
  }
  return m;
}

std::vector<GemmShape4> gemm_sweep() {
  std::vector<GemmShape4> out;
  // Squares: the shape law's wave quantization and K fill from small to large.
  for (std::int64_t s = 256; s <= 16384; s *= 2) out.push_back({1, s, s, s});
  // Skinny: few rows (small micro-batches, decoding) against wide weights.
  for (std::int64_t m : {16, 128, 1024}) {
    for (std::int64_t nk : {4096, 8192}) out.push_back({1, m, nk, nk});
  }
  // Transformer layers at 8192 tokens: QKV, attention output, MLP up and down (Llama-2 7B widths).
  for (const auto& [n, k] : {std::pair<std::int64_t, std::int64_t>{12288, 4096}, {4096, 4096}, {11008, 4096}, {4096, 11008}}) {
    out.push_back({1, 8192, n, k});
  }
  // MoE experts at the tokens an expert receives (DeepSeek-V3's: hidden 7168, expert FFN 2048, gate and up
  // fused): the small-M, fp8-heavy GEMMs where the shape law is least pinned by dense layers.
  for (std::int64_t m : {256, 1024, 4096}) {
    out.push_back({1, m, 4096, 7168});
    out.push_back({1, m, 7168, 2048});
  }
  // Batched: attention scores and context of eager attention.
  out.push_back({32, 2048, 2048, 128});
  out.push_back({32, 2048, 128, 2048});
  return out;
}

std::vector<double> collective_sweep() {
  std::vector<double> out;
  for (double s = 1024; s <= 1073741824.0; s *= 4) out.push_back(s);
  return out;
}

std::vector<Precision> gemm_formats(int major, int minor) {
  std::vector<Precision> out{Precision::fp32};
  if (major >= 7) out.push_back(Precision::fp16);
  if (major >= 8) {
    out.push_back(Precision::tf32);
    out.push_back(Precision::bf16);
  }
  if (major > 8 || (major == 8 && minor >= 9)) out.push_back(Precision::fp8);
  return out;
}

std::vector<std::uint8_t> random_operands(Precision p, std::size_t bytes, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::uint8_t> out(bytes);
  // Sign, an exponent that puts the value in [0.5, 2) and a random mantissa, per format's bit layout.
  const auto put = [&](std::size_t at, std::uint64_t bits, std::size_t width) {
    for (std::size_t b = 0; b < width && at + b < bytes; ++b) out[at + b] = static_cast<std::uint8_t>(bits >> (8 * b));
  };
  for (std::size_t at = 0; at < bytes;) {
    const std::uint64_t r = random();
    const std::uint64_t sign = r & 1, high = (r >> 1) & 1, mantissa = r >> 2;
    switch (p) {
      case Precision::fp32:
      case Precision::tf32: put(at, sign << 31 | (126 + high) << 23 | (mantissa & 0x7FFFFF), 4), at += 4; break;
      case Precision::bf16: put(at, sign << 15 | (126 + high) << 7 | (mantissa & 0x7F), 2), at += 2; break;
      case Precision::fp16: put(at, sign << 15 | (14 + high) << 10 | (mantissa & 0x3FF), 2), at += 2; break;
      case Precision::fp8: put(at, sign << 7 | (6 + high) << 3 | (mantissa & 0x7), 1), at += 1; break;  // E4M3, bias 7
    }
  }
  return out;
}

}  // namespace parasim::calibrate
