#pragma once
// Errors in what a user wrote. Every one names where (file, line, column), which key (its dotted
// path from the scenario root) and what is wrong, and prints as one line:
//   FILE:LINE:COL: error: key.path: what is wrong
// Library code throws InputError; only main turns it into exit code 2.
#include <stdexcept>
#include <string>

namespace parasim {

struct SourceLocation {
  std::string file;  ///< as the user named it, or "--set" for a command-line override
  int line = 0;      ///< 1-based; 0 when unknown
  int column = 0;    ///< 1-based; 0 when unknown
};

class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key_path, std::string message);

  const SourceLocation& where() const { return where_; }
  const std::string& key_path() const { return key_path_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string key_path_;
  std::string message_;
};

/// "FILE:LINE:COL: error: key.path: message", leaving out the parts that are unknown.
std::string format_input_error(const SourceLocation& where, const std::string& key_path, const std::string& message);

}  // namespace parasim
