#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "calibrate/confirm_logs.hpp"

using namespace parasim::calibrate;

namespace {

// A plan folder with one node log: the dump for micro-batch `mb`, then `steps` step lines of `ms`.
void write_plan(const std::filesystem::path& dir, const std::string& plan, int mb, int steps, double ms) {
  std::filesystem::create_directories(dir / plan);
  std::ofstream out(dir / plan / "node0.log");
  out << "------------------------ arguments ------------------------\n"
      << "  micro_batch_size ................................ " << mb << "\n"
      << "  sequence_parallel ............................... True\n"
      << "  lr .............................................. 0.0003\n"
      << "-------------------- end of arguments ---------------------\n";
  for (int i = 1; i <= steps; ++i) out << " iteration " << i << "/ " << steps << " | elapsed time per iteration (ms): " << ms << " | x\n";
}

ConfirmedPlan plan(const std::string& dir, double predicted_s, int mb) {
  return {dir, dir, predicted_s, 1000, {{"--micro-batch-size", std::to_string(mb)}, {"--sequence-parallel", ""}}};
}
}  // namespace

TEST_CASE("an argument's name in the dump, and a dump that shows another plan's arguments") {
  CHECK(argument_dest("--tensor-model-parallel-size") == "tensor_model_parallel_size");
  const std::vector<std::pair<std::string, std::string>> dump = {
      {"micro_batch_size", "4"}, {"lr", "0.0003"}, {"sequence_parallel", "True"}, {"cp_comm_type", "['p2p']"}};
  CHECK_FALSE(argument_mismatch({{"--micro-batch-size", "4"}, {"--lr", "3e-4"}, {"--sequence-parallel", ""}}, dump));
  CHECK_FALSE(argument_mismatch({{"--cp-comm-type", "a2a"}, {"--not-in-the-dump", "1"}}, dump));  // lists and unknowns: not compared
  CHECK(argument_mismatch({{"--micro-batch-size", "8"}}, dump) == "micro_batch_size is 4, not 8");
}

TEST_CASE("confirmed plans ranked by measured time; pairs predicted equally fast order nothing") {
  const auto dir = std::filesystem::temp_directory_path() / "parasim_confirm_logs_test";
  std::filesystem::remove_all(dir);
  write_plan(dir, "plan-01", 16, 12, 1100);
  write_plan(dir, "plan-02", 8, 12, 1000);  // measured faster than the predicted fastest
  write_plan(dir, "plan-03", 4, 12, 1200);
  write_plan(dir, "plan-04", 4, 12, 1150);
  const auto r = read_confirmed({plan("plan-01", 0.60, 16), plan("plan-02", 0.61, 8), plan("plan-03", 0.62, 4), plan("plan-04", 0.62, 4)}, dir);
  REQUIRE(r.measured.size() == 4);
  CHECK(*r.measured[0].measured_s == doctest::Approx(1.1));
  CHECK(r.measured[0].steps_used == 8);  // 12 steps, the first third dropped
  CHECK(r.fastest == 1u);
  // Six pairs: plan-03/plan-04 predicted alike; of the other five, 1<2 is measured the other way round.
  CHECK(r.tied == 1);
  CHECK(r.pairs == 5);
  CHECK(r.agreeing == 4);
}

TEST_CASE("a plan not run, and a plan whose logs are another plan's run, have no measured time and say why") {
  const auto dir = std::filesystem::temp_directory_path() / "parasim_confirm_logs_test_problems";
  std::filesystem::remove_all(dir);
  write_plan(dir, "plan-01", 8, 6, 1000);  // plan-01 was to run micro-batch 16
  const auto r = read_confirmed({plan("plan-01", 0.6, 16), plan("plan-02", 0.7, 8)}, dir);
  CHECK_FALSE(r.measured[0].measured_s);
  CHECK(r.measured[0].problem == "the logs are another plan's run: micro_batch_size is 8, not 16");
  CHECK_FALSE(r.measured[1].measured_s);
  CHECK(r.measured[1].problem == "not run: no plan-02/*.log");
  CHECK_FALSE(r.fastest);
  CHECK(r.pairs == 0);
}

TEST_CASE("a torchtitan plan's node 0 log: its mesh and batch checked against the job config, its step time from tps") {
  const auto dir = std::filesystem::temp_directory_path() / "parasim_confirm_torchtitan_test";
  std::filesystem::remove_all(dir);
  for (const char* p : {"plan-01", "plan-02"}) {
    std::filesystem::create_directories(dir / p);
    std::filesystem::copy_file("tests/data/logs/torchtitan/h200_llama3_1b_b4_s4096.log", dir / p / "node0.log");
  }
  const auto settings = torchtitan_settings(read_torchtitan_log(dir / "plan-01" / "node0.log"));
  REQUIRE(settings.size() == 7);
  CHECK(settings[1] == std::pair<std::string, std::string>{"data_parallel_shard_degree", "1"});  // a 0-D mesh: every degree 1
  CHECK(settings[5] == std::pair<std::string, std::string>{"local_batch_size", "4"});
  CHECK(settings[6] == std::pair<std::string, std::string>{"seq_len", "4096"});

  const ConfirmedPlan same{"plan-01", "mb4", 0.25, 40000, {{"data_parallel_shard_degree", "1"}, {"local_batch_size", "4"}, {"seq_len", "4096"}}, "torchtitan"};
  const ConfirmedPlan other{"plan-02", "mb8", 0.5, 40000, {{"local_batch_size", "8"}}, "torchtitan"};
  const auto r = read_confirmed({same, other}, dir);
  REQUIRE(r.measured[0].measured_s.has_value());
  CHECK(*r.measured[0].measured_s == doctest::Approx(4.0 * 4096 / 57507.5).epsilon(1e-4));  // steps 11-30's median tps
  CHECK(r.measured[0].steps_used == 20);
  CHECK(*r.measured[0].peak_mib == doctest::Approx(43.34 * 1024));
  CHECK_FALSE(r.measured[1].measured_s.has_value());
  CHECK(r.measured[1].problem == "the logs are another plan's run: local_batch_size is 4, not 8");
  CHECK(r.fastest == 0u);
}
