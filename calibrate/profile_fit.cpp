#include "calibrate/profile_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <functional>
#include <map>

#include "calibrate/cost_model.hpp"
#include "calibrate/gemm_points.hpp"
#include "calibrate/profile_yaml.hpp"

namespace parasim::calibrate {
namespace {

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The x in [lo, hi] minimising f, by golden-section search on log x (f is unimodal there for the
/// fits below: each predicted time falls monotonically as the efficiency rises).
double golden_log(const std::function<double(double)>& f, double lo, double hi) {
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double a = std::log(lo), b = std::log(hi);
  double c = b - phi * (b - a), d = a + phi * (b - a);
  double fc = f(std::exp(c)), fd = f(std::exp(d));
  for (int i = 0; i < 100 && b - a > 1e-9; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - phi * (b - a);
      fc = f(std::exp(c));
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + phi * (b - a);
      fd = f(std::exp(d));
    }
  }
  return std::exp(0.5 * (a + b));
}

double squared_log_error(const std::vector<double>& predicted, const std::vector<double>& measured) {
  double s = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const double e = std::log(predicted[i] / measured[i]);
    s += e * e;
  }
  return s;
}

workload::Op memory_op(const MemorySample& m) {
  workload::Op op;
  op.kind = workload::OpKind::memory_bound;
  op.bytes = m.bytes;
  return op;
}

/// A profile without measured points: the law alone, which is what the fits adjust.
Profile law_only(Profile p) {
  p.gemm_points.clear();
  p.collective_points.clear();
  p.memory_points.clear();
  return p;
}

std::string protocol_of(const std::string& p) {
  std::string s = p;
  for (auto& c : s) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return s;
}

Fabric fabric_of(const CollectiveSample& c, const std::optional<topology::GpuSpec>& gpu) {
  if (c.fabric) return *c.fabric;
  if (!c.intra_node) return Fabric::network;
  return gpu && !gpu->nvlink ? Fabric::pcie : Fabric::nvlink;
}

std::optional<double> fabric_bandwidth(Fabric f, const FitOptions& o) {
  switch (f) {
    case Fabric::nvlink:
      if (o.gpu && o.gpu->nvlink) return o.gpu->nvlink->per_direction().value();
      return std::nullopt;
    case Fabric::pcie:
      if (o.gpu) return o.gpu->pcie_per_direction().value();
      return std::nullopt;
    case Fabric::network:
      if (o.network_bandwidth) return o.network_bandwidth->value();
      return std::nullopt;
  }
  return std::nullopt;
}

std::string too_poor(double median_error, double gate, double value) {
  return fmt::format("best value {:.3g} leaves a median error of {:.1f}% (> {:.0f}%): base figure kept, points kept", value, 100 * median_error,
                     100 * gate);
}

void set_source(Profile& p, const std::string& key, const std::string& text) { p.sources[key] = text; }

}  // namespace

int collective_steps(CollectiveKind kind, const std::string& algorithm, int ranks) {
  const int n = std::max(2, ranks);
  if (kind == CollectiveKind::all_reduce && algorithm == "tree") return 2 * static_cast<int>(std::ceil(std::log2(n)));
  switch (kind) {
    case CollectiveKind::all_reduce: return 2 * (n - 1);
    case CollectiveKind::send_recv: return 1;
    default: return n - 1;
  }
}

ErrorStats error_stats(const std::vector<double>& predicted, const std::vector<double>& measured) {
  ErrorStats s;
  if (measured.empty()) return s;
  std::vector<double> rel;
  double mean = 0;
  for (double m : measured) mean += std::log(m);
  mean /= static_cast<double>(measured.size());
  double ss_res = 0, ss_tot = 0;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    rel.push_back(std::fabs(predicted[i] - measured[i]) / measured[i]);
    const double lm = std::log(measured[i]);
    ss_res += std::pow(std::log(predicted[i]) - lm, 2);
    ss_tot += std::pow(lm - mean, 2);
  }
  s.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : std::numeric_limits<double>::quiet_NaN();
  s.median = median(rel);
  s.worst = *std::max_element(rel.begin(), rel.end());
  return s;
}

