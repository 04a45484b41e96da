#pragma once
// What every fuzz target shares: bad input must be an InputError (exit 2 in the CLI); anything else
// thrown is an internal error, which is a finding, so it aborts for libFuzzer to keep the input.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "core/error.hpp"

namespace parasim::fuzz {

template <typename F>
int expect_input_errors_only(F&& run) {
  try {
    run();
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error (not an InputError): %s\n", e.what());
    std::abort();
  }
  return 0;
}

/// A directory of this process beside links to the project's bundled folders, so that a fuzzed
/// scenario's relative references (../models/x.yaml, ../hardware/h100.yaml) resolve as in scenarios/jobs.
inline std::filesystem::path work_dir() {
  static const std::filesystem::path dir = [] {
    const auto root = std::filesystem::temp_directory_path() / ("parasim-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root / "jobs");
    for (const char* sub : {"models", "hardware", "clusters", "nodes", "profiles"}) {
      std::error_code ec;
      std::filesystem::create_directory_symlink(std::filesystem::path(PARASIM_SOURCE_DIR) / "scenarios" / sub, root / sub, ec);
    }
    return root / "jobs";
  }();
  return dir;
}

/// The input as a file in work_dir().
inline std::filesystem::path as_file(const uint8_t* data, size_t size, const std::string& name) {
  const auto path = work_dir() / name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

}  // namespace parasim::fuzz
