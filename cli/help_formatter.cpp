#include "cli/help_formatter.hpp"

#include <sstream>

namespace parasim::cli {

std::string wrap_words(const std::string& text, std::size_t width) {
  std::string out, line;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

std::string WrappingFormatter::make_option_desc(const CLI::Option* opt) const {
  return wrap_words(CLI::Formatter::make_option_desc(opt), kHelpWidth - get_column_width());
}

std::string WrappingFormatter::make_subcommand(const CLI::App* sub) const {
  std::stringstream out;
  CLI::detail::format_help(out, sub->get_display_name(), wrap_words(sub->get_description(), kHelpWidth - get_column_width()), get_column_width());
  return out.str();
}

}  // namespace parasim::cli