namespace {

// The sustained clock: a GEMM's last launches of a seconds-long run against its first.
void fit_sustained_clock(FitResult& r, const Measurements& m, const FitOptions& o) {
  Profile& p = r.profile;
  const std::string& src = o.source;
  if (m.sustained && m.sustained->burst_seconds > 0 && m.sustained->sustained_seconds > 0) {
    const auto& s = *m.sustained;
    FitQuality q;
    q.what = "sustained clock";
    q.samples = static_cast<std::size_t>(s.launches);
    const double ratio = s.burst_seconds / s.sustained_seconds;
    p.sustained_clock = std::min(1.0, ratio);
    q.fitted = true;
    q.keys = {"gemm.sustained_clock"};
    q.note = fmt::format("{} {}x{}x{} for {:.1f} s: median of the first {} launches {:.1f} us, of the last {} {:.1f} us", precision_name(s.precision),
                         s.m, s.n, s.k, s.run_seconds, s.burst_launches, 1e6 * s.burst_seconds, s.sustained_launches, 1e6 * s.sustained_seconds);
    set_source(p, "gemm.sustained_clock", fmt::format("{}; {}{}", src, q.note, ratio > 1 ? " (ran faster at the end: kept at 1)" : ""));
    r.quality.push_back(std::move(q));
  }
}

// GEMM efficiency per format.
void fit_gemm_efficiency(FitResult& r, const Measurements& m, const FitOptions& o) {
  Profile& p = r.profile;
  const std::string& src = o.source;
  // A burst sample (the collector's probes) ran at the boost clock: it is set against the law without
  // the sustained clock, so the efficiency stays the kernel's and the clock the board's.
  for (auto precision : kAllPrecisions) {
    std::vector<const GemmSample*> samples;
    for (const auto& g : m.gemms) {
      if (g.precision == precision && g.seconds > 0) samples.push_back(&g);
    }
    if (samples.empty()) continue;
    FitQuality q;
    q.what = fmt::format("gemm {}", precision_name(precision));
    q.samples = samples.size();
    std::vector<double> measured;
    for (const auto* g : samples) measured.push_back(g->seconds);
    if (!o.gpu) {
      q.note = "no hardware for this GPU (--hardware): efficiency not fitted, points kept";
    } else if (!o.gpu->peak_for(precision) && precision != Precision::tf32) {
      q.note = fmt::format("{} has no {} peak in its hardware file", o.gpu->name, precision_name(precision));
    } else if (samples.size() < 3) {
      q.note = "fewer than 3 GEMMs: efficiency not fitted, points kept";
    } else {
      const std::size_t idx = static_cast<std::size_t>(precision);
      auto predict = [&](double efficiency) {
        Profile trial = law_only(p);
        trial.gemm_efficiency[idx] = efficiency;
        const CostModel sustained(*o.gpu, trial);
        trial.sustained_clock = 1.0;
        const CostModel burst(*o.gpu, trial);
        std::vector<double> out;
        for (const auto* g : samples) {
          out.push_back((g->burst ? burst : sustained).op_time(gemm_point_op(g->precision, g->batch, g->m, g->n, g->k)).value());
        }
        return out;
      };
      const double best = golden_log([&](double e) { return squared_log_error(predict(e), measured); }, 1e-3, 1.0);
      const auto stats = error_stats(predict(best), measured);
      q.r2 = stats.r2;
      q.median_error = stats.median;
      q.worst_error = stats.worst;
      if (stats.median > o.max_median_error) {
        q.note = too_poor(stats.median, o.max_median_error, best);
      } else {
        p.gemm_efficiency[idx] = best;
        q.fitted = true;
        q.keys = {fmt::format("gemm.efficiency.{}", precision_name(precision))};
        set_source(p, q.keys.front(),
                   fmt::format("{}; fitted on {} GEMMs (log-space least squares), median error {:.1f}%", src, samples.size(), 100 * stats.median));
      }
    }
    r.quality.push_back(std::move(q));
  }
}

// Memory-bound bandwidth.
void fit_memory_efficiency(FitResult& r, const Measurements& m, const FitOptions& o) {
  Profile& p = r.profile;
  const std::string& src = o.source;
  if (!m.memory.empty()) {
    FitQuality q;
    q.what = "memory";
    q.samples = m.memory.size();
    std::vector<const MemorySample*> used;
    if (o.gpu) {
      for (const auto& s : m.memory) {
        if (s.seconds > 0 && s.bytes / o.gpu->hbm_bandwidth.value() > p.kernel_launch.value()) used.push_back(&s);
      }
    }
    if (!o.gpu) {
      q.note = "no hardware for this GPU (--hardware): efficiency not fitted, points kept";
    } else if (used.size() < 3) {
      q.note = fmt::format("{} transfers long enough to show the bandwidth (bytes at full HBM speed > one kernel launch); "
                           "3 needed: efficiency not fitted",
                           used.size());
    } else {
      std::vector<double> measured;
      for (const auto* s : used) measured.push_back(s->seconds);
      auto predict = [&](double efficiency) {
        Profile trial = law_only(p);
        trial.memory_efficiency = efficiency;
        const CostModel cost(*o.gpu, trial);
        std::vector<double> out;
        for (const auto* s : used) out.push_back(cost.op_time(memory_op(*s)).value());
        return out;
      };
      const double best = golden_log([&](double e) { return squared_log_error(predict(e), measured); }, 1e-3, 1.0);
      const auto stats = error_stats(predict(best), measured);
      q.samples = used.size();
      q.r2 = stats.r2;
      q.median_error = stats.median;
      q.worst_error = stats.worst;
      if (stats.median > o.max_median_error) {
        q.note = too_poor(stats.median, o.max_median_error, best);
      } else {
        p.memory_efficiency = best;
        q.fitted = true;
        q.keys = {"memory.efficiency"};
        set_source(p, "memory.efficiency",
                   fmt::format("{}; fitted on {} copies and elementwise kernels, median error {:.1f}%", src, used.size(), 100 * stats.median));
      }
    }
    r.quality.push_back(std::move(q));
  }
}

// The latency and bandwidth of one fabric's collectives of one protocol.
FitQuality fit_collective_group(Profile& p, Fabric fabric, const std::string& protocol, const std::vector<const CollectiveSample*>& samples,
                                const FitOptions& o) {
  const std::string& src = o.source;
  FitQuality q;
  q.what = fmt::format("nccl {} {}", fabric_name(fabric), protocol.empty() ? "(protocol unknown)" : protocol);
  q.samples = samples.size();
  const auto bandwidth = fabric_bandwidth(fabric, o);
  const bool simple = protocol == "SIMPLE", ll = protocol == "LL";
  std::map<double, int> sizes;
  for (const auto* c : samples) ++sizes[c->bytes];
  if (!simple && !ll) {
    q.note = protocol.empty() ? "the kernel names do not say the protocol: not fitted, points kept" : "LL128 is not modelled: points kept";
  } else if (!bandwidth) {
    q.note = fabric == Fabric::network ? "no network bandwidth (--network-bandwidth): not fitted, points kept"
                                       : "no hardware for this GPU (--hardware): not fitted, points kept";
  } else if (samples.size() < 3 || sizes.size() < 2) {
    q.note = fmt::format("{} collectives of {} sizes; 3 of 2 sizes needed: not fitted, points kept", samples.size(), sizes.size());
  } else {
    const double launch = p.collective_launch.value();
    Eigen::MatrixXd a(static_cast<Eigen::Index>(samples.size()), 2);
    Eigen::VectorXd y(static_cast<Eigen::Index>(samples.size()));
    std::vector<double> measured;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const auto* c = samples[i];
      const auto row = static_cast<Eigen::Index>(i);
      a(row, 0) = collective_steps(c->kind, c->algorithm, c->ranks);
      a(row, 1) = bus_factor(c->kind, c->ranks) * c->bytes / *bandwidth;
      y(row) = c->seconds - launch;
      measured.push_back(c->seconds);
    }
    Eigen::Vector2d x = a.colPivHouseholderQr().solve(y);
    std::string how = "latency and bandwidth";
    if (x(0) < 0) {
      // A negative latency means the sizes do not separate the two terms: fit the bandwidth alone.
      x(0) = 0;
      x(1) = a.col(1).dot(y) / a.col(1).squaredNorm();
      how = "bandwidth only (latency 0)";
    }
    const double efficiency = x(1) > 0 ? 1.0 / x(1) : 0;
    if (!(efficiency > 0) || efficiency > 1) {
      q.note = fmt::format("fitted efficiency {:.3g} is outside (0, 1]: not fitted, points kept", efficiency);
    } else {
      std::vector<double> predicted;
      for (std::size_t i = 0; i < samples.size(); ++i) {
        predicted.push_back(launch + a(static_cast<Eigen::Index>(i), 0) * x(0) + a(static_cast<Eigen::Index>(i), 1) * x(1));
      }
      const auto stats = error_stats(predicted, measured);
      q.r2 = stats.r2;
      q.median_error = stats.median;
      q.worst_error = stats.worst;
      if (stats.median > o.max_median_error) {
        q.note = too_poor(stats.median, o.max_median_error, efficiency);
        return q;
      }
      FabricProfile& f = fabric == Fabric::nvlink ? p.nvlink : fabric == Fabric::pcie ? p.pcie : p.network;
      const std::string base = fmt::format("fabrics.{}.", fabric_name(fabric));
      if (simple) {
        f.efficiency = efficiency;
        f.step_latency = Seconds(x(0));
        q.keys = {base + "efficiency", base + "step_latency"};
      } else {
        f.ll_efficiency = efficiency;
        f.ll_step_latency = Seconds(x(0));
        q.keys = {base + "ll_efficiency", base + "ll_step_latency"};
      }
      for (const auto& k : q.keys) {
        set_source(p, k,
                   fmt::format("{}; {} fitted on {} {} collectives of {} sizes (the latency includes the wires), median error {:.1f}%", src, how,
                               samples.size(), protocol, sizes.size(), 100 * stats.median));
      }
      q.fitted = true;
    }
  }
  return q;
}

