// libFuzzer target: the scenario loader (YAML with references, units, --set-style checks) and the
// plan and memory checks a loaded scenario goes through before it is simulated.
#include <cstdint>

#include "sim/scenario.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "workload/memory.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return parasim::fuzz::expect_input_errors_only([&] {
    const auto file = parasim::fuzz::as_file(data, size, "scenario.yaml");
    const auto s = parasim::sim::load_scenario(file);
    if (s.model && s.training && s.plan) {
      (void)parasim::workload::memory_per_stage(*s.model, *s.training, *s.plan, s.cluster.node.gpu.hbm_capacity);
    }
  });
}
