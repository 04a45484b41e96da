#include "sim/log_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/validation.hpp"

namespace parasim::sim {
namespace {

constexpr double kLowest = 0.25, kHighest = 4.0;  // the range each scale is searched over
// A weak pull of each scale towards 1 (the bundled profile): λ·Σ ln(scale)². Logs of one shape pin
// only a mix of the scales; this picks the mix nearest the profile instead of a bound, and moves an
// exact fit by about λ/0.25 in log (0.4% at 1e-3).
constexpr double kRidge = 1e-3;

double scaled(double efficiency, double scale) { return std::min(1.0, efficiency * scale); }

/// Σ ln(predicted / measured)² of `runs` under the correction, and the signed errors.
struct Scored {
  double loss = 0;
  std::vector<double> errors;
};

Scored score(const std::vector<const MeasuredRun*>& runs, const std::filesystem::path& hardware_dir, const calibrate::Profile& base,
             const LogCorrection& c) {
  const calibrate::Profile p = corrected_profile(base, c, "log: trial");
  Scored s;
  for (const auto* r : runs) {
    const auto row = simulate_row(*r, hardware_dir, &p);
    if (row.skipped) throw InputError(r->where, {}, fmt::format("{} cannot be simulated: {}", r->id, *row.skipped));
    s.errors.push_back(row.error);
    const double l = std::log(row.predicted_s / r->measured_iteration_s);
    s.loss += l * l;
  }
  return s;
}

/// The scales fitted: gemm and memory, and network where a run crosses a fabric.
std::vector<double LogCorrection::*> fitted_scales(bool network) {
  std::vector<double LogCorrection::*> scales{&LogCorrection::gemm, &LogCorrection::memory};
  if (network) scales.push_back(&LogCorrection::network);
  return scales;
}

/// ln(predicted / measured) per run at log-scales x.
Eigen::VectorXd residuals(const std::vector<const MeasuredRun*>& runs, const std::filesystem::path& hardware_dir, const calibrate::Profile& base,
                          const std::vector<double LogCorrection::*>& scales, const Eigen::VectorXd& x) {
  LogCorrection c;
  for (std::size_t k = 0; k < scales.size(); ++k) c.*scales[k] = std::exp(x[static_cast<Eigen::Index>(k)]);
  const auto errors = score(runs, hardware_dir, base, c).errors;
  Eigen::VectorXd r(static_cast<Eigen::Index>(errors.size()));
  for (std::size_t i = 0; i < errors.size(); ++i) r[static_cast<Eigen::Index>(i)] = std::log1p(errors[i]);
  return r;
}

// Levenberg-Marquardt on the log-scales: the residuals are close to linear in them (a scale divides
// the time of one kind of kernel), so a few steps with a finite-difference Jacobian converge.
LogCorrection fit_on(const std::vector<const MeasuredRun*>& runs, const std::filesystem::path& hardware_dir, const calibrate::Profile& base,
                     bool network) {
  const auto scales = fitted_scales(network);
  const auto k = static_cast<Eigen::Index>(scales.size());
  const double lo = std::log(kLowest), hi = std::log(kHighest), h = 1e-4;
  Eigen::VectorXd x = Eigen::VectorXd::Zero(k);
  const auto loss = [&](const Eigen::VectorXd& r, const Eigen::VectorXd& at) { return r.squaredNorm() + kRidge * at.squaredNorm(); };
  Eigen::VectorXd r = residuals(runs, hardware_dir, base, scales, x);
  double damping = 1e-3;
  for (int step = 0; step < 50; ++step) {
    Eigen::MatrixXd jacobian(r.size(), k);
    for (Eigen::Index j = 0; j < k; ++j) {
      Eigen::VectorXd moved = x;
      moved[j] += h;
      jacobian.col(j) = (residuals(runs, hardware_dir, base, scales, moved) - r) / h;
    }
    const Eigen::MatrixXd normal = jacobian.transpose() * jacobian + kRidge * Eigen::MatrixXd::Identity(k, k);
    const Eigen::VectorXd gradient = jacobian.transpose() * r + kRidge * x;
    bool improved = false;
    while (damping < 1e6) {
      const Eigen::MatrixXd a = normal + damping * Eigen::MatrixXd(normal.diagonal().asDiagonal());
      const Eigen::VectorXd next = (x - a.ldlt().solve(gradient)).cwiseMax(lo).cwiseMin(hi);
      const Eigen::VectorXd r_next = residuals(runs, hardware_dir, base, scales, next);
      if (loss(r_next, next) < loss(r, x)) {
        const bool settled = (next - x).cwiseAbs().maxCoeff() < 1e-7;
        x = next, r = r_next, damping = std::max(1e-6, damping / 10), improved = true;
        if (settled) step = 50;
        break;
      }
      damping *= 10;
    }
    if (!improved) break;
  }
  LogCorrection c;
  for (std::size_t j = 0; j < scales.size(); ++j) c.*scales[j] = std::exp(x[static_cast<Eigen::Index>(j)]);
  return c;
}

}  // namespace

calibrate::Profile corrected_profile(const calibrate::Profile& base, const LogCorrection& c, const std::string& source) {
  calibrate::Profile p = base;
  const auto note = [&](const std::string& key, double before, double after, double scale) {
    p.sources[key] = fmt::format("{}: {:.4g} x {:.4g}{}", source, before, scale, after >= 1.0 && before * scale > 1.0 ? " (stopped at 1)" : "");
  };
  if (c.gemm != 1) {
    for (auto precision : kAllPrecisions) {
      auto& e = p.gemm_efficiency[static_cast<std::size_t>(precision)];
      const double before = e;
      e = scaled(e, c.gemm);
      note(fmt::format("gemm.efficiency.{}", precision_name(precision)), before, e, c.gemm);
    }
  }
  if (c.memory != 1) {
    const double before = p.memory_efficiency;
    p.memory_efficiency = scaled(p.memory_efficiency, c.memory);
    note("memory.efficiency", before, p.memory_efficiency, c.memory);
  }
  if (c.network != 1) {
    for (auto* f : {&p.nvlink, &p.pcie, &p.network}) {
      f->efficiency = scaled(f->efficiency, c.network);
      f->ll_efficiency = scaled(f->ll_efficiency, c.network);
    }
    for (auto fabric : calibrate::kAllFabrics) {
      p.sources[fmt::format("fabrics.{}", calibrate::fabric_name(fabric))] = fmt::format("{}: collective efficiencies x {:.4g}", source, c.network);
    }
  }
  return p;
}

LogFit fit_correction(const std::vector<MeasuredRun>& runs, const std::filesystem::path& hardware_dir, const calibrate::Profile& base) {
  std::vector<const MeasuredRun*> all;
  for (const auto& r : runs) all.push_back(&r);
  LogFit fit;
  fit.network_fitted = std::any_of(runs.begin(), runs.end(), [](const MeasuredRun& r) { return r.gpus > 1; });
  fit.uncorrected_error = score(all, hardware_dir, base, {}).errors;
  fit.correction = fit_on(all, hardware_dir, base, fit.network_fitted);
  fit.fitted_error = score(all, hardware_dir, base, fit.correction).errors;
  if (runs.size() < 2) return fit;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::vector<const MeasuredRun*> others;
    for (std::size_t j = 0; j < runs.size(); ++j) {
      if (j != i) others.push_back(&runs[j]);
    }
    const bool network = std::any_of(others.begin(), others.end(), [](const MeasuredRun* r) { return r->gpus > 1; });
    fit.held_out.push_back(fit_on(others, hardware_dir, base, network));
    fit.held_out_error.push_back(score({&runs[i]}, hardware_dir, base, fit.held_out.back()).errors.front());
  }
  return fit;
}

}  // namespace parasim::sim
