#include "cli/validate_report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/prediction_interval.hpp"
#include "core/error.hpp"
#include "sim/residuals.hpp"

namespace parasim::cli {
namespace {

nlohmann::json summary_json(const sim::Summary& s) {
  return {{"rows", s.rows},           {"simulated", s.simulated},        {"coverage", s.rows ? double(s.simulated) / s.rows : 0.0},
          {"mape", s.mape},           {"median_error", s.median},        {"worst_error", s.worst},
          {"spearman", s.spearman},   {"plan_order_pairs", s.pairs},     {"plan_order_right", s.ordered},
          {"rule_of_thumb_mape", s.rule_of_thumb_mape}, {"intervals", s.intervals},
          {"interval_coverage", s.intervals ? double(s.covered) / s.intervals : 0.0}};
}

nlohmann::json errors_json(const LoadedRows& loaded) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : loaded.errors) {
    const auto& w = e.error.where();
    out.push_back({{"id", e.id},
                   {"file", w.file},
                   {"line", w.line},
                   {"column", w.column},
                   {"key", e.error.key_path()},
                   {"message", e.error.message()},
                   {"error", e.error.what()}});
  }
  return out;
}


}  // namespace

std::string bundled_hardware_dir() { return std::string(PARASIM_SOURCE_DIR) + "/scenarios/hardware"; }

int skipped_rows(const sim::ValidationReport& report) {
  return static_cast<int>(std::count_if(report.rows.begin(), report.rows.end(), [](const sim::RowResult& r) { return r.skipped.has_value(); }));
}

LoadedRows load_rows(const std::vector<std::string>& files) {
  LoadedRows out;
  for (const auto& f : files) {
    auto read = sim::read_measured_runs(f);
    for (auto& r : read.runs) {
      out.runs.push_back(std::move(r));
      out.file_of.push_back(f);
    }
    for (auto& e : read.errors) {
      out.errors.push_back(std::move(e));
      out.error_file.push_back(f);
    }
  }
  return out;
}

std::vector<std::string> residual_fields(const std::string& by) {
  std::vector<std::string> fields;
  if (by.empty()) return fields;
  std::size_t start = 0;
  while (true) {
    const auto comma = by.find(',', start);
    const auto field = by.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!sim::is_residual_field(field)) {
      throw InputError({"--by", 0, 0}, "by", fmt::format("'{}' is not a row property; use {}", field, fmt::join(sim::kResidualFields, ", ")));
    }
    fields.push_back(field);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

nlohmann::json memory_json(const sim::MemoryCheck& m) {
  return {{"rows", m.rows}, {"median_error", m.median}, {"worst_error", m.worst}, {"bias", m.bias}};
}

nlohmann::json residuals_json(const sim::ValidationReport& report, const std::vector<std::string>& fields) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : sim::group_residuals(report, fields)) {
    nlohmann::json key = nlohmann::json::object();
    for (std::size_t i = 0; i < fields.size(); ++i) key[fields[i]] = g.key[i];
    groups.push_back({{"key", key}, {"rows", g.rows}, {"mape", g.mape}, {"bias", g.bias}, {"rule_of_thumb_mape", g.rule_of_thumb_mape},
                      {"interval_coverage", g.intervals ? double(g.covered) / g.intervals : 0.0}});
    if (g.memory.rows > 0) groups.back()["memory"] = memory_json(g.memory);
  }
  return {{"fields", fields}, {"groups", groups}};
}

nlohmann::json validate_json(const LoadedRows& loaded, const sim::ValidationReport& report, const std::vector<std::string>& fields) {
  nlohmann::json rows = nlohmann::json::array(), skipped = nlohmann::json::array();
  for (const auto& r : report.rows) {
    if (r.skipped) {
      skipped.push_back({{"id", r.run->id}, {"reason", *r.skipped}});
      continue;
    }
    rows.push_back({{"id", r.run->id},
                    {"family", r.run->family},
                    {"measured_iteration_s", r.run->measured_iteration_s},
                    {"predicted_iteration_s", r.predicted_s},
                    {"error", r.error},
                    {"rule_of_thumb_error", r.rule_of_thumb_error},
                    {"exposed_comm_share", r.exposed_comm_share},
                    {"fits", r.fits},
                    {"plan", r.plan},
                    {"filled", r.filled},
                    {"predicted_memory_bytes", r.predicted_memory_bytes}});
    if (r.run->published_memory_bytes) rows.back()["published_memory_bytes"] = *r.run->published_memory_bytes;
    if (r.memory_error) {
      rows.back()["memory_error"] = *r.memory_error;
      rows.back()["memory_kind"] = sim::printed_memory_name(r.memory_kind);
    }
    if (r.interval) rows.back()["interval"] = interval_json(*r.interval);
    rows.back()["bubble_share"] = r.features.bubble_share;
    rows.back()["gpus"] = r.features.gpus;
    rows.back()["fp8"] = r.features.fp8;
    rows.back()["stack"] = sim::software_stack_name(r.stack);
  }
  nlohmann::json families = nlohmann::json::object(), files = nlohmann::json::object();
  for (const auto& [k, v] : report.families) families[k] = summary_json(v);
  for (const auto& [k, v] : report.files) files[k] = summary_json(v);
  nlohmann::json memory = memory_json(report.memory);
  memory["files"] = nlohmann::json::object();
  memory["families"] = nlohmann::json::object();
  for (const auto& [k, v] : report.memory_files) memory["files"][k] = memory_json(v);
  for (const auto& [k, v] : report.memory_families) memory["families"][k] = memory_json(v);
  auto summary = summary_json(report.overall);
  summary["skipped"] = skipped_rows(report);
  summary["errors"] = loaded.errors.size();
  nlohmann::json doc{{"policy", sim::kFillPolicy}, {"rows", rows},   {"skipped", skipped},       {"errors", errors_json(loaded)},
                     {"summary", summary},      {"files", files}, {"families", families}, {"memory", memory},
                     {"rule_of_thumb", {{"mfu", report.rule_of_thumb_mfu}, {"mape", report.overall.rule_of_thumb_mape}}}};
  if (!fields.empty()) doc["by"] = residuals_json(report, fields);
  return doc;
}

}  // namespace parasim::cli
