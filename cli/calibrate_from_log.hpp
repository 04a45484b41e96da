#pragma once
// `parasim calibrate from-log`: Megatron-LM training logs read back (calibrate/megatron_log.hpp),
// priced as `validate` prices a published run (sim/megatron_log_run.hpp), and the error printed.
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
};

/// Prints the report; returns the exit code.
int run_from_log(const FromLogOptions& o);

}  // namespace parasim::cli
