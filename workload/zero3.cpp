#include "workload/zero3.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace parasim::workload {

std::vector<double> zero3_gather_shares(const ModelSpec& m, const TrainingSpec& tr) {
  if (tr.zero3_engine != Zero3Engine::deepspeed) return {1.0};
  const auto modules = dense_layer_modules(m);
  const double whole = std::accumulate(modules.begin(), modules.end(), 0.0);
  std::vector<double> shares;
  for (double module : modules) shares.push_back(module / whole);
  return shares;
}

int zero3_reduce_scatters(const TrainingSpec& tr, double gradients) {
  if (tr.zero3_engine != Zero3Engine::deepspeed) return 1;
  return static_cast<int>(std::max(1.0, std::ceil(gradients / kDeepSpeedReduceBucketGradients)));
}

bool zero3_holds_stage(const Plan& plan, const TrainingSpec& tr) {
  return plan.zero >= 3 && plan.pp > 1 && tr.zero3_engine == Zero3Engine::fsdp;
}

}  // namespace parasim::workload
