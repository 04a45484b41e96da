#pragma once
// Training logs written for a test, in the system's temporary directory.
#include <filesystem>
#include <fstream>
#include <string>

namespace parasim::test {

inline std::filesystem::path write_log(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace parasim::test
