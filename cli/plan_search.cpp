#include "cli/plan_search.hpp"

#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/launch_files.hpp"
#include "planner/torchtitan_rules.hpp"
#include "cli/located.hpp"
#include "cli/prediction_interval.hpp"
#include "cli/progress_bar.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "sim/software_stack.hpp"

namespace parasim::cli {
namespace {

// Where nothing fits: the fewest nodes, doubling up to 16 times as many, on which a plan fits.
std::string gpus_that_fit(const sim::Scenario& s, int global_batch, const planner::SearchOptions& base) {
  planner::SearchOptions options = base;
  options.simulate_top = 1;
  options.megatron_variants = false;
  options.include.clear();
  options.progress = nullptr;
  for (int factor = 2; factor <= 16; factor *= 2) {
    auto cluster = s.cluster;
    cluster.nodes *= factor;
    const auto report = planner::search(cluster, *s.model, *s.training, global_batch, s.effective_profile(), options);
    if (!report.ranked.empty() && report.ranked.front().fits) {
      return fmt::format("; with {} GPUs ({} nodes) it fits, e.g. {}", cluster.gpus(), cluster.nodes, planner::plan_name(report.ranked.front().plan, true));
    }
  }
  return fmt::format("; nor on {} GPUs", s.cluster.gpus() * 16);
}

void check_scenario(const sim::Scenario& s, const std::string& file, const std::string& command) {
  for (auto [present, key] : {std::pair{s.model.has_value(), "model"}, {s.training.has_value(), "training"}}) {
    if (!present) throw InputError({file, 1, 1}, key, fmt::format("missing: parasim {} needs a scenario with model and training sections", command));
  }
  const auto& gpu = s.cluster.node.gpu;
  if (!gpu.peak_for(s.training->precision)) {
    throw InputError({file, 1, 1}, "training.precision", fmt::format("{} has no {} peak in its hardware file", gpu.name, precision_name(s.training->precision)));
  }
}

planner::SearchOptions search_options(const PlanSearchOptions& o, const sim::Scenario& s, int global_batch) {
  planner::SearchOptions options;
  options.headroom = parse_headroom(o.headroom).of(s.cluster.node.gpu.hbm_capacity);
  options.simulate_top = o.simulate_top;
  options.power_of_two = o.power_of_two;
  options.micro_batches = o.micro_batches;
  options.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.constraints = o.constraints.parse();
  options.time_limit = o.time_limit;
  const int gpus = s.cluster.gpus();
  if (s.plan) {
    if (auto given = planner::scenario_candidate(*s.plan, *s.model, *s.training, gpus, global_batch, options.constraints)) options.include.push_back(*given);
  }
  for (const auto& file : o.include) options.include.push_back(sim::load_plan(file, *s.model, gpus, s.training->seq_len));
  for (const auto& args : o.megatron_args) options.include.push_back(read_megatron_source(args, s, o.ignore_unknown_flags));
  return options;
}

std::string rejected_reasons(const planner::SearchReport& report) {
  std::string reasons;
  for (const auto& [why, n] : report.rejected) reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", why, n);
  return reasons;
}

}  // namespace

planner::Headroom parse_headroom(const std::string& text) {
  planner::Headroom h;
  // "Fits" means fits with the memory model's own error to spare: its median error on the peaks
  // published runs printed, as a share of the GPU's memory.
  if (text == "auto") {
    h.share = bundled_error_model().memory_margin;
    return h;
  }
  try {
    h.fixed = parse_bytes(text);
  } catch (const UnitError& e) {
    throw InputError({"", 0, 0}, "--headroom", e.what());
  }
  if (h.fixed.value() < 0) throw InputError({"", 0, 0}, "--headroom", "must not be negative");
  return h;
}

void PlanSearchOptions::add_to(CLI::App* cmd) {
  cmd->add_option("scenario", scenario, "scenario YAML with cluster, model and training (a plan in it is ranked too)");
  cmd->add_option("--set", set, "override a scenario key (repeatable)");
  cmd->add_option("--simulate-top", simulate_top, "best analytical candidates the simulator scores")->check(CLI::Range(1, 100000));
  cmd->add_option("--global-batch", global_batch, "samples per iteration; default: the scenario plan's global_batch")->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--headroom", headroom,
                  "memory kept free on every GPU beyond the model's allowance, e.g. 2GiB; auto: the memory model's median error on "
                  "published peaks (scenarios/error_model.yaml memory_margin) of the GPU's memory")
      ->capture_default_str();
  cmd->add_flag("--power-of-two", power_of_two, "only power-of-two pp and dp (Galvatron's default)");
  cmd->add_option("--micro-batch", micro_batches, "micro-batch sizes to try (repeatable); default 1, 2, 4, 8, 16")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--include", include, "a plan YAML to simulate and rank with the rest (repeatable)");
  cmd->add_option("--from-megatron-args", megatron_args,
                  "a plan as Megatron-LM arguments (quoted), or a launch_megatron.sh / argument file, to rank with the rest (repeatable)");
  cmd->add_flag("--ignore-unknown-flags", ignore_unknown_flags, "with --from-megatron-args: skip flags parasim does not know, listing them, instead of exit 2");
  cmd->add_option("--threads", threads, "threads for both phases (default: the machine's cores); the result is the same for any count");
  constraints.add_to(cmd, "the search");
  cmd->add_option("--time-limit", time_limit, "seconds for the whole search: the analytical scan stops at half, the simulator scores what it can "
                                              "in the rest (results then depend on the machine)")->check(CLI::PositiveNumber);
}

