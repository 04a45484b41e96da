#pragma once
// Training logs against the model: `parasim calibrate from-log` reads Megatron-LM logs back
// (calibrate/megatron_log.hpp) and prices them as `validate` prices a published run
// (sim/megatron_log_run.hpp); `parasim calibrate fit` fits a per-cluster correction on them (sim/log_fit.hpp).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace parasim::cli {

struct FromLogOptions {
  std::vector<std::string> logs;
  std::string gpu;  ///< bundled hardware name
  int gpus_per_node = 8;
  std::optional<double> nic_gbps;
  std::string hardware_dir;
  int threads = 0;
  bool json = false;
  std::string out;  ///< calibrate fit: the corrected profile's file
};

/// The logs read and priced: the document `calibrate from-log --json` prints (for the Python module too).
nlohmann::json from_log_json(const FromLogOptions& o);

/// Prints the report; returns the exit code.
int run_from_log(const FromLogOptions& o);

/// `parasim calibrate fit`: the per-cluster correction (sim/log_fit.hpp) fitted on the logs, with each
/// log's error before, after, and held out; writes the corrected profile to `o.out` when given.
int run_fit_logs(const FromLogOptions& o);

}  // namespace parasim::cli
