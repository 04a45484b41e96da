// parasim simulate <scenario>: one training iteration replayed over the cluster.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/cost_model.hpp"
#include "cli/commands.hpp"
#include "cli/simulate_report.hpp"
#include "cli/located.hpp"
#include "cli/prediction_interval.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "core/output_file.hpp"
#include "cli/launch_files.hpp"
#include "planner/search.hpp"
#include "sim/scenario.hpp"
#include "sim/simulator.hpp"
#include "sim/trace.hpp"

namespace parasim::cli {

nlohmann::json simulate_json(const sim::Scenario& s, const sim::Result& r) {
  nlohmann::json stages = nlohmann::json::array();
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    const auto& b = r.stages[i];
    const auto& m = r.memory.stages[i];
    stages.push_back({{"stage", b.stage},
                      {"forward_s", b.forward.value()},
                      {"backward_s", b.backward.value()},
                      {"recompute_s", b.recompute.value()},
                      {"optimizer_s", b.optimizer.value()},
                      {"exposed_tp_s", b.exposed[0].value()},
                      {"exposed_dp_s", b.exposed[1].value()},
                      {"exposed_pp_s", b.exposed[2].value()},
                      {"exposed_cp_s", b.exposed[3].value()},
                      {"exposed_ep_s", b.exposed[4].value()},
                      {"bubble_s", b.bubble.value()},
                      {"memory_bytes", m.total().value()},
                      {"fits", m.total() <= r.memory.capacity}});
  }
  nlohmann::json path = nlohmann::json::array();
  for (const auto& c : r.critical_path) path.push_back({{"what", c.what}, {"seconds", c.time.value()}});
  return {{"scenario", s.name},
          {"plan", planner::plan_name(*s.plan)},
          {"gpus", r.gpus},
          {"iteration_s", r.iteration.value()},
          {"interval", interval_json(interval_of(bundled_error_model(), r, s.training->precision))},
          {"tokens_per_s", r.tokens_per_s},
          {"samples_per_s", r.samples_per_s},
          {"model_tflops_per_gpu", r.model_tflops_per_gpu},
          {"mfu", r.mfu},
          {"hfu", r.hfu},
          {"memory", {{"capacity_bytes", r.memory.capacity.value()}, {"fits", r.memory.fits()},
                      {"problem", r.memory.problem() ? nlohmann::json(*r.memory.problem()) : nlohmann::json(nullptr)}}},
          {"stages", stages},
          {"critical_path", path},
          {"tasks", r.tasks},
          {"events", r.events},
          {"extrapolated_rounds", r.extrapolated_rounds}};
}

Simulation run_simulation(const sim::Scenario& s, const std::string& file, sim::SimOptions options, sim::Timeline* timeline) {
  s.require_workload();
  const auto& gpu = s.cluster.node.gpu;
  if (!gpu.peak_for(s.training->precision)) {
    throw InputError({file, 1, 1}, "training.precision", fmt::format("{} has no {} peak in its hardware file", gpu.name, precision_name(s.training->precision)));
  }
  Simulation out{topology::Cluster(s.cluster), {}, {}};
  const calibrate::CostModel cost(gpu, s.effective_profile());
  options.keep_timeline = timeline != nullptr;
  if (!timeline) {
    const sim::SimInput in{&out.cluster, &*s.model, &*s.training, &*s.plan, nullptr, &cost};
    out.result = located(file, [&] { return sim::simulate_plan(in, options); });
    return out;
  }
  out.graph = workload::build_tasks(*s.model, *s.training, *s.plan);
  const sim::SimInput in{&out.cluster, &*s.model, &*s.training, &*s.plan, &out.graph, &cost};
  out.result = located(file, [&] { return sim::simulate(in, options, timeline); });
  return out;
}

std::vector<workload::CommDim> exposed_dimensions(const sim::Result& result) {
  std::vector<workload::CommDim> dims;
  for (std::size_t d = 0; d < workload::kCommDims; ++d) {
    if (std::any_of(result.stages.begin(), result.stages.end(), [d](const auto& b) { return b.exposed[d].value() > 0; })) {
      dims.push_back(static_cast<workload::CommDim>(d));
    }
  }
  return dims;
}

