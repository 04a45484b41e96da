#include "cli/table.hpp"

#include <algorithm>

namespace parasim::cli {

// Code points, so "↔" counts as one column.
std::size_t display_width(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

namespace {

// The line a row of columns `w` wide takes, two spaces between columns.
std::size_t total_width(const std::vector<std::size_t>& w) {
  std::size_t total = 0;
  for (auto x : w) total += x;
  return total + 2 * (w.empty() ? 0 : w.size() - 1);
}

// The pieces of `text` a line may end after: each ", " or " · ", and within a piece that alone would
// not fit in `room` columns, each space.
std::vector<std::string> break_points(const std::string& text, std::size_t room) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t comma = text.find(", ", start), dot = text.find(" · ", start);
    std::size_t end = std::min(comma, dot);
    end = end == std::string::npos ? text.size() : end + (end == comma ? 2 : std::string(" · ").size());
    std::string item = text.substr(start, end - start);
    start = end;
    if (display_width(item) <= room) {
      items.push_back(std::move(item));
      continue;
    }
    for (std::size_t at = 0; at < item.size();) {
      const std::size_t space = item.find(' ', at);
      const std::size_t stop = space == std::string::npos ? item.size() : space + 1;
      items.push_back(item.substr(at, stop - at));
      at = stop;
    }
  }
  return items;
}

// `text` wrapped after ", " or " · " (or a space, in a piece too long for a line) so that no line
// (indent included) passes `columns` unless one word does.
std::string wrapped(const std::string& text, const std::string& indent, std::size_t columns) {
  std::string out, line = indent;
  const auto items = break_points(text, columns - std::min(columns, display_width(indent)));
  for (std::size_t i = 0; i < items.size(); ++i) {
    const bool last = i + 1 == items.size();
    if (display_width(line) > display_width(indent) && display_width(line) + display_width(items[i]) > columns + (last ? 0 : 1)) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
      line = indent;
    }
    line += items[i];
  }
  return out + line + "\n";
}

}  // namespace

Table::Table(std::vector<std::string> header, std::vector<Align> align) : header_(std::move(header)), align_(std::move(align)) {
  align_.resize(header_.size(), Align::left);
}

void Table::add(std::vector<std::string> row) {
  row.resize(header_.size());
  rows_.push_back(std::move(row));
  notes_.emplace_back();
}

void Table::add_note(const std::string& note) {
  if (!notes_.empty() && !note.empty()) notes_.back().push_back(note);
}

std::vector<std::size_t> Table::column_widths() const {
  std::vector<std::size_t> w(header_.size());
  for (std::size_t c = 0; c < header_.size(); ++c) {
    w[c] = display_width(header_[c]);
    for (const auto& r : rows_) w[c] = std::max(w[c], display_width(r[c]));
  }
  return w;
}

std::size_t Table::columns() const { return total_width(column_widths()); }

std::string Table::render() const {
  const auto w = column_widths();
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(w[c] - display_width(cells[c]), ' ');
      if (c > 0) out += "  ";
      out += align_[c] == Align::right ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  out += std::string(total_width(w), '-') + "\n";
  for (std::size_t i = 0; i < rows_.size(); ++i) {
    out += line(rows_[i]);
    for (const auto& note : notes_[i]) out += wrapped(note, "    ", kNoteWidth);
  }
  return out;
}

std::string labelled_lines(const std::string& label, const std::string& text, std::size_t columns) {
  const std::string indent(display_width(label), ' ');
  return label + wrapped(text, indent, columns).substr(indent.size());
}

}  // namespace parasim::cli