PlanSearch run_plan_search(const PlanSearchOptions& o, bool progress) { return run_plan_search(o, sim::load_scenario(o.scenario, o.set), progress); }

PlanSearch run_plan_search(const PlanSearchOptions& o, sim::Scenario scenario, bool progress) {
  PlanSearch out{std::move(scenario), 0, {}, {}};
  const auto& s = out.scenario;
  check_scenario(s, o.scenario, o.command);
  out.global_batch = o.global_batch > 0 ? o.global_batch : (s.plan ? s.plan->global_batch : 0);
  if (out.global_batch <= 0) throw InputError({o.scenario, 1, 1}, "plan.global_batch", "missing: give --global-batch or a plan with global_batch");
  out.options = search_options(o, s, out.global_batch);
  if (out.options.constraints.framework == planner::Constraints::Framework::torchtitan) {
    if (auto why = planner::torchtitan_job_problem(*s.model, *s.training)) throw InputError({"", 0, 0}, "--framework torchtitan", *why);
    // Every plan priced as torchtitan runs it: its attention kernel, its loss, its checkpointing.
    sim::run_as_torchtitan(*out.scenario.training);
  }
  // One bar per phase (the analytical scan, then the simulations); the search serializes the calls.
  std::unique_ptr<ProgressBar> bar;
  std::string bar_phase;
  if (o.on_progress) {
    out.options.progress = o.on_progress;
  } else if (progress) {
    out.options.progress = [&bar, &bar_phase](const char* phase, std::size_t done, std::size_t total) {
      if (!bar || bar_phase != phase) {
        bar.reset();
        bar_phase = phase;
        bar = std::make_unique<ProgressBar>(fmt::format("{:<10}", phase), total, true);
      }
      bar->set_done(done);
    };
  }
  out.report = located(o.scenario, [&] { return planner::search(s.cluster, *s.model, *s.training, out.global_batch, s.effective_profile(), out.options); });
  bar.reset();
  out.options.progress = nullptr;
  const auto& report = out.report;
  if (report.considered == 0) {
    // The message names the pin (--fix tp=16, --max-pp 4, --framework) that removed the last candidate.
    throw InputError({"", 0, 0}, "", planner::why_no_candidate(s.cluster, *s.model, *s.training, out.global_batch, out.options));
  }
  if (report.ranked.empty() || !report.ranked.front().fits) {
    throw InputError({o.scenario, 1, 1}, "plan",
                     fmt::format("no plan of the {} considered fits in {} per GPU{} ({}){}{}", report.considered, format_bytes(report.budget),
                                 out.options.headroom.value() > 0 ? fmt::format(" ({} less {} headroom)", format_bytes(report.capacity),
                                                                                format_bytes(out.options.headroom))
                                                                  : "",
                                 rejected_reasons(report),
                                 report.smallest_footprint ? fmt::format("; the smallest footprint found is {} per GPU with every layer recomputed",
                                                                         format_bytes(*report.smallest_footprint))
                                                           : "",
                                 gpus_that_fit(s, out.global_batch, out.options)));
  }
  if (o.quiet) return out;
  std::cerr << fmt::format("searched {} candidates ({} fit) in {:.2f} s, {:.0f} per second; simulated {} in {:.2f} s\n", report.visited, report.scored,
                           report.analytical_seconds, report.visited / std::max(1e-9, report.analytical_seconds), report.ranked.size(),
                           report.simulated_seconds);
  return out;
}

}  // namespace parasim::cli
