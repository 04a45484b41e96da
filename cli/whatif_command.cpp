// parasim whatif <scenario|study> --vary KEY=V1,V2,...: the same question on other hardware. Each
// variant is the scenario with `--set KEY=Vi` (any key the schema knows), re-planned (or with its
// plan fixed) and simulated; a table, and CSV, JSON and a gnuplot chart in --out.
// parasim whatif <scenario> --sensitivity: which hardware parameter moves the iteration time most.
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/constraint_options.hpp"
#include "cli/gnuplot.hpp"
#include "cli/plan_search.hpp"
#include "cli/prediction_interval.hpp"
#include "cli/progress_bar.hpp"
#include "cli/whatif_distributed.hpp"
#include "cli/whatif_report.hpp"
#include "cli/whatif_variants.hpp"
#include "core/error.hpp"
#include "planner/whatif.hpp"
#include "planner/whatif_study.hpp"
#include "sim/scenario.hpp"

namespace parasim::cli {
namespace {

// After the outputs are written: an internal error in any evaluation is one line and exit code 1.
int exit_status(const std::vector<planner::Outcome>& outcomes) {
  const auto bad = std::count_if(outcomes.begin(), outcomes.end(), [](const planner::Outcome& o) { return o.internal_error; });
  if (bad == 0) return 0;
  const auto first = std::find_if(outcomes.begin(), outcomes.end(), [](const planner::Outcome& o) { return o.internal_error; });
  std::cerr << fmt::format("parasim: {} of {} evaluations failed; the first: {}\n", bad, outcomes.size(), *first->failure);
  return 1;
}

struct Options {
  std::string scenario;
  std::vector<std::string> vary;
  std::vector<std::string> set;
  bool fixed_plan = false;
  bool json = false;
  bool sensitivity = false;
  std::string by = "25%";
  std::string out;
  std::string chart = "svg";
  std::string gnuplot = "gnuplot";
  int threads = 0;
  int simulate_top = 32;
  std::string headroom = "auto";
  ConstraintOptions constraints;
};

double parse_fraction(const std::string& text) {
  std::string digits = text;
  if (!digits.empty() && digits.back() == '%') digits.pop_back();
  std::size_t used = 0;
  double pct = 0;
  try {
    pct = std::stod(digits, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (digits.empty() || used != digits.size() || !(pct > 0 && pct < 100)) {
    throw InputError({"--by", 0, 0}, {}, fmt::format("'{}' is not a percentage between 0 and 100 (write e.g. 25%)", text));
  }
  return pct / 100;
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();  // a full disk shows when the buffer is written
  if (!f) throw InputError({path.string(), 0, 0}, "--out", "cannot write this file");
}

std::filesystem::path make_out_dir(const std::string& out) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out)) throw InputError({out, 0, 0}, "--out", "cannot create this directory");
  return out;
}

// Writes CSV, JSON and the chart's script, then draws the chart; a missing gnuplot is one line on
// stderr and the data files are still there.
void write_outputs(const Options& o, const std::string& stem, const std::string& csv, const nlohmann::json& json,
                   const std::function<std::string(const std::string&, const std::string&)>& chart) {
  const auto dir = make_out_dir(o.out);
  write_file(dir / (stem + ".csv"), csv);
  write_file(dir / (stem + ".json"), json.dump(2) + "\n");
  const std::string image = stem + "." + o.chart;
  write_file(dir / (stem + ".gp"), chart(gnuplot_terminal(o.chart), image));
  std::error_code ec;
  std::filesystem::remove(dir / image, ec);  // a chart left from an earlier run must not pass for this one
  if (const auto why = run_gnuplot(o.gnuplot, dir, stem + ".gp")) {
    std::cerr << fmt::format("parasim: no chart: {}; wrote {}.csv and {}.json in {}\n", *why, stem, stem, dir.string());
  } else {
    std::cerr << fmt::format("wrote {}.csv, {}.json and {} in {}\n", stem, stem, image, dir.string());
  }
}

int run_study(const Options& o, const planner::WhatifOptions& base_options) {
  StudyResult r;
  r.study = read_study({o.scenario, o.vary, o.set, o.fixed_plan});
  if (r.study.axes.empty()) {
    throw InputError({"--vary", 0, 0}, {}, "missing: give --vary KEY=V1,V2,... (repeatable), a study file, or --sensitivity");
  }
  r.scenario = r.study.scenario.string();
  r.variants = planner::variant_grid(r.study.axes);
  const auto scenarios = load_variants(r.study, r.variants);
  if (!r.study.fixed_plan && is_root_process()) {
    for (const auto& a : r.study.axes) {
      if (a.key.starts_with("plan.") && a.key != "plan.global_batch") {
        std::cerr << fmt::format("note: {} is varied but each variant is re-planned; --fixed-plan compares the plans as given\n", a.key);
      }
    }
  }
  auto options = base_options;
  options.fixed_plan = r.study.fixed_plan;
  double seconds = 0;
  {
    ProgressBar bar("variants", scenarios.size(), !o.json && is_root_process());
    options.progress = [&](std::size_t done, std::size_t) { bar.set_done(done); };
    r.outcomes = evaluate_distributed(planner::study_jobs(scenarios, r.study.fixed_plan), options);
    seconds = bar.elapsed();
  }
  if (!is_root_process()) return 0;
  attach_intervals(r.outcomes);
  std::cerr << fmt::format("evaluated {} variant{} ({}) in {:.1f} s\n", r.outcomes.size(), r.outcomes.size() == 1 ? "" : "s",
                           r.study.fixed_plan ? "fixed plan" : "re-planned", seconds);
  const auto json = study_json(r);
  std::cout << (o.json ? json.dump(2) + "\n" : study_table(r));
  if (!o.out.empty()) {
    write_outputs(o, "whatif", study_csv(r), json, [&](const std::string& terminal, const std::string& image) { return study_chart(r, terminal, image); });
  }
  return exit_status(r.outcomes);
}

int run_sensitivity(const Options& o, const planner::WhatifOptions& base_options) {
  auto study = read_study({o.scenario, o.vary, o.set, o.fixed_plan});
  if (!study.axes.empty()) throw InputError({"--sensitivity", 0, 0}, {}, "perturbs the scenario's hardware; give it without --vary axes");
  const double fraction = parse_fraction(o.by);
  const auto scenario = sim::load_scenario(study.scenario, study.set);
  scenario.require_workload();
  const auto jobs = planner::sensitivity_jobs(scenario, fraction, study.fixed_plan);
  std::vector<planner::Outcome> outcomes;
  double seconds = 0;
  {
    ProgressBar bar("sensitivity", jobs.jobs.size(), !o.json && is_root_process());
    auto options = base_options;
    options.progress = [&](std::size_t done, std::size_t) { bar.set_done(done); };
    outcomes = evaluate_distributed(jobs.jobs, options);
    seconds = bar.elapsed();
  }
  if (!is_root_process()) return 0;
  SensitivityResult r;
  r.scenario = study.scenario.string();
  r.report = planner::rank_sensitivity(jobs, outcomes);
  std::cerr << fmt::format("perturbed {} hardware parameters by {:g}% in {:.1f} s\n", r.report.knobs.size(), 100 * fraction, seconds);
  const auto json = sensitivity_json(r);
  std::cout << (o.json ? json.dump(2) + "\n" : sensitivity_table(r));
  if (!o.out.empty()) {
    write_outputs(o, "sensitivity", sensitivity_csv(r), json,
                  [&](const std::string& terminal, const std::string& image) { return sensitivity_chart(r, terminal, image); });
  }
  return exit_status(outcomes);
}

}  // namespace

