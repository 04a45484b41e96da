#include "sim/residuals.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <regex>

namespace parasim::sim {

namespace {

// The row's measured MFU: the simulated MFU scaled from the predicted time to the measured one.
double measured_mfu(const RowResult& r) { return r.mfu * r.predicted_s / r.run->measured_iteration_s; }

bool counted(const RowResult& r) { return !r.skipped && r.mfu > 0 && r.run->measured_iteration_s > 0; }

std::string bucket(double x, std::initializer_list<std::pair<double, const char*>> bounds, const char* above) {
  for (const auto& [bound, name] : bounds) {
    if (x <= bound) return name;
  }
  return above;
}

}  // namespace

double fit_rule_of_thumb(const std::vector<RowResult>& rows) {
  // Σ |a_i / c − 1| = Σ a_i |1/c − 1/a_i|: a weighted L1 in x = 1/c, least at the weighted median of
  // 1/a_i with weights a_i.
  std::vector<std::pair<double, double>> points;  // (1/a, a)
  double total = 0;
  for (const auto& r : rows) {
    if (!counted(r)) continue;
    const double a = measured_mfu(r);
    points.emplace_back(1 / a, a);
    total += a;
  }
  if (points.empty()) return 0;
  std::sort(points.begin(), points.end());
  double seen = 0;
  for (const auto& [inverse, weight] : points) {
    seen += weight;
    if (seen >= total / 2) return 1 / inverse;
  }
  return 1 / points.back().first;
}

void apply_rule_of_thumb(std::vector<RowResult>& rows, double mfu) {
  for (auto& r : rows) r.rule_of_thumb_error = counted(r) && mfu > 0 ? measured_mfu(r) / mfu - 1 : 0.0;
}

std::string release_of(const MeasuredRun& run) {
  static const std::regex nvidia(R"((?:^|[^\d.])(\d{2}\.\d{2})(?:\.\d+)?(?![\d.]))");
  static const std::regex megatron_core(R"(\br(\d+\.\d+)(?:\.\d+)?\b)");
  static const std::regex year(R"(\b(20(?:1[5-9]|2[0-9]))\b)");  // 2015-2029: not 2048 tokens or GPUs
  std::smatch m;
  if (std::regex_search(run.source, m, nvidia)) return m[1];
  if (std::regex_search(run.source, m, megatron_core)) return fmt::format("r{}", m[1].str());
  const std::string dated = run.source + " " + run.notes;
  if (std::regex_search(dated, m, year)) return m[1];
  return "unstated";
}

bool is_residual_field(std::string_view field) { return std::find(std::begin(kResidualFields), std::end(kResidualFields), field) != std::end(kResidualFields); }

std::string row_property(const RowResult& r, const std::string& file, std::string_view field) {
  const auto& run = *r.run;
  const auto& p = r.chosen;
  if (field == "file") return file;
  if (field == "family") return run.family;
  if (field == "stack") return std::string(software_stack_name(r.stack));
  if (field == "release") return release_of(run);
  if (field == "gpu") return run.gpu;
  if (field == "precision") return run.precision;
  if (field == "attention") return run.attention;
  if (field == "arch") return run.arch;
  if (field == "tp") return p.tp == 1 ? "tp1" : p.tp <= 8 ? "tp2-8" : "tp>8";
  if (field == "pp") return p.pp == 1 ? "pp1" : "pp>1";
  if (field == "cp") return p.cp == 1 ? "cp1" : "cp>1";
  if (field == "ep") return p.ep == 1 ? "ep1" : "ep>1";
  if (field == "zero") return fmt::format("zero{}", p.zero);
  if (field == "schedule") return std::string(workload::schedule_name(p.schedule));
  if (field == "seq") return bucket(run.seq_len, {{2048, "<=2K"}, {4096, "4K"}, {8192, "8K"}, {32768, "16-32K"}}, ">32K");
  if (field == "gpus") return bucket(run.gpus, {{64, "<=64"}, {512, "65-512"}, {4096, "513-4096"}}, ">4096");
  if (field == "comm") return bucket(r.exposed_comm_share, {{0.1, "<10%"}, {0.25, "10-25%"}, {0.5, "25-50%"}}, ">=50%");
  return "";
}

std::vector<ResidualGroup> group_residuals(const ValidationReport& report, const std::vector<std::string>& fields) {
  std::map<std::vector<std::string>, ResidualGroup> groups;
  std::map<std::vector<std::string>, std::vector<const RowResult*>> members;
  for (std::size_t i = 0; i < report.rows.size(); ++i) {
    const auto& r = report.rows[i];
    if (r.skipped) continue;
    std::vector<std::string> key;
    for (const auto& f : fields) key.push_back(row_property(r, i < report.file_of.size() ? report.file_of[i] : "", f));
    members[key].push_back(&r);
    auto& g = groups[key];
    g.key = key;
    ++g.rows;
    g.mape += std::fabs(r.error);
    g.bias += r.error;
    g.rule_of_thumb_mape += std::fabs(r.rule_of_thumb_error);
    if (r.interval) {
      ++g.intervals;
      if (r.covered()) ++g.covered;
    }
  }
  std::vector<ResidualGroup> out;
  for (auto& [key, g] : groups) {
    g.mape /= g.rows;
    g.bias /= g.rows;
    g.rule_of_thumb_mape /= g.rows;
    g.memory = check_memory(members[key]);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace parasim::sim
