#pragma once
// A per-cluster correction fitted on measured runs (training logs read by calibrate from-log): three
// physically named scales on the bundled profile of the GPU, each a factor on what the profile says
// the hardware delivers on that cluster and software stack:
//   gemm     every GEMM efficiency (the main loop's fraction of the dense peak);
//   memory   the memory-bound efficiency (streaming kernels' fraction of HBM bandwidth);
//   network  every fabric's collective efficiency (NVLink, PCIe, network), fitted only when a run
//            spans more than one GPU.
// The fit minimizes Σ ln(predicted/measured)² + 0.001·Σ ln(scale)² over the runs (Levenberg-Marquardt
// on the log-scales, each kept in [1/4, 4]), the runs simulated exactly as validate simulates a row;
// the small second term settles the scales runs of one shape cannot tell apart. Leave-one-out says how
// well it predicts a run it was not fitted on.
#include <filesystem>
#include <string>
#include <vector>

#include "calibrate/profile.hpp"
#include "sim/measured_run.hpp"

namespace parasim::sim {

struct LogCorrection {
  double gemm = 1, memory = 1, network = 1;
};

/// `base` with the correction applied; an efficiency the scale would take past 1 stops at 1. Every
/// changed number's source says so.
calibrate::Profile corrected_profile(const calibrate::Profile& base, const LogCorrection& c, const std::string& source);

struct LogFit {
  LogCorrection correction;  ///< fitted on every run
  bool network_fitted = false;
  std::vector<double> uncorrected_error;  ///< per run: (predicted − measured) / measured with `base`
  std::vector<double> fitted_error;       ///< per run, with the correction fitted on every run
  std::vector<double> held_out_error;     ///< per run, with the correction fitted on the others (none with 1 run)
  std::vector<LogCorrection> held_out;    ///< per run, the correction fitted without it
};

/// Fits the correction on `runs` (all on the GPU whose bundled profile is `base`). Throws InputError
/// naming a run that cannot be simulated.
LogFit fit_correction(const std::vector<MeasuredRun>& runs, const std::filesystem::path& hardware_dir, const calibrate::Profile& base);

}  // namespace parasim::sim
