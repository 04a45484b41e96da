#pragma once
// --help within 120 columns: CLI11 prints each option's and subcommand's description on one line;
// this formatter wraps them at spaces under their column (CLI11 indents the lines after a newline).
#include <CLI/CLI.hpp>
#include <memory>

namespace parasim::cli {

inline constexpr std::size_t kHelpWidth = 120;

class WrappingFormatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* opt) const override;
  std::string make_subcommand(const CLI::App* sub) const override;
};

/// `text` broken at spaces into lines of at most `width` columns (a longer word stands alone).
std::string wrap_words(const std::string& text, std::size_t width);

}  // namespace parasim::cli