// Collectives per fabric and protocol.
void fit_collectives(FitResult& r, const Measurements& m, const FitOptions& o) {
  std::map<std::pair<int, std::string>, std::vector<const CollectiveSample*>> groups;
  for (const auto& c : m.collectives) {
    if (c.seconds > 0 && c.bytes > 0) groups[{static_cast<int>(fabric_of(c, o.gpu)), protocol_of(c.protocol)}].push_back(&c);
  }
  for (const auto& [key, samples] : groups) {
    r.quality.push_back(fit_collective_group(r.profile, static_cast<Fabric>(key.first), key.second, samples, o));
  }
}

// Overlap slowdown: compute beside collectives, and collectives beside compute.
void fit_overlap(FitResult& r, const Measurements& m, const FitOptions& o) {
  Profile& p = r.profile;
  const std::string& src = o.source;
  auto overlap_fabric = [&](bool intra, const std::optional<Fabric>& f) {
    if (f) return *f;
    if (!intra) return Fabric::network;
    return o.gpu && !o.gpu->nvlink ? Fabric::pcie : Fabric::nvlink;
  };
  std::map<std::pair<int, int>, std::pair<double, double>> compute_sums;  // (kind, fabric) -> (sum w·s, sum w)
  std::map<std::pair<int, int>, std::size_t> compute_pairs;
  for (const auto& c : m.compute_overlap) {
    if (c.alone_s <= 0) continue;
    const auto key = std::make_pair(static_cast<int>(c.kind), static_cast<int>(overlap_fabric(c.intra_node, c.fabric)));
    compute_sums[key].first += c.overlapped * (c.overlapped_s / c.alone_s - 1);
    compute_sums[key].second += c.overlapped;
    ++compute_pairs[key];
  }
  for (const auto& [key, sums] : compute_sums) {
    const auto kind = static_cast<ComputeKind>(key.first);
    const auto fabric = static_cast<Fabric>(key.second);
    FitQuality q;
    q.what = fmt::format("overlap {} while {}", compute_kind_name(kind), fabric_name(fabric));
    q.samples = compute_pairs[key];
    const double slowdown = sums.first / sums.second;
    const std::string k = fmt::format("overlap.compute_slowdown.{}.{}", compute_kind_name(kind), fabric_name(fabric));
    if (slowdown < 0) {
      q.note = fmt::format("kernels ran {:.1f}% faster while overlapped (noise, or the overlapped launches differ): kept at 0", -100 * slowdown);
    }
    p.compute_slowdown[static_cast<std::size_t>(kind)][static_cast<std::size_t>(fabric)] = std::max(0.0, slowdown);
    q.fitted = true;
    q.keys = {k};
    q.note = q.note.empty() ? fmt::format("slowdown {:.1f}% over {} kernel kinds seen both ways", 100 * slowdown, compute_pairs[key]) : q.note;
    set_source(p, k, fmt::format("{}; {} kernels seen alone and beside collectives, {:.1f}% slower overlapped", src, compute_pairs[key], 100 * slowdown));
    r.quality.push_back(std::move(q));
  }
  std::map<int, std::pair<double, double>> comm_sums;
  std::map<int, std::size_t> comm_pairs;
  for (const auto& c : m.comm_overlap) {
    if (c.alone_s <= 0) continue;
    const int f = static_cast<int>(overlap_fabric(c.intra_node, c.fabric));
    comm_sums[f].first += c.overlapped * (c.overlapped_s / c.alone_s - 1);
    comm_sums[f].second += c.overlapped;
    ++comm_pairs[f];
  }
  for (const auto& [f, sums] : comm_sums) {
    const auto fabric = static_cast<Fabric>(f);
    FitQuality q;
    q.what = fmt::format("overlap collectives on {} while computing", fabric_name(fabric));
    q.samples = comm_pairs[f];
    const double slowdown = sums.first / sums.second;
    const std::string k = fmt::format("overlap.comm_slowdown.{}", fabric_name(fabric));
    p.comm_slowdown[static_cast<std::size_t>(fabric)] = std::max(0.0, slowdown);
    q.fitted = true;
    q.keys = {k};
    q.note = slowdown < 0 ? fmt::format("ran {:.1f}% faster while overlapped: kept at 0", -100 * slowdown)
                          : fmt::format("slowdown {:.1f}% over {} collective sizes seen both ways", 100 * slowdown, comm_pairs[f]);
    set_source(p, k, fmt::format("{}; {} collectives seen alone and beside compute, {:.1f}% slower overlapped", src, comm_pairs[f], 100 * slowdown));
    r.quality.push_back(std::move(q));
  }
}

