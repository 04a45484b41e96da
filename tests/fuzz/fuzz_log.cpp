// libFuzzer target: the training-log readers (Megatron-LM, torchtitan, NeMo) and the runs they make,
// as calibrate from-log dispatches a file: whatever a log says, an InputError at its line or a run.
#include <cstdint>

#include "calibrate/megatron_log.hpp"
#include "calibrate/nemo_log.hpp"
#include "calibrate/torchtitan_log.hpp"
#include "sim/megatron_log_run.hpp"
#include "sim/nemo_log_run.hpp"
#include "sim/torchtitan_log_run.hpp"
#include "tests/fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parasim;
  return fuzz::expect_input_errors_only([&] {
    const auto file = fuzz::as_file(data, size, "train.log");
    const sim::LogCluster cluster{"h100-sxm5-80gb", 8, 400.0};
    if (calibrate::looks_like_torchtitan_log(file)) {
      (void)sim::torchtitan_log_run(calibrate::read_torchtitan_log(file), cluster);
    } else if (calibrate::looks_like_nemo_log(file)) {
      (void)sim::nemo_log_run(calibrate::read_nemo_log(file), cluster);
    } else {
      (void)sim::megatron_log_run(calibrate::read_megatron_log(file), cluster);
    }
  });
}
