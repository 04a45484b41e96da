#include "core/error.hpp"

#include <fmt/format.h>

namespace parasim {

std::string format_input_error(const SourceLocation& where, const std::string& key_path, const std::string& message) {
  std::string out = where.file.empty() ? std::string("parasim") : where.file;
  if (where.line > 0) {
    out += fmt::format(":{}", where.line);
    if (where.column > 0) out += fmt::format(":{}", where.column);
  }
  out += ": error: ";
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  return out;
}

InputError::InputError(SourceLocation where, std::string key_path, std::string message)
    : std::runtime_error(format_input_error(where, key_path, message)),
      where_(std::move(where)),
      key_path_(std::move(key_path)),
      message_(std::move(message)) {}

}  // namespace parasim