// Measured points: the median per distinct shape or size.
void add_measured_points(FitResult& r, const Measurements& m, const FitOptions& o) {
  Profile& p = r.profile;
  const std::string& src = o.source;
  const std::string point_kind = source_kind(src).empty() ? std::string("assumed") : std::string(source_kind(src));
  // Keyed by shape and clock: a burst and a sustained time of one shape are different measurements.
  struct Timed {
    std::vector<double> times;
    int launches = 0;
  };
  const auto launches_text = [](int n) { return fmt::format("{} launch{}", n, n == 1 ? "" : "es"); };
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool>, Timed> gemm_points;
  for (const auto& g : m.gemms) {
    auto& t = gemm_points[{static_cast<int>(g.precision), g.batch, g.m, g.n, g.k, g.burst}];
    t.times.push_back(g.seconds);
    t.launches += g.launches;
  }
  for (const auto& [key, t] : gemm_points) {
    p.gemm_points.push_back({static_cast<Precision>(std::get<0>(key)), std::get<1>(key), std::get<2>(key), std::get<3>(key), std::get<4>(key),
                             Seconds(median(t.times)), fmt::format("{}: median of {}", point_kind, launches_text(t.launches)), std::get<5>(key)});
  }
  std::map<std::tuple<int, int, int, double, std::string, std::string>, std::vector<double>> coll_points;
  for (const auto& c : m.collectives) {
    if (c.seconds <= 0 || c.bytes <= 0 || c.ranks < 2) continue;
    coll_points[{static_cast<int>(c.kind), static_cast<int>(fabric_of(c, o.gpu)), c.ranks, c.bytes, c.algorithm, c.protocol}].push_back(c.seconds);
  }
  for (const auto& [key, times] : coll_points) {
    p.collective_points.push_back({static_cast<CollectiveKind>(std::get<0>(key)), static_cast<Fabric>(std::get<1>(key)), std::get<2>(key),
                                   std::get<3>(key), Seconds(median(times)), std::get<4>(key), std::get<5>(key),
                                   fmt::format("{}: median of {}", point_kind, times.size())});
  }
  std::map<std::pair<std::string, double>, Timed> mem_points;
  for (const auto& s : m.memory) {
    if (s.seconds <= 0 || s.bytes <= 0) continue;
    auto& t = mem_points[{s.kind, s.bytes}];
    t.times.push_back(s.seconds);
    t.launches += s.launches;
  }
  for (const auto& [key, t] : mem_points) {
    p.memory_points.push_back({key.first, key.second, Seconds(median(t.times)), fmt::format("{}: median of {}", point_kind, launches_text(t.launches))});
  }
}

}  // namespace


FitResult fit_profile(const Profile& base, const Measurements& m, const FitOptions& o) {
  FitResult r{base, {}};
  fit_sustained_clock(r, m, o);
  fit_gemm_efficiency(r, m, o);
  fit_memory_efficiency(r, m, o);
  fit_collectives(r, m, o);
  fit_overlap(r, m, o);
  add_measured_points(r, m, o);
  return r;
}

}  // namespace parasim::calibrate
