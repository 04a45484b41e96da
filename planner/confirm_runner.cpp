#include "planner/confirm_runner.hpp"

#include <cmath>
#include <fmt/format.h>

namespace parasim::planner {
namespace {

std::string comments(const ConfirmRunner& r) {
  std::string out;
  for (const auto& line : r.header) out += "# " + line + "\n";
  return out;
}

std::string plan_list(const ConfirmRunner& r) {
  std::string out;
  for (const auto& dir : r.plan_dirs) {
    if (!out.empty()) out += ' ';
    out += dir;
  }
  return out;
}

}  // namespace

double confirm_wall_seconds(const std::vector<double>& predicted_iteration_s, int steps) {
  double total = 0;
  for (double t : predicted_iteration_s) total += 3 * steps * t + 600;
  return total;
}

std::string slurm_time(double seconds) {
  const long minutes = std::max(1L, static_cast<long>(std::ceil(seconds / 60)));
  return fmt::format("{:02}:{:02}:00", minutes / 60, minutes % 60);
}

// The loop over the plans: each announced, run with its own port (the last one's may still be in
// TIME_WAIT), a failure reported and the next one started.
static std::string plan_loop(const ConfirmRunner& r, std::string_view where, std::string_view run, std::string_view why) {
  return fmt::format("for plan in {}; do\n", plan_list(r)) + fmt::format("  echo \"parasim confirm: $plan{}\"\n", where) +
         "  # A new port for each plan: the last one's may still be in TIME_WAIT.\n" +
         fmt::format("  MASTER_PORT=$port {} \\\n    || echo \"parasim confirm: $plan failed (exit $?); {}\"\n", run, why) +
         "  port=$((port + 1))\ndone\n";
}

std::string confirm_sbatch(const ConfirmRunner& r) {
  std::string out = "#!/bin/bash\n";
  out += fmt::format("#SBATCH --job-name=parasim-confirm\n#SBATCH --nodes={}\n#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node={}\n", r.nodes,
                     r.gpus_per_node);
  out += fmt::format("#SBATCH --exclusive\n#SBATCH --time={}\n#SBATCH --output=slurm-%j.out\n", slurm_time(r.wall_seconds));
  out += comments(r);
  const auto& f = r.framework;
  out += fmt::format("#\n# Submit from this folder (on a file system every node sees), in an environment with {}:\n", f.name);
  out += fmt::format("#   {}=/path/to/{} sbatch confirm.sbatch\n", f.home_variable, f.name);
  out += "# Each plan runs on all nodes (one torchrun a node, started by srun); a plan that fails (out of\n"
         "# memory, a timeout of PLAN_TIMEOUT) leaves its log and the next one starts. Then read them back:\n"
         "#   parasim confirm --read .\n";
  out += "set -uo pipefail\ncd \"$SLURM_SUBMIT_DIR\"\n";
  out += fmt::format("export {0}=${{{0}:-{1}}}\n", f.home_variable, f.home_default);
  out += "export MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n";
  out += "port=${MASTER_PORT:-6000}\n\n";
  out += plan_loop(r, "", "srun --kill-on-bad-exit=1 --output=\"$plan/node%n.log\" \\\n"
                          "    bash -c 'NODE_RANK=$SLURM_NODEID exec timeout \"${PLAN_TIMEOUT:-30m}\" bash \"$0\"' \"$plan/" +
                          std::string(f.launch_script) + "\"",
                   "its logs say why");
  return out;
}

std::string confirm_node_script(const ConfirmRunner& r) {
  std::string out = "#!/bin/bash\n" + comments(r);
  out += "#\n# Without Slurm: start this on every node at once, from this folder on a file system every node sees:\n";
  const auto& f = r.framework;
  const auto home = fmt::format("{}=/path/to/{}", f.home_variable, f.name);
  out += r.nodes > 1 ? fmt::format("#   {} MASTER_ADDR=<node 0> NODE_RANK=<0..{}> bash run_on_node.sh\n", home, r.nodes - 1)
                     : fmt::format("#   {} bash run_on_node.sh\n", home);
  out += "# A plan that fails (out of memory, a timeout of PLAN_TIMEOUT) leaves its log and the next one starts;\n"
         "# then read them back: parasim confirm --read .\n";
  out += "set -uo pipefail\ncd \"$(dirname \"$0\")\"\n";
  out += r.nodes > 1 ? fmt::format("NODE_RANK=${{NODE_RANK:?set NODE_RANK to the index of this node, 0 to {}}}\n", r.nodes - 1)
                     : "NODE_RANK=${NODE_RANK:-0}\n";
  out += "export NODE_RANK\nport=${MASTER_PORT:-6000}\n\n";
  out += plan_loop(r, " on node $NODE_RANK",
                   fmt::format("timeout \"${{PLAN_TIMEOUT:-30m}}\" bash \"$plan/{}\" > \"$plan/node$NODE_RANK.log\" 2>&1", f.launch_script),
                   "$plan/node$NODE_RANK.log says why");
  return out;
}

}  // namespace parasim::planner
