#pragma once
// Why a training run stopped, as its log says it, whichever stack wrote the log.
#include <string>

namespace parasim::calibrate {

/// A line that says why a run stopped: the exception a rank raised ("[rank0]: TypeError: …",
/// "torch.OutOfMemoryError: CUDA out of memory…"), not the "Traceback" line above it, which says nothing.
bool is_failure_line(const std::string& line);

}  // namespace parasim::calibrate
