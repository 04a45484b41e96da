// libFuzzer target: the Hugging Face config.json importer.
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_input.hpp"
#include "workload/hf_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return parasim::fuzz::expect_input_errors_only(
      [&] { (void)parasim::workload::import_hf_config_text(std::string(reinterpret_cast<const char*>(data), size), "config.json"); });
}
