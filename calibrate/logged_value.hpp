#pragma once
// A value a training log printed, as text, and the line it is on (for errors at that line).
#include <string>

namespace parasim::calibrate {

struct LoggedValue {
  std::string value;  ///< as printed: "4096", "1.3", "None", "'causal'", "null"
  int line = 0;
};

}  // namespace parasim::calibrate
