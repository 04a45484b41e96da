#include "cli/calibrate_from_log.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "calibrate/profile_yaml.hpp"
#include "cli/table.hpp"
#include "core/bundled_files.hpp"
#include "core/error.hpp"
#include "core/schema.hpp"
#include "core/suggest.hpp"
#include "core/units.hpp"
#include "sim/log_fit.hpp"
#include "sim/megatron_log_run.hpp"
#include "sim/nemo_log_run.hpp"
#include "sim/torchtitan_log_run.hpp"
#include "sim/validation.hpp"
#include "topology/gpu_spec.hpp"

namespace parasim::cli {
namespace {

// A log as read, whichever stack wrote it.
struct ReadLog {
  struct Source {
    std::filesystem::path file;
    std::size_t step_lines = 0, memory_lines = 0;
    std::string stack;    ///< "Megatron-LM", "torchtitan", "NeMo"
    sim::PrintedMemory memory = sim::PrintedMemory::allocated;  ///< what its memory lines give
  } log;
  std::string memory_counted() const { return log.memory_lines == 0 ? "none" : fmt::format("max {}", sim::printed_memory_name(log.memory)); }
  sim::LogRun run;
};

ReadLog read_log(const std::filesystem::path& file, const sim::LogCluster& cluster) {
  if (calibrate::looks_like_torchtitan_log(file)) {
    const auto log = calibrate::read_torchtitan_log(file);
    std::size_t memory = 0;
    for (const auto& s : log.steps) memory += s.memory_gib.has_value();
    return {{file, log.steps.size(), memory, "torchtitan", *sim::memory_printed_by(sim::SoftwareStack::torchtitan)}, sim::torchtitan_log_run(log, cluster)};
  }
  if (calibrate::looks_like_nemo_log(file)) {
    const auto log = calibrate::read_nemo_log(file);
    return {{file, log.steps.size(), 0, "NeMo", sim::PrintedMemory::allocated}, sim::nemo_log_run(log, cluster)};
  }
  const auto log = calibrate::read_megatron_log(file);
  return {{file, log.steps.size(), log.memory.size(), "Megatron-LM", sim::PrintedMemory::allocated}, sim::megatron_log_run(log, cluster)};
}

/// The --gpu name as a bundled hardware file, by the rule scenario files name them (core/bundled_files.hpp).
std::string resolve_gpu(const std::string& gpu, const std::filesystem::path& dir) {
  const auto found = find_bundled_file(dir, gpu);
  if (found.file) return found.file->stem().string();
  const std::string what = found.matches.empty() ? fmt::format("is not a bundled GPU{}", did_you_mean(gpu, found.names))
                                                 : fmt::format("names several bundled GPUs: {}", fmt::join(found.matches, ", "));
  throw InputError({"--gpu", 0, 0}, {}, fmt::format("'{}' {}; bundled: {}", gpu, what, fmt::join(found.names, ", ")));
}

std::string signed_percent(double x) { return fmt::format("{:+.1f}%", 100 * x); }

std::string model_line(const sim::MeasuredRun& r) {
  std::string s = fmt::format("{} {} layers, hidden {}, {} heads", r.arch, r.layers, r.hidden, r.heads);
  if (r.kv_heads) s += fmt::format(" ({} kv)", *r.kv_heads);
  if (r.ffn_hidden) s += fmt::format(", ffn {}", *r.ffn_hidden);
  if (r.experts) s += fmt::format(", {} experts top {}", *r.experts, r.top_k.value_or(0));
  if (r.vocab) s += fmt::format(", vocab {}", *r.vocab);
  return s + fmt::format(", seq {}, {} {}, dropout {:g}", r.seq_len, r.precision, r.attention, r.dropout.value_or(0));
}

std::string text_report(const std::vector<ReadLog>& logs, const sim::ValidationReport& report) {
  Table t({"log", "GPUs", "measured", "predicted", "error", "peak printed", "modelled", "error"},
          {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right,
           Table::Align::right, Table::Align::right});
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto& l = logs[i];
    const auto& row = report.rows[i];
    const auto& r = l.run.run;
    const std::string printed = r.published_memory_bytes ? format_bytes(Bytes(*r.published_memory_bytes)) : "-";
    if (row.skipped) {
      t.add({r.id, fmt::format("{}", r.gpus), format_duration(Seconds(r.measured_iteration_s)), "-", "-", printed, "-", "-"});
      t.add_note("not simulated: " + *row.skipped);
    } else {
      t.add({r.id, fmt::format("{}", r.gpus), format_duration(Seconds(r.measured_iteration_s)), format_duration(Seconds(row.predicted_s)),
             signed_percent(row.error), printed, format_bytes(Bytes(row.predicted_memory_bytes)),
             row.memory_error ? signed_percent(*row.memory_error) : "-"});
      t.add_note(row.plan + (row.fits ? "" : " · does not fit"));
      if (r.optimizer_kernel == workload::OptimizerKernel::foreach) t.add_note("Adam: torch.optim's foreach (the log: no Transformer Engine or apex)");
    }
    t.add_note(model_line(r));
    const std::string memory = l.log.memory_lines == 0 ? std::string("no memory lines")
                                                       : fmt::format("{} memory lines ({})", l.log.memory_lines, l.memory_counted());
    t.add_note(fmt::format("{}: {} step lines, measured = median of the last {}; {}", l.log.file.string(), l.log.step_lines, l.run.steps_used, memory));
    for (const auto& n : l.run.notes) t.add_note("approximate: " + n);
  }
  return t.render() +
         "\nThe plan, model and precision are the log's: Megatron-LM's argument dump, torchtitan's model, mesh and start\n"
         "lines, NeMo's experiment configuration; fields it cannot give (the fabric, the GPU) are --gpu, --gpus-per-node\n"
         "and --nic-gbps, and the rest of validate's fill policy (parasim validate --help).\n";
}

nlohmann::json json_report(const std::vector<ReadLog>& logs, const sim::ValidationReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto& l = logs[i];
    const auto& row = report.rows[i];
    const auto& r = l.run.run;
    nlohmann::json j = {{"log", l.log.file.string()},
                        {"id", r.id},
                        {"gpus", r.gpus},
                        {"model", model_line(r)},
                        {"stack", l.log.stack},
                        {"step_lines", l.log.step_lines},
                        {"steps_used", l.run.steps_used},
                        {"measured_iteration_s", r.measured_iteration_s},
                        {"notes", l.run.notes}};
    j["peak_printed_bytes"] = r.published_memory_bytes ? nlohmann::json(*r.published_memory_bytes) : nlohmann::json(nullptr);
    j["peak_counts"] = l.memory_counted();
    if (row.skipped) {
      j["skipped"] = *row.skipped;
    } else {
      j["plan"] = row.plan;
      j["predicted_iteration_s"] = row.predicted_s;
      j["error"] = row.error;
      j["fits"] = row.fits;
      j["predicted_memory_bytes"] = row.predicted_memory_bytes;
      j["memory_error"] = row.memory_error ? nlohmann::json(*row.memory_error) : nlohmann::json(nullptr);
    }
    out.push_back(j);
  }
  return {{"logs", out}};
}

