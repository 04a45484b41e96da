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
  /// Columns the header and row lines take (notes wrap within kNoteWidth on their own).
  std::size_t columns() const;

  static constexpr std::size_t kNoteWidth = 120;

 private:
  std::vector<std::size_t> column_widths() const;

  std::vector<std::string> header_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::vector<std::string>> notes_;  ///< per row, in order
};

/// Columns `text` takes on a terminal: a multi-byte character ("·", "≤") counts as one.
std::size_t display_width(const std::string& text);

/// `text` after `label` (a line's fixed-width title, e.g. "Plan        "), wrapped after ", " or " · "
/// so that no line passes `columns`; the lines after the first start under the text.
std::string labelled_lines(const std::string& label, const std::string& text, std::size_t columns = Table::kNoteWidth);

}  // namespace parasim::cli
