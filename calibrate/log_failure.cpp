#include "calibrate/log_failure.hpp"

#include <regex>

namespace parasim::calibrate {

bool is_failure_line(const std::string& line) {
  static const std::regex exception(R"((^|[\s:\]])[A-Za-z_][\w.]*(Error|Exception)(: |$))");
  return line.find("CUDA out of memory") != std::string::npos || std::regex_search(line, exception);
}

}  // namespace parasim::calibrate