// Runners write one log per node into each plan's folder (plan-01/node0.log, plan-02/node0.log): where
// file names repeat, a log is named by its folder too.
void name_logs_apart(std::vector<ReadLog>& logs) {
  std::map<std::string, int> seen;
  for (const auto& l : logs) ++seen[l.run.run.id];
  for (auto& l : logs) {
    if (seen[l.run.run.id] > 1) l.run.run.id = (l.log.file.parent_path().filename() / l.log.file.stem()).string();
  }
}

std::vector<ReadLog> read_logs(const FromLogOptions& o, const std::string& gpu) {
  const sim::LogCluster cluster{gpu, o.gpus_per_node, o.nic_gbps};
  std::vector<ReadLog> logs;
  for (const auto& f : o.logs) logs.push_back(read_log(f, cluster));
  name_logs_apart(logs);
  return logs;
}

std::string scale_text(double s) { return fmt::format("x{:.3f}", s); }

std::string fit_text(const std::vector<ReadLog>& logs, const sim::LogFit& fit, const std::string& out) {
  const auto& c = fit.correction;
  std::string text = fmt::format("Correction  gemm {}  memory-bound {}  network {}\n\n", scale_text(c.gemm), scale_text(c.memory),
                                 fit.network_fitted ? scale_text(c.network) : std::string("not fitted (no log spans more than one GPU)"));
  Table t({"log", "measured", "bundled profile", "fitted on all", "held out"},
          {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right});
  double before = 0, after = 0, held = 0;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto& r = logs[i].run.run;
    const bool has_held = i < fit.held_out_error.size();
    t.add({r.id, format_duration(Seconds(r.measured_iteration_s)), signed_percent(fit.uncorrected_error[i]), signed_percent(fit.fitted_error[i]),
           has_held ? signed_percent(fit.held_out_error[i]) : "-"});
    if (has_held) {
      const auto& h = fit.held_out[i];
      t.add_note(fmt::format("held out: fitted on the others, gemm {} memory-bound {}", scale_text(h.gemm), scale_text(h.memory)));
    }
    before += std::fabs(fit.uncorrected_error[i]);
    after += std::fabs(fit.fitted_error[i]);
    if (has_held) held += std::fabs(fit.held_out_error[i]);
  }
  const double n = static_cast<double>(logs.size());
  t.add({"MAPE", "", fmt::format("{:.1f}%", 100 * before / n), fmt::format("{:.1f}%", 100 * after / n),
         fit.held_out_error.empty() ? "-" : fmt::format("{:.1f}%", 100 * held / n)});
  text += t.render();
  text += "\nheld out: each log predicted with the correction fitted on the others (leave one out); with few logs it says\n"
          "more than the in-sample column how the correction will do on the next run.\n";
  if (!out.empty()) {
    text += fmt::format("\nProfile     written to {}\nUse it      parasim simulate JOB --set profile={}\n"
                        "            (plan and whatif alike), or `profile:` with its path in a scenario\n",
                        out, out);
  }
  return text;
}

