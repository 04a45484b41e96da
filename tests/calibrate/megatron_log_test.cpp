#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "calibrate/megatron_log.hpp"
#include "core/error.hpp"
#include "tests/calibrate/log_files.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {
using test::write_log;
}  // namespace

TEST_CASE("a Megatron-LM log measured on an H100: its argument dump, 30 step lines and 2 memory lines") {
  const auto log = read_megatron_log("tests/data/logs/megatron/h100_gpt0.7b_mb4.log");
  CHECK(log.argument("num_layers") == "12");
  CHECK(log.argument("transformer_impl") == "local");
  CHECK(log.argument("micro_batch_size") == "4");
  CHECK_FALSE(log.argument("padded_vocab_size"));  // printed as None: set after the dump
  CHECK(log.arguments.at("num_layers").line > 28);
  REQUIRE(log.steps.size() == 30);
  CHECK(log.steps.front().iteration == 1);
  CHECK(log.steps[24].iteration == 25);
  CHECK(log.steps[24].seconds == doctest::Approx(1.2710));
  REQUIRE(log.memory.size() == 2);
  CHECK(log.memory[1].max_allocated == doctest::Approx(26017.78));
  CHECK(log.memory[1].reserved == doctest::Approx(29084.0));
  CHECK(peak_allocated_mib(log) == doctest::Approx(26017.78));
  // The first 10 of 30 lines are warm-up; iterations 11-30 ran 1264.2-1271.0 ms.
  int used = 0;
  const double steady = steady_step_seconds(log, &used);
  CHECK(used == 20);
  CHECK(steady > 1.2642);
  CHECK(steady < 1.2710);
}

TEST_CASE("log variants: Megatron-DeepSpeed's annotated values, launcher prefixes, the 2020 memory line") {
  const auto path = write_log("parasim_megatron_variants.log",
                              "0: ------------------------ arguments ------------------------\n"
                              "0:   num_layers ...................................... 24..........................default\n"
                              "0:   hidden_size ..................................... 2048........................updated\n"
                              "0:   fp16 ............................................ True\n"
                              "0: -------------------- end of arguments ---------------------\n"
                              "0:  iteration        5/  120000 | elapsed time per iteration (ms): 16491.5 | learning rate: 0.000E+00 |\n"
                              "after 5 iterations memory (MB) | allocated: 10250.5 | max allocated: 12606.0 | reserved: 17482.0 | max reserved: 17482.0\n"
                              "0:  iteration       10/  120000 | elapsed time per iteration (ms): 1993.9 | learning rate: 0.000E+00 |\n"
                              "0:  iteration       15/  120000 | elapsed time per iteration (ms): 1978.1 | learning rate: 0.000E+00 |\n");
  const auto log = read_megatron_log(path);
  CHECK(log.argument("num_layers") == "24");
  CHECK(log.argument("hidden_size") == "2048");
  CHECK(log.argument("fp16") == "True");
  REQUIRE(log.steps.size() == 3);
  CHECK(log.steps[2].iteration == 15);
  CHECK(log.steps[2].line == 9);
  CHECK(peak_allocated_mib(log) == doctest::Approx(12606.0));
  int used = 0;
  CHECK(steady_step_seconds(log, &used) == doctest::Approx((1.9939 + 1.9781) / 2));  // the first of 3 dropped
  CHECK(used == 2);
}

TEST_CASE("a log without an argument dump, or without a step line, is a located error") {
  const auto no_dump = write_log("parasim_megatron_no_dump.log", " iteration 10/ 100 | elapsed time per iteration (ms): 356.2 |\n");
  CHECK_THROWS_WITH_AS(read_megatron_log(no_dump), doctest::Contains("no argument dump"), InputError);
  try {
    read_megatron_log(no_dump);
  } catch (const InputError& e) {
    CHECK(e.where().line == 1);
  }
  const auto no_steps = write_log("parasim_megatron_no_steps.log",
                                  "------------------------ arguments ------------------------\n"
                                  "  num_layers ...................................... 12\n"
                                  "-------------------- end of arguments ---------------------\n"
                                  "Traceback (most recent call last):\n");
  try {
    read_megatron_log(no_steps);
    FAIL("no step line should not read");
  } catch (const InputError& e) {
    CHECK(e.where().line == 4);
    CHECK(std::string(e.what()).find("no step line") != std::string::npos);
  }
  CHECK_THROWS_AS(read_megatron_log("tests/data/logs/megatron/nowhere.log"), InputError);
}

TEST_CASE("a multi-node run's logs read as one: rank 0's argument dump, the last rank's steps in order") {
  const std::string dump = "------------------------ arguments ------------------------\n"
                           "  micro_batch_size ................................ 4\n"
                           "-------------------- end of arguments ---------------------\n";
  const auto step = [](int iteration, const char* ms) {
    return " [2026-11-27] iteration        " + std::to_string(iteration) + "/       4 | elapsed time per iteration (ms): " + ms + " | x\n";
  };
  const auto node0 = write_log("parasim_node0.log", dump);
  const auto node1 = write_log("parasim_node1.log", step(3, "1100.0") + step(1, "2000.0") + step(2, "1000.0") + step(4, "1200.0"));
  const auto log = read_megatron_logs({node0, node1});
  CHECK(log.argument("micro_batch_size") == "4");
  REQUIRE(log.steps.size() == 4);
  CHECK(log.steps[0].iteration == 1);
  CHECK(log.steps[3].iteration == 4);
  CHECK(log.steps[2].seconds == doctest::Approx(1.1));
  CHECK_FALSE(log.failure);
  // The steady time drops the first third (iteration 1) and takes the median of the rest.
  int used = 0;
  CHECK(steady_step_seconds(log, &used) == doctest::Approx(1.1));
  CHECK(used == 3);
}

TEST_CASE("a run that failed says where: the exception's own line, not the Traceback above it") {
  const auto path = write_log("parasim_failed.log",
                              "------------------------ arguments ------------------------\n"
                              "  error_injection_type ............................ transient_error\n"
                              "-------------------- end of arguments ---------------------\n"
                              "[rank0]: Traceback (most recent call last):\n"
                              "[rank0]:   File \"pretrain_gpt.py\", line 536, in <module>\n"
                              "[rank0]: TypeError: unsupported operand type(s) for //: 'int' and 'NoneType'\n"
                              "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n");
  const std::string said = "the run failed before its first --log-interval, at " + path.string() + ":6: [rank0]: TypeError: unsupported";
  CHECK_THROWS_WITH_AS(read_megatron_log(path), doctest::Contains(said.c_str()), InputError);
  const auto oom = write_log("parasim_oom.log", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
  const std::string oom_said = "the run failed before it, at " + oom.string() + ":1: torch.OutOfMemoryError";
  CHECK_THROWS_WITH_AS(read_megatron_log(oom), doctest::Contains(oom_said.c_str()), InputError);
}
