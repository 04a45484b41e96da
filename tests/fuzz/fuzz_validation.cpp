// libFuzzer target: the reader of published training runs (the validation row format).
#include <cstdint>

#include "sim/measured_run.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return parasim::fuzz::expect_input_errors_only([&] { (void)parasim::sim::read_measured_runs(parasim::fuzz::as_file(data, size, "runs.yaml")); });
}