nlohmann::json fit_json(const std::vector<ReadLog>& logs, const sim::LogFit& fit, const std::string& out) {
  const auto scales = [](const sim::LogCorrection& c) { return nlohmann::json{{"gemm", c.gemm}, {"memory", c.memory}, {"network", c.network}}; };
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t i = 0; i < logs.size(); ++i) {
    nlohmann::json j = {{"log", logs[i].log.file.string()},
                        {"id", logs[i].run.run.id},
                        {"measured_iteration_s", logs[i].run.run.measured_iteration_s},
                        {"uncorrected_error", fit.uncorrected_error[i]},
                        {"fitted_error", fit.fitted_error[i]}};
    if (i < fit.held_out_error.size()) {
      j["held_out_error"] = fit.held_out_error[i];
      j["held_out_correction"] = scales(fit.held_out[i]);
    }
    rows.push_back(j);
  }
  return {{"correction", scales(fit.correction)}, {"network_fitted", fit.network_fitted}, {"logs", rows},
          {"profile", out.empty() ? nlohmann::json(nullptr) : nlohmann::json(out)}};
}

}  // namespace

int run_fit_logs(const FromLogOptions& o) {
  const std::string gpu = resolve_gpu(o.gpu, o.hardware_dir);
  const auto logs = read_logs(o, gpu);
  std::vector<sim::MeasuredRun> runs;
  for (const auto& l : logs) runs.push_back(l.run.run);
  const auto spec = topology::parse_gpu(yaml::Record(yaml::load_file(std::filesystem::path(o.hardware_dir) / (gpu + ".yaml")), topology::kGpuSchema));
  const calibrate::Profile base = calibrate::default_profile(spec.name);
  const auto fit = sim::fit_correction(runs, o.hardware_dir, base);
  if (!o.out.empty()) {
    std::vector<std::string> names;
    for (const auto& l : logs) names.push_back(l.log.file.filename().string());
    auto p = sim::corrected_profile(base, fit.correction, fmt::format("log: calibrate fit on {} training logs ({})", logs.size(), fmt::join(names, ", ")));
    p.name = std::filesystem::path(o.out).stem().string();
    p.hardware = spec.name;
    p.source = fmt::format("log: the bundled {} profile corrected by calibrate fit on {} logs", base.name, logs.size());
    calibrate::save_profile(p, o.out);
  }
  std::cout << (o.json ? fit_json(logs, fit, o.out).dump(2) + "\n" : fit_text(logs, fit, o.out));
  return 0;
}

namespace {

// The logs read and priced as validate prices rows.
struct PricedLogs {
  std::vector<ReadLog> logs;
  sim::ValidationReport report;
};

PricedLogs price_logs(const FromLogOptions& o) {
  auto logs = read_logs(o, resolve_gpu(o.gpu, o.hardware_dir));
  std::vector<sim::MeasuredRun> runs;
  std::vector<std::string> file_of;
  for (const auto& l : logs) {
    runs.push_back(l.run.run);
    file_of.push_back(l.log.file.string());
  }
  sim::ValidateOptions options;
  options.hardware_dir = o.hardware_dir;
  options.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto report = sim::validate(runs, file_of, options);
  return {std::move(logs), std::move(report)};
}

}  // namespace

nlohmann::json from_log_json(const FromLogOptions& o) {
  const auto priced = price_logs(o);
  return json_report(priced.logs, priced.report);
}

int run_from_log(const FromLogOptions& o) {
  const auto priced = price_logs(o);
  std::cout << (o.json ? json_report(priced.logs, priced.report).dump(2) + "\n" : text_report(priced.logs, priced.report));
  return 0;
}

}  // namespace parasim::cli
