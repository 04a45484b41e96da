#include <doctest/doctest.h>

#include "planner/confirm_runner.hpp"

using namespace parasim::planner;

TEST_CASE("a confirm batch asks for three times each plan's predicted steps and ten minutes of start-up each") {
  // 20 steps of 1.5 s and of 2.0 s: 3*20*1.5 + 600 + 3*20*2.0 + 600 = 90 + 600 + 120 + 600 s.
  CHECK(confirm_wall_seconds({1.5, 2.0}, 20) == doctest::Approx(1410));
  CHECK(confirm_wall_seconds({}, 20) == 0);
}

TEST_CASE("Slurm's --time is the seconds rounded up to the minute, at least one") {
  CHECK(slurm_time(1410) == "00:24:00");
  CHECK(slurm_time(6000) == "01:40:00");
  CHECK(slurm_time(60) == "00:01:00");
  CHECK(slurm_time(0) == "00:01:00");
  CHECK(slurm_time(100 * 3600 + 1) == "100:01:00");
}

TEST_CASE("the runners run every plan in order, each node writing its own log into the plan's folder") {
  const ConfirmRunner r{{"plan-01", "plan-02"}, {"parasim confirm job: 2 plans"}, 4, 8, 1410};
  const auto sbatch = confirm_sbatch(r);
  CHECK(sbatch.find("#SBATCH --nodes=4\n") != std::string::npos);
  CHECK(sbatch.find("#SBATCH --gpus-per-node=8\n") != std::string::npos);
  CHECK(sbatch.find("#SBATCH --time=00:24:00\n") != std::string::npos);
  CHECK(sbatch.find("# parasim confirm job: 2 plans\n") != std::string::npos);
  CHECK(sbatch.find("for plan in plan-01 plan-02; do") != std::string::npos);
  CHECK(sbatch.find("--output=\"$plan/node%n.log\"") != std::string::npos);
  CHECK(sbatch.find("port=$((port + 1))") != std::string::npos);

  const auto node = confirm_node_script(r);
  CHECK(node.find("for plan in plan-01 plan-02; do") != std::string::npos);
  CHECK(node.find("> \"$plan/node$NODE_RANK.log\" 2>&1") != std::string::npos);
  CHECK(node.find("NODE_RANK=${NODE_RANK:?set NODE_RANK to the index of this node, 0 to 3}") != std::string::npos);
  // One node needs no rank.
  const auto single = confirm_node_script(ConfirmRunner{{"plan-01"}, {}, 1, 1, 60});
  CHECK(single.find("NODE_RANK=${NODE_RANK:-0}") != std::string::npos);
}

TEST_CASE("under torchtitan the runners start each plan's launch_torchtitan.sh from a torchtitan checkout") {
  const ConfirmRunner r{{"plan-01"}, {}, 2, 8, 60, kConfirmTorchtitan};
  const auto sbatch = confirm_sbatch(r);
  CHECK(sbatch.find("export TORCHTITAN=${TORCHTITAN:-/workspace/torchtitan}\n") != std::string::npos);
  CHECK(sbatch.find("\"$plan/launch_torchtitan.sh\"") != std::string::npos);
  CHECK(sbatch.find("MEGATRON") == std::string::npos);
  const auto node = confirm_node_script(r);
  CHECK(node.find("#   TORCHTITAN=/path/to/torchtitan MASTER_ADDR=<node 0> NODE_RANK=<0..1> bash run_on_node.sh\n") != std::string::npos);
  CHECK(node.find("bash \"$plan/launch_torchtitan.sh\" > \"$plan/node$NODE_RANK.log\" 2>&1") != std::string::npos);
}
