// libFuzzer target: the profiler-trace importer (Kineto JSON, gzip-compressed or not).
#include <cstdint>
#include <string_view>

#include "calibrate/kineto_trace.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return parasim::fuzz::expect_input_errors_only([&] {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    const bool gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
    const auto json = gzip ? parasim::calibrate::gunzip(bytes, "trace.json.gz") : std::string(bytes);
    (void)parasim::calibrate::parse_kineto_trace(json, "trace.json");
  });
}
