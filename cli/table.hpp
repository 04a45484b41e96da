#pragma once
// Plain-text tables for the terminal: columns sized to their widest cell, numbers right-aligned,
// long per-row text wrapped under its row.
#include <string>
#include <vector>

namespace parasim::cli {

class Table {
 public:
  enum class Align { left, right };
  explicit Table(std::vector<std::string> header, std::vector<Align> align = {});
  void add(std::vector<std::string> row);
  /// Text under the last row added, indented and wrapped at commas to kNoteWidth columns: what
  /// would make a column too wide to read. Each note of a row starts a line of its own.
  void add_note(const std::string& note);
  std::string render() const;

  static constexpr std::size_t kNoteWidth = 120;

 private:
  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::vector<std::string>> notes_;  ///< per row, in order
};

}  // namespace parasim::cli
