// libFuzzer target: --set overrides on the lab job, one "key.path=value" a line, as the command line
// gives them (values in human units, references to bundled files, lists).
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "sim/scenario.hpp"
#include "tests/fuzz/fuzz_input.hpp"
#include "workload/memory.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return parasim::fuzz::expect_input_errors_only([&] {
    std::vector<std::string> overrides;
    std::istringstream lines(std::string(reinterpret_cast<const char*>(data), size));
    for (std::string line; std::getline(lines, line);) overrides.push_back(line);
    const auto s = parasim::sim::load_scenario(std::string(PARASIM_SOURCE_DIR) + "/scenarios/jobs/llama2-7b-lab.yaml", overrides);
    if (s.model && s.training && s.plan) {
      (void)parasim::workload::memory_per_stage(*s.model, *s.training, *s.plan, s.cluster.node.gpu.hbm_capacity);
    }
  });
}
