#include "sim/log_run.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace parasim::sim {

LogRun log_run_named(const std::filesystem::path& file, std::string_view stack) {
  LogRun out;
  auto& r = out.run;
  r.id = file.stem().string();
  r.family = "log";
  r.source = fmt::format("{} training log {}", stack, file.string());
  r.where = {file.string(), 1, 1};
  return out;
}

void place_log_run(MeasuredRun& run, const LogCluster& cluster) {
  run.gpu = cluster.gpu;
  run.gpus_per_node = std::min(cluster.gpus_per_node, run.gpus);
  run.nic_gbps_per_gpu = cluster.nic_gbps_per_gpu;
}

}  // namespace parasim::sim
