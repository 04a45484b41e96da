#include "cli/residuals_table.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>

#include "cli/table.hpp"
#include "sim/residuals.hpp"

namespace parasim::cli {
namespace {

constexpr std::size_t kColumns = Table::kNoteWidth;

// One table's groups: each one's key (a value per field) and its figures.
struct GroupedRows {
  std::vector<std::vector<std::string>> keys, figures;
};

// A table of the groups with the first `keys` fields as columns and the rest under each row.
Table grouped(const std::vector<std::string>& fields, const std::vector<std::string>& figure_header, const GroupedRows& g, std::size_t keys) {
  std::vector<std::string> header(fields.begin(), fields.begin() + static_cast<std::ptrdiff_t>(keys));
  header.insert(header.end(), figure_header.begin(), figure_header.end());
  std::vector<Table::Align> align(keys, Table::Align::left);
  align.resize(header.size(), Table::Align::right);
  Table t(header, align);
  for (std::size_t r = 0; r < g.keys.size(); ++r) {
    std::vector<std::string> row(g.keys[r].begin(), g.keys[r].begin() + static_cast<std::ptrdiff_t>(keys));
    row.insert(row.end(), g.figures[r].begin(), g.figures[r].end());
    t.add(row);
    std::vector<std::string> rest;
    for (std::size_t c = keys; c < fields.size(); ++c) rest.push_back(fields[c] + " " + g.keys[r][c]);
    t.add_note(fmt::format("{}", fmt::join(rest, " · ")));
  }
  return t;
}

// As many leading fields as columns as fit within kColumns (at least one).
std::string grouped_table(const std::vector<std::string>& fields, const std::vector<std::string>& figure_header, const GroupedRows& g) {
  for (std::size_t keys = fields.size(); keys > 1; --keys) {
    const auto t = grouped(fields, figure_header, g, keys);
    if (t.columns() <= kColumns) return t.render();
  }
  return grouped(fields, figure_header, g, 1).render();
}

std::string step_time_table(const std::vector<sim::ResidualGroup>& groups, const std::vector<std::string>& fields) {
  GroupedRows g;
  for (const auto& group : groups) {
    g.keys.push_back(group.key);
    g.figures.push_back({fmt::format("{}", group.rows), fmt::format("{:.1f}%", 100 * group.mape), fmt::format("{:+.1f}%", 100 * group.bias),
                         fmt::format("{:.1f}%", 100 * group.rule_of_thumb_mape),
                         group.intervals ? fmt::format("{:.0f}%", 100.0 * group.covered / group.intervals) : "-"});
  }
  return grouped_table(fields, {"rows", "MAPE", "bias", "rule of thumb", "80% covers"}, g);
}

// Only the groups with a row that prints a peak: the others have nothing to compare.
std::string memory_table(const std::vector<sim::ResidualGroup>& groups, const std::vector<std::string>& fields) {
  GroupedRows g;
  for (const auto& group : groups) {
    if (group.memory.rows == 0) continue;
    g.keys.push_back(group.key);
    g.figures.push_back({fmt::format("{}", group.memory.rows), fmt::format("{:.1f}%", 100 * group.memory.median),
                         fmt::format("{:.1f}%", 100 * group.memory.worst), fmt::format("{:+.1f}%", 100 * group.memory.bias)});
  }
  return grouped_table(fields, {"rows", "median error", "worst", "bias"}, g);
}

// "By f1, f2, … (what)" within kColumns: the fields wrap after a comma, the parenthesis on its own
// line when it does not fit after them.
std::string title(const std::string& lead, const std::vector<std::string>& fields, const std::string& what) {
  std::string out, line = lead;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::string item = fields[i] + (i + 1 < fields.size() ? "," : "");
    if (display_width(line) + 1 + display_width(item) > kColumns) {
      out += line + "\n";
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += item;
  }
  if (display_width(line) + 1 + display_width(what) > kColumns) {
    out += line + "\n";
    line.clear();
  }
  if (!line.empty()) line += ' ';
  return out + line + what + "\n";
}

}  // namespace

std::string residuals_text(const sim::ValidationReport& report, const std::vector<std::string>& fields) {
  return fmt::format("\n{}{}", title("By", fields, "(bias: mean signed error, negative = predicted too fast)"),
                     step_time_table(sim::group_residuals(report, fields), fields));
}

std::string memory_residuals_text(const sim::ValidationReport& report, const std::vector<std::string>& fields) {
  if (report.memory.rows == 0) return "";
  return fmt::format("\n{}{}", title("Peak memory by", fields, "(the groups with rows printing a peak; bias: mean signed error)"),
                     memory_table(sim::group_residuals(report, fields), fields));
}

}  // namespace parasim::cli
