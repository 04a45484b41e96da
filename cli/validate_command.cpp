// parasim validate FILE...: published training runs simulated with one fill-in policy, and how far
// the predictions are from the measurements.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.hpp"
#include "cli/prediction_interval.hpp"
#include "cli/progress_bar.hpp"
#include "cli/residuals_table.hpp"
#include "cli/simulate_report.hpp"
#include "cli/table.hpp"
#include "cli/validate_report.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "sim/residuals.hpp"
#include "sim/validation.hpp"

namespace parasim::cli {
namespace {

// A long file path keeps its end (the file's name), so that lines stay within 120 columns.
std::string short_name(const std::string& name) { return name.size() > 28 ? "..." + name.substr(name.size() - 25) : name; }

std::string summary_line(const std::string& name, const sim::Summary& s) {
  const std::string shown = short_name(name);
  return fmt::format("{:<28} {:>4}/{:<4} MAPE {:>5.1f}%  median {:>5.1f}%  worst {:>5.1f}%  Spearman {:>5.2f}  plan order {}/{}\n", shown,
                     s.simulated, s.rows, 100 * s.mape, 100 * s.median, 100 * s.worst, s.spearman, s.ordered, s.pairs);
}

// --explain prints a line per finding; lists wrap after " · " or ", " so that no line passes 120
// columns, the wrapped part under the line's text.
void print_wrapped(const std::string& label, const std::string& text) { std::cout << labelled_lines(label, text); }

// --explain: the prediction against the measurement, the stack, and where the stage-0 time goes.
void print_headline(const sim::MeasuredRun& run, const sim::RowExplanation& e) {
  const auto& r = e.result;
  const std::string head = fmt::format("{}  measured {}  predicted {} ({:+.1f}%)", run.id, format_duration(Seconds(run.measured_iteration_s)),
                                       format_duration(r.iteration), 100 * e.row.error);
  const std::string plan = e.row.plan + (e.row.fits ? "" : " (OOM)");
  std::cout << (display_width(head) + 2 + display_width(plan) <= Table::kNoteWidth ? head + "  " + plan + "\n" : head + "\n  plan " + plan + "\n");
  std::cout << fmt::format("  model {:.1f} TFLOP/s/GPU  MFU {:.1f}%  HFU {:.1f}%  (measured MFU {:.1f}%)\n", r.model_tflops_per_gpu, 100 * r.mfu,
                           100 * r.hfu, 100 * r.mfu * r.iteration.value() / run.measured_iteration_s);
  const std::string stack = fmt::format("  stack {} (from the source)  filled: ", sim::software_stack_name(e.row.stack));
  const std::string filled = e.row.filled.empty() ? "nothing" : fmt::format("{}", fmt::join(e.row.filled, ", "));
  if (display_width(stack) + display_width(filled) <= Table::kNoteWidth) {
    std::cout << stack << filled << "\n";
  } else {  // a field a line: the policy's reasons carry commas of their own
    std::cout << stack.substr(0, stack.size() - 1) << "\n";
    for (const auto& f : e.row.filled) print_wrapped("    ", f);
  }
  print_wrapped("  stage 0 compute by kind: ",
                fmt::format("gemm {} · attention {} · memory-bound {} · launch {} ({} kernels) · GEMM {:.1f} TFLOP/s", format_duration(Seconds(e.gemm_s)),
                            format_duration(Seconds(e.attention_s)), format_duration(Seconds(e.memory_s)), format_duration(Seconds(e.launch_s)),
                            e.kernels, e.gemm_s > 0 ? e.gemm_flops / e.gemm_s / 1e12 : 0.0));
}

// --explain: the fill search, a line per plan tried; a plan too long for its column puts its
// figures on the line under it.
void print_search(const std::vector<sim::SearchStep>& search) {
  constexpr std::size_t kPlanColumn = 58;
  std::cout << "  fill search (the fields the source did not print, searched together over plans that fit; the fastest is kept):\n";
  for (const auto& step : search) {
    const std::string figures = fmt::format("{:>22}  {:>10}{}", fmt::format("{} {}", step.fits ? "fits" : "OOM", format_bytes(Bytes(step.peak_bytes))),
                                            step.seconds ? format_duration(Seconds(*step.seconds)) : "not run", step.kept ? "  kept" : "");
    if (display_width(step.plan) <= kPlanColumn) {
      std::cout << fmt::format("    {:<11} {:<58} {}\n", step.field, step.plan, figures);
    } else {
      std::cout << labelled_lines(fmt::format("    {:<11} ", step.field), step.plan) << fmt::format("    {:<11} {:<58} {}\n", "", "", figures);
    }
  }
}

// --explain: memory against the source's peak, and every plan the fill search tried.
void print_memory_and_search(const sim::MeasuredRun& run, const sim::RowExplanation& e) {
  const auto& r = e.result;
  if (const auto problem = r.memory.problem()) {
    print_wrapped("  memory: ", *problem);
  } else {
    std::cout << fmt::format("  memory: peak {} on stage {} of {} per GPU{}\n", format_bytes(r.memory.peak()), r.memory.worst_stage,
                             format_bytes(r.memory.capacity),
                             run.published_memory_bytes ? fmt::format(" (the source printed {})", format_bytes(Bytes(*run.published_memory_bytes))) : "");
    const auto& st = r.memory.stages[static_cast<std::size_t>(r.memory.worst_stage)];
    print_wrapped("    ", fmt::format("weights {} · gradients {} · optimizer {} · activations {} ({} chunks in flight; working set {}, backward "
                                      "gradients {} of it) · buffers {} · allowance {}",
                                      format_bytes(st.weights), format_bytes(st.gradients), format_bytes(st.optimizer), format_bytes(st.activations),
                                      st.chunks_in_flight, format_bytes(st.recompute_working), format_bytes(st.backward_transient),
                                      format_bytes(st.buffers), format_bytes(st.allowance)));
    if (st.optimizer_step.value() > 0) {
      std::cout << fmt::format("    optimizer step {} beside the state, once the activations are gone ({})\n", format_bytes(st.optimizer_step),
                               st.optimizer_step > st.activations ? "the peak" : "under the activations' peak");
    }
  }
  if (e.row.search.size() > 1) print_search(e.row.search);
}

// --explain: stage 0's largest ops and the breakdown of the first two stages and the last (which
// holds the head and the loss); a dimension's exposed communication only where some stage has any.
void print_stages(const sim::RowExplanation& e) {
  const auto& r = e.result;
  std::vector<std::string> ops;
  for (std::size_t i = 0; i < std::min<std::size_t>(12, e.ops.size()); ++i) ops.push_back(fmt::format("{} {}", e.ops[i].first, format_duration(Seconds(e.ops[i].second))));
  print_wrapped("  stage 0 largest ops: ", fmt::format("{}", fmt::join(ops, " · ")));
  const auto dims = exposed_dimensions(r);
  const int last = r.stages.empty() ? 0 : r.stages.back().stage;
  for (const auto& b : r.stages) {
    if (b.stage > 1 && b.stage < last) continue;
    std::string exposed;
    for (auto d : dims) exposed += fmt::format(" {} {}", workload::comm_dim_name(d), format_duration(b.exposed[static_cast<std::size_t>(d)]));
    print_wrapped(fmt::format("  stage {:>2}: ", b.stage),
                  fmt::format("fwd {} · bwd {} · recompute {} · optimizer {} · exposed{} · bubble {}", format_duration(b.forward),
                              format_duration(b.backward), format_duration(b.recompute), format_duration(b.optimizer),
                              exposed.empty() ? " none" : exposed, format_duration(b.bubble)));
  }
}

// --explain ID: where each row's predicted time goes.
void print_explanations(const std::vector<std::string>& ids, const LoadedRows& loaded, const std::vector<std::string>& files, const std::string& hardware) {
  const auto& runs = loaded.runs;
  for (const auto& id : ids) {
    const auto it = std::find_if(runs.begin(), runs.end(), [&](const sim::MeasuredRun& r) { return r.id == id; });
    if (it == runs.end()) throw InputError({"--explain", 0, 0}, "explain", fmt::format("no row '{}' in {}", id, fmt::join(files, ", ")));
    const auto got = sim::explain_row(*it, hardware);
    if (std::holds_alternative<std::string>(got)) {
      std::cout << fmt::format("{}: not simulated: {}\n", id, std::get<std::string>(got));
      continue;
    }
    const auto& e = std::get<sim::RowExplanation>(got);
    print_headline(*it, e);
    print_memory_and_search(*it, e);
    print_stages(e);
  }
}

// Peak memory against the sources' figures: overall (the line), per file and per family.
std::string memory_text(const sim::ValidationReport& report) {
  std::string out = fmt::format("\npeak memory against the sources' ({} rows): median error {:.1f}%, worst {:.1f}%, bias {:+.1f}%\n", report.memory.rows,
                                100 * report.memory.median, 100 * report.memory.worst, 100 * report.memory.bias);
  Table t({"rows printing a peak", "rows", "median error", "worst", "bias"},
          {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right});
  auto add = [&](const std::string& name, const sim::MemoryCheck& m) {
    t.add({name, fmt::format("{}", m.rows), fmt::format("{:.1f}%", 100 * m.median), fmt::format("{:.1f}%", 100 * m.worst), fmt::format("{:+.1f}%", 100 * m.bias)});
  };
  for (const auto& [k, v] : report.memory_files) add(short_name(k), v);
  for (const auto& [k, v] : report.memory_families) add("  " + k, v);
  return out + t.render();
}

// --fit-error-model: the model fitted on every row, for simulate, plan and whatif to read.
void write_error_model(const std::string& file, const sim::ErrorModel& model, int simulated) {
  if (model.empty()) {
    throw InputError({}, "--fit-error-model",
                     fmt::format("too few rows simulated to fit an error model ({}; it needs {})", simulated, sim::kErrorFeatures + 2));
  }
  OutputFile out(file, "--fit-error-model", "the error model");
  out.stream() << sim::error_model_yaml(model);
  out.close();
  std::cerr << fmt::format("error model: {} rows fitted, written to {}\n", model.rows, file);
}

// The rule of thumb beside parasim, overall, per file and per family.
std::string rule_of_thumb_text(const sim::ValidationReport& report) {
  std::string out = fmt::format(
      "\nAgainst a rule of thumb: time = model FLOPs / (GPUs x dense peak x c), one c = {:.3f} fitted on these {} rows\n",
      report.rule_of_thumb_mfu, report.overall.simulated);
  out += "80% interval: the error model (sim/error_model.hpp) fitted without the row's family; covers = share of rows inside it\n";
  Table t({"rows", "simulated", "parasim MAPE", "rule of thumb MAPE", "80% interval covers"},
          {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right});
  auto add = [&](const std::string& name, const sim::Summary& s) {
    t.add({name, fmt::format("{}", s.simulated), fmt::format("{:.1f}%", 100 * s.mape), fmt::format("{:.1f}%", 100 * s.rule_of_thumb_mape),
           s.intervals ? fmt::format("{:.0f}%", 100.0 * s.covered / s.intervals) : "-"});
  };
  add("all rows", report.overall);
  for (const auto& [k, v] : report.files) add(short_name(k), v);
  for (const auto& [k, v] : report.families) add("  " + k, v);
  return out + t.render();
}

// A row's figures, then under it the plan simulated, what the policy filled, the memory against
// the source's peak: a line each, so that the table stays within 120 columns.
std::string rows_table(const sim::ValidationReport& report) {
  Table t({"id", "measured", "predicted", "error", "80% interval"},
          {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right});
  for (const auto& r : report.rows) {
    if (r.skipped) continue;
    t.add({r.run->id, format_duration(Seconds(r.run->measured_iteration_s)), format_duration(Seconds(r.predicted_s)),
           fmt::format("{:+.1f}%", 100 * r.error), r.interval ? interval_text(*r.interval) : "-"});
    t.add_note(r.plan + (r.fits ? "" : " (OOM in the model)"));
    if (!r.filled.empty()) t.add_note(fmt::format("filled: {}", fmt::join(r.filled, ", ")));
    if (r.memory_error) {
      const std::string counted = r.memory_kind == sim::PrintedMemory::device ? "" : fmt::format(" as max {}", sim::printed_memory_name(r.memory_kind));
      t.add_note(fmt::format("memory: {} modelled{}, the source printed {} ({:+.1f}%)", format_bytes(Bytes(r.predicted_memory_bytes)), counted,
                             format_bytes(Bytes(*r.run->published_memory_bytes)), 100 * *r.memory_error));
    }
  }
  return t.render();
}

// The rows not simulated (with why) and not read (with the error).
std::string unanswered_text(const sim::ValidationReport& report, const LoadedRows& loaded) {
  std::string out;
  if (const int skipped = skipped_rows(report); skipped > 0) {
    out += fmt::format("\nNot simulated ({} row{})\n", skipped, skipped == 1 ? "" : "s");
    for (const auto& r : report.rows) {
      if (r.skipped) out += fmt::format("  {}: {}\n", r.run->id, *r.skipped);
    }
  }
  if (!loaded.errors.empty()) {
    out += fmt::format("\nErrors ({} row{} not read)\n", loaded.errors.size(), loaded.errors.size() == 1 ? "" : "s");
    for (const auto& e : loaded.errors) out += fmt::format("  {}{}\n", e.id.empty() ? "" : e.id + ": ", e.error.what());
  }
  return out;
}

std::string validate_text(const sim::ValidationReport& report, const LoadedRows& loaded, const std::vector<std::string>& fields) {
  std::string out = std::string(sim::kFillPolicy) + "\n";
  out += rows_table(report);
  out += unanswered_text(report, loaded);
  out += "\n" + summary_line("all rows", report.overall);
  for (const auto& [k, v] : report.files) out += summary_line(k, v);
  for (const auto& [k, v] : report.families) out += summary_line("  " + k, v);
  out += rule_of_thumb_text(report);
  if (!fields.empty()) out += residuals_text(report, fields);
  if (report.memory.rows > 0) out += memory_text(report);
  if (!fields.empty()) out += memory_residuals_text(report, fields);
  return out;
}

struct ValidateOptions {
  std::vector<std::string> files;
  bool json = false;
  double max_mape = -1;
  int threads = 0;
  std::vector<std::string> explain;
  std::string by;
  std::string fit_error_model;
  std::string hardware = bundled_hardware_dir();
};

void declare_options(CLI::App& cmd, ValidateOptions& o) {
  cmd.add_option("files", o.files, "measured-run YAML files (../shared/validation/*.yaml)")->required();
  cmd.add_flag("--json", o.json, "print JSON: one object per row with id and predicted_iteration_s, and the summary");
  cmd.add_option("--max-mape", o.max_mape, "exit with code 3 when the overall MAPE (in %) is above this");
  cmd.add_option("--threads", o.threads, "rows simulated at once (default: the machine's cores)");
  cmd.add_option("--by", o.by, fmt::format("group the errors by row properties, comma-separated: {}", fmt::join(sim::kResidualFields, ", ")));
  cmd.add_option("--fit-error-model", o.fit_error_model,
                 "write the prediction-error model fitted on every row simulated to this file (the bundled one: scenarios/error_model.yaml)");
  cmd.add_option("--explain", o.explain, "print where one row's predicted time goes (its id; repeatable) instead of the table");
  cmd.add_option("--hardware", o.hardware, "directory of the bundled hardware files (default: the project's scenarios/hardware)");
}

// Every row simulated, with a progress bar on a table run.
sim::ValidationReport simulate_rows(const LoadedRows& loaded, const ValidateOptions& o) {
  sim::ValidateOptions options;
  options.hardware_dir = o.hardware;
  options.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::unique_ptr<ProgressBar> bar;
  if (!o.json) {
    options.progress = [&bar](std::size_t done, std::size_t total) {
      if (!bar) bar = std::make_unique<ProgressBar>("validate", total, true);
      bar->set_done(done);
    };
  }
  auto report = sim::validate(loaded.runs, loaded.file_of, options);
  bar.reset();
  return report;
}

int run_validate(const ValidateOptions& o) {
  const auto loaded = load_rows(o.files);
  const auto fields = residual_fields(o.by);  // a bad --by is an error before any row runs
  if (!o.explain.empty()) {
    print_explanations(o.explain, loaded, o.files, o.hardware);
    return 0;
  }
  const auto report = simulate_rows(loaded, o);
  if (!o.fit_error_model.empty()) write_error_model(o.fit_error_model, report.error_model, report.overall.simulated);
  if (o.json) {
    std::cout << validate_json(loaded, report, fields).dump(2) << "\n";
  } else {
    std::cout << validate_text(report, loaded, fields);
  }
  // Each row that could not be read is one error line, and the exit code of bad input.
  for (const auto& e : loaded.errors) std::cerr << e.error.what() << "\n";
  if (!loaded.errors.empty()) return 2;
  if (o.max_mape >= 0 && 100 * report.overall.mape > o.max_mape) {
    std::cerr << fmt::format("parasim: validate: MAPE {:.1f}% is above --max-mape {}\n", 100 * report.overall.mape, o.max_mape);
    return 3;
  }
  return 0;
}

}  // namespace

Action add_validate_command(CLI::App& app) {
  auto o = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand("validate", "Simulate published training runs and compare with their measured step times");
  cmd->footer(
      "Rows that state what parasim does not model yet are skipped with the reason; a row with an unknown key\n"
      "or a bad value is an error (one line on stderr, exit 2) and every other row still runs.\n"
      "Examples:\n"
      "  parasim validate ../shared/validation/*.yaml\n"
      "  parasim validate ../shared/validation/megatron.yaml --json > megatron.json\n"
      "  parasim validate ../shared/validation/megatron.yaml --explain sc21-t1-01\n"
      "  parasim validate ../shared/validation/*.yaml --by gpu,precision");
  declare_options(*cmd, *o);
  return [o]() { return run_validate(*o); };
}

}  // namespace parasim::cli