Action add_whatif_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("whatif", "What-if studies: vary scenario keys (re-planning each variant), or rank hardware parameters by sensitivity");
  cmd->footer(
      "Examples:\n"
      "  parasim whatif scenarios/whatif/gpu-generations.yaml --out out/\n"
      "  parasim whatif scenarios/default.yaml --vary cluster.node.nics.bandwidth=200Gb/s,400Gb/s,800Gb/s\n"
      "  parasim whatif scenarios/jobs/llama2-7b-lab.yaml --sensitivity --by 25%");
  cmd->add_option("scenario", o->scenario, "scenario YAML, or a study YAML (scenarios/whatif/) naming a scenario and the keys to vary");
  cmd->add_option("--vary", o->vary,
                  "KEY=V1,V2,...: a scenario key (as --set names it) and its values (repeatable: every combination, the first key changing "
                  "slowest). Commas inside [...], {...} or quotes do not split");
  cmd->add_option("--set", o->set, "override a scenario key in every variant (repeatable)");
  cmd->add_flag("--fixed-plan", o->fixed_plan, "simulate the scenario's plan in every variant instead of re-planning");
  cmd->add_flag("--sensitivity", o->sensitivity,
                "perturb each hardware parameter (peak FLOP/s, HBM bandwidth and capacity, NVLink, NIC, PCIe, latencies, overlap) by --by "
                "and rank them by how much the iteration time moves");
  cmd->add_option("--by", o->by, "with --sensitivity: the perturbation, e.g. 10%")->capture_default_str();
  cmd->add_option("--out", o->out, "directory for whatif.csv, whatif.json and the chart (sensitivity.* with --sensitivity)");
  cmd->add_option("--chart", o->chart, "chart format")->check(CLI::IsMember({"svg", "png"}))->capture_default_str();
  cmd->add_option("--gnuplot", o->gnuplot, "the gnuplot to draw charts with")->capture_default_str();
  cmd->add_flag("--json", o->json, "print JSON instead of the table");
  cmd->add_option("--threads", o->threads, "simulations at once (default: the machine's cores); the result is the same for any count")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--simulate-top", o->simulate_top, "best analytical candidates the simulator scores per re-plan")->check(CLI::Range(1, 100000));
  cmd->add_option("--headroom", o->headroom,
                  "memory every re-plan keeps free on every GPU, e.g. 2GiB; auto: the memory model's median error on published peaks of "
                  "each variant's GPU memory (as plan's default)")
      ->capture_default_str();
  o->constraints.add_to(cmd, "every re-plan");
  return [o]() {
    if (o->scenario.empty()) {
      throw InputError({"", 0, 0}, "scenario", "missing: parasim whatif <scenario.yaml|study.yaml> --vary KEY=V1,V2,... (or --sensitivity)");
    }
    planner::WhatifOptions options;
    options.simulate_top = o->simulate_top;
    options.constraints = o->constraints.parse();
    options.threads = o->threads > 0 ? o->threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    options.headroom = parse_headroom(o->headroom);
    return o->sensitivity ? run_sensitivity(*o, options) : run_study(*o, options);
  };
}

}  // namespace parasim::cli