namespace {

std::string seconds(Seconds s) { return format_duration(s); }

// Each stage's compute, exposed communication and memory. A dimension none of whose communication
// is exposed gets no column, nor does the verdict when every stage fits (the Memory line says so);
// when the columns would still pass 120, the exposed times go under their stage's row.
std::string stage_table(const sim::Result& r) {
  const auto dims = exposed_dimensions(r);
  const bool all_fit = std::all_of(r.memory.stages.begin(), r.memory.stages.end(), [&](const auto& m) { return m.total() <= r.memory.capacity; });
  auto build = [&](bool exposed_as_columns) {
    std::vector<std::string> header = {"stage", "forward", "backward", "recompute", "optimizer"};
    for (auto d : dims) {
      if (exposed_as_columns) header.push_back(fmt::format("exposed {}", workload::comm_dim_name(d)));
    }
    for (const char* h : {"bubble", "memory", "verdict"}) header.emplace_back(h);
    if (all_fit) header.pop_back();
    cli::Table t(header, std::vector<cli::Table::Align>(header.size(), cli::Table::Align::right));
    for (std::size_t i = 0; i < r.stages.size(); ++i) {
      const auto& b = r.stages[i];
      const auto& m = r.memory.stages[i];
      std::vector<std::string> row = {fmt::format("{}", b.stage), seconds(b.forward), seconds(b.backward), seconds(b.recompute), seconds(b.optimizer)};
      std::vector<std::string> exposed;
      for (auto d : dims) {
        const auto text = seconds(b.exposed[static_cast<std::size_t>(d)]);
        if (exposed_as_columns) row.push_back(text);
        else exposed.push_back(fmt::format("{} {}", workload::comm_dim_name(d), text));
      }
      row.insert(row.end(), {seconds(b.bubble), format_bytes(m.total())});
      if (!all_fit) row.push_back(m.total() <= r.memory.capacity ? "fits" : "OOM");
      t.add(row);
      if (!exposed.empty()) t.add_note(fmt::format("exposed {}", fmt::join(exposed, " · ")));
    }
    return t;
  };
  const auto wide = build(true);
  return wide.columns() <= cli::Table::kNoteWidth ? wide.render() : build(false).render();
}

std::string to_text(const sim::Scenario& s, const sim::Result& r) {
  const auto& p = *s.plan;
  std::string out = fmt::format("Scenario    {}: {} on {} x {}\n", s.name, s.model->name, r.gpus, s.cluster.node.gpu.name);
  out += cli::labelled_lines("Plan        ", fmt::format("tp {}{} x pp {}{} x dp {}{}{}, {}, micro-batch {}, global batch {}, recompute {}, zero {}", p.tp,
                                                        p.sp ? " (sp)" : "", p.pp, p.vpp > 1 ? fmt::format(" (vpp {})", p.vpp) : "", p.dp,
                                                        p.cp > 1 ? fmt::format(" x cp {} ({})", p.cp, workload::cp_kind_name(p.cp_kind)) : "",
                                                        s.model->is_moe() ? fmt::format(", ep {} etp {}{}", p.ep, p.expert_tp(),
                                                                                        p.overlap.ep_comm ? " (all-to-all overlapped)" : "")
                                                                          : "",
                                                        workload::schedule_text(p), p.micro_batch, p.global_batch, workload::recompute_text(p), p.zero));
  out += fmt::format("Iteration   {} (80% interval {})   {} tokens/s   {} samples/s\n", seconds(r.iteration),
                     interval_text(interval_of(bundled_error_model(), r, s.training->precision)), format_number(r.tokens_per_s, 6),
                     format_number(r.samples_per_s));
  out += fmt::format("Per GPU     {} model TFLOP/s   MFU {}%   HFU {}%\n\n", format_number(r.model_tflops_per_gpu),
                     format_number(100 * r.mfu, 3), format_number(100 * r.hfu, 3));
  out += stage_table(r) + "\n";
  out += "Critical path\n";
  const std::size_t shown = std::min<std::size_t>(6, r.critical_path.size());
  for (std::size_t i = 0; i < shown; ++i) {
    out += fmt::format("  {:<32} {:>10}  {:>5}%\n", r.critical_path[i].what, seconds(r.critical_path[i].time),
                       format_number(100 * r.critical_path[i].time.value() / r.iteration.value(), 3));
  }
  out += r.memory.fits() ? "Memory      fits\n" : fmt::format("Memory      {}\n", *r.memory.problem());
  if (r.extrapolated_rounds > 0) {
    out += fmt::format("Replay      steady state: {} rounds of {} micro-batches added after three replayed the same (--full-replay replays all)\n",
                       r.extrapolated_rounds, std::max(1, s.plan->pp));
  }
  return out;
}

// The trace, and a line on stderr saying what was written (stdout may be the JSON result).
void write_trace(const std::string& path, const std::string& links, const workload::TaskGraph& graph, const sim::Timeline& timeline,
                 const topology::Cluster& cluster) {
  OutputFile file(path, "--trace", "the trace file");
  sim::TraceOptions options;
  options.links = links == "none" ? sim::TraceLinks::none : links == "all" ? sim::TraceLinks::all : sim::TraceLinks::busiest;
  const auto summary = sim::write_chrome_trace(file.stream(), graph, timeline, cluster, options);
  file.close();  // a full disk shows when the buffers are written
  std::cerr << fmt::format("trace: {} ({}{}, {} events; link counters: {} of the {} links that carried traffic)\n", path,
                           format_bytes(Bytes(static_cast<double>(file.size()))), file.compressed() ? " gzip" : "", summary.events, summary.links,
                           summary.links_busy);
}

struct SimulateOptions {
  std::string scenario;
  std::vector<std::string> set;
  bool json = false;
  bool full = false;
  bool full_replay = false;
  std::string trace;
  std::string trace_links = "busiest";
  std::string plan;
  std::string megatron_args;
  bool ignore_unknown_flags = false;
  bool fail_on_oom = false;
};

void declare_options(CLI::App& cmd, SimulateOptions& o) {
  cmd.add_option("scenario", o.scenario, "scenario YAML with cluster, model, training and plan")->required();
  cmd.add_option("--set", o.set, "override a scenario key: --set plan.tp=4, --set cluster.node.nics.bandwidth=800Gb/s (repeatable)");
  cmd.add_flag("--json", o.json, "print JSON instead of tables");
  cmd.add_flag("--full", o.full, "simulate every replica's traffic separately instead of by symmetry (a check on small clusters: refused past 2 million replica transfers)");
  cmd.add_flag("--full-replay", o.full_replay,
               "replay every micro-batch (by default a long pipeline's warm-up, three steady rounds and cool-down are replayed and "
               "the other rounds added once they repeat)");
  cmd.add_option("--trace", o.trace, "write a Chrome trace (Perfetto, chrome://tracing) to this file; gzip-compressed when it ends in .gz");
  cmd.add_option("--trace-links", o.trace_links, "link load counters in the trace: none, busiest (the 16 that carry the most, default) or all")
      ->check(CLI::IsMember({"none", "busiest", "all"}));
  cmd.add_option("--plan", o.plan, "simulate this plan file (parasim plan --out writes best_plan.yaml) instead of the scenario's plan");
  cmd.add_option("--from-megatron-args", o.megatron_args,
                 "simulate the plan of a Megatron-LM launch: launch_megatron.sh, an argument file, or the arguments quoted")
      ->excludes("--plan");
  cmd.add_flag("--ignore-unknown-flags", o.ignore_unknown_flags, "with --from-megatron-args: skip flags parasim does not know, listing them");
  cmd.add_flag("--fail-on-oom", o.fail_on_oom, "exit with code 3 when the plan does not fit in GPU memory (the result is printed either way)");
}

int run_simulate(const SimulateOptions& o) {
  auto s = sim::load_scenario(o.scenario, o.set);
  if (!o.plan.empty() || !o.megatron_args.empty()) {
    if (!s.model || !s.training) s.require_workload();
  }
  if (!o.plan.empty()) s.plan = sim::load_plan(o.plan, *s.model, s.cluster.gpus(), s.training->seq_len);
  if (!o.megatron_args.empty()) s.plan = read_megatron_source(o.megatron_args, s, o.ignore_unknown_flags);
  sim::Timeline timeline;
  sim::SimOptions options;
  options.full = o.full;
  options.full_replay = o.full_replay;
  const auto run = run_simulation(s, o.scenario, options, o.trace.empty() ? nullptr : &timeline);
  const auto& result = run.result;
  if (!o.trace.empty()) write_trace(o.trace, o.trace_links, run.graph, timeline, run.cluster);
  std::cout << (o.json ? simulate_json(s, result).dump(2) + "\n" : to_text(s, result));
  if (o.fail_on_oom && !result.memory.fits()) {
    std::cerr << fmt::format("parasim: simulate: {}\n", *result.memory.problem());
    return 3;
  }
  return 0;
}

}  // namespace

Action add_simulate_command(CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  auto* cmd = app.add_subcommand("simulate", "Simulate one training iteration: time, throughput, MFU, where the time goes, memory");
  cmd->footer(
      "Each stage's time splits into its compute by phase; exposed tp/dp/pp/cp/ep, the communication its\n"
      "compute waited for (its own collectives, the transfer bringing its input); and bubble, the time it\n"
      "waited for other stages (pipeline fill and drain).\n"
      "Examples:\n"
      "  parasim simulate scenarios/default.yaml --trace default.json.gz\n"
      "  parasim simulate scenarios/default.yaml --trace default.json --trace-links all\n"
      "  parasim simulate scenarios/default.yaml --plan plan/best_plan.yaml --json\n"
      "  parasim simulate scenarios/default.yaml --from-megatron-args plan/launch_megatron.sh\n"
      "  parasim simulate scenarios/default.yaml --set plan.pp=1 --set plan.vpp=1 --set plan.dp=128 --fail-on-oom  # exit 3");
  declare_options(*cmd, *o);
  return [o]() { return run_simulate(*o); };
}

}  // namespace parasim::cli
