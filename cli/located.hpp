#pragma once
// Errors the simulator raises without knowing the file (an iteration past its clock) are the
// scenario's: they are given its name, so that every exit-2 line says where.
#include <string>

#include "core/error.hpp"

namespace parasim::cli {

template <typename F>
auto located(const std::string& scenario, F&& run) {
  try {
    return run();
  } catch (const InputError& e) {
    if (!e.where().file.empty()) throw;
    throw InputError({scenario, 1, 1}, e.key_path(), e.message());
  }
}

}  // namespace parasim::cli
