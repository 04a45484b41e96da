// parasim plan <scenario>: the fastest plan that fits, found by the planner and confirmed by the
// simulator; parasim plan --list-space --gpus N: Galvatron's per-layer search space.
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.hpp"
#include "cli/launch_files.hpp"
#include "cli/plan_report.hpp"
#include "cli/plan_search.hpp"
#include "cli/located.hpp"
#include "cli/prediction_interval.hpp"
#include "cli/progress_bar.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "planner/launch.hpp"
#include "planner/search.hpp"
#include "planner/space.hpp"
#include "sim/measured_run.hpp"
#include "sim/scenario.hpp"
#include "sim/validation.hpp"

namespace parasim::cli {
namespace {

struct Options {
  PlanSearchOptions search;
  bool list_space = false;
  int gpus = 0;
  bool json = false;
  bool wide = false;
  bool explain = false;
  int top = 10;
  std::string out;
  std::string published;
  std::vector<std::string> rows;
  std::string hardware = std::string(PARASIM_SOURCE_DIR) + "/scenarios/hardware";
};

int list_space(const Options& o) {
  if (o.gpus < 1 || (o.gpus & (o.gpus - 1)) != 0) {
    throw InputError({"", 0, 0}, "--gpus", fmt::format("{} is not a power of two (Galvatron's space splits GPUs in powers of two)", o.gpus));
  }
  const auto all = planner::galvatron_space(o.gpus, true);
  const auto pruned = planner::galvatron_space(o.gpus, false);
  auto kept = [&](const planner::LayerStrategy& s) { return std::find(pruned.begin(), pruned.end(), s) != pruned.end(); };
  if (o.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& s : all) list.push_back({{"pp", s.pp}, {"strategy", planner::strategy_name(s)}, {"kept", kept(s)}});
    nlohmann::json j = {{"gpus", o.gpus}, {"strategies", all.size()}, {"without_dp_with_sdp", pruned.size()}, {"space", list}};
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  Table t({"#", "pp", "per-layer strategy (innermost level first)", "DP+SDP rule"}, {Table::Align::right, Table::Align::right, Table::Align::left, Table::Align::left});
  for (std::size_t i = 0; i < all.size(); ++i) {
    t.add({fmt::format("{}", i + 1), fmt::format("{}", all[i].pp), planner::strategy_name(all[i]), kept(all[i]) ? "kept" : "pruned (dp with sdp)"});
  }
  std::cout << t.render();
  std::cout << fmt::format("\n{} GPUs: {} per-layer strategies; {} without mixing DP and SDP (Galvatron's pruning)\n", o.gpus, all.size(), pruned.size());
  return 0;
}

// Where an iteration goes, averaged over stages (each stage's parts add up to the iteration).
struct Breakdown {
  std::vector<std::pair<std::string, double>> parts;
};
Breakdown breakdown(const sim::Result& r) {
  const double n = std::max<std::size_t>(1, r.stages.size());
  double f = 0, b = 0, rc = 0, opt = 0, bubble = 0;
  std::array<double, workload::kCommDims> exposed{};
  for (const auto& s : r.stages) {
    f += s.forward.value() / n;
    b += s.backward.value() / n;
    rc += s.recompute.value() / n;
    opt += s.optimizer.value() / n;
    bubble += s.bubble.value() / n;
    for (int d = 0; d < workload::kCommDims; ++d) exposed[static_cast<std::size_t>(d)] += s.exposed[static_cast<std::size_t>(d)].value() / n;
  }
  Breakdown out;
  out.parts = {{"forward compute", f}, {"backward compute", b}, {"recompute", rc}, {"optimizer", opt}, {"pipeline bubble", bubble}};
  for (int d = 0; d < workload::kCommDims; ++d) {
    out.parts.push_back({fmt::format("exposed {} communication", workload::comm_dim_name(static_cast<workload::CommDim>(d))), exposed[static_cast<std::size_t>(d)]});
  }
  return out;
}

double peak_memory(const sim::Result& r) { return r.memory.peak().value(); }

std::string explain(const planner::RankedPlan& winner, const planner::RankedPlan& other, const std::string& what) {
  const auto a = breakdown(winner.simulated), b = breakdown(other.simulated);
  std::vector<std::tuple<double, std::string, double, double>> diffs;
  for (std::size_t i = 0; i < a.parts.size(); ++i) {
    const double d = b.parts[i].second - a.parts[i].second;
    diffs.emplace_back(-std::fabs(d), a.parts[i].first, a.parts[i].second, b.parts[i].second);
  }
  std::stable_sort(diffs.begin(), diffs.end(), [](const auto& x, const auto& y) { return std::get<0>(x) < std::get<0>(y); });
  const double gap = other.simulated.iteration.value() - winner.simulated.iteration.value();
  const std::string title = fmt::format("Why the best plan beats {} ({}):", what, planner::plan_name(other.plan));
  const std::string times = fmt::format("{} vs {} per iteration, {:+.1f}%", format_duration(winner.simulated.iteration),
                                        format_duration(other.simulated.iteration), 100 * gap / winner.simulated.iteration.value());
  std::string out = display_width(title) + 1 + display_width(times) <= Table::kNoteWidth ? title + " " + times + "\n" : labelled_lines("", title) + "  " + times + "\n";
  Table t({"cost (mean over stages)", "best", what, "difference"}, {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right});
  for (const auto& [neg, name, x, y] : diffs) {
    if (std::fabs(y - x) < 1e-6 && x < 1e-6) continue;
    t.add({name, format_duration(Seconds(x)), format_duration(Seconds(y)), (y >= x ? "+" : "-") + format_duration(Seconds(std::fabs(y - x)))});
  }
  out += t.render();
  const auto& [neg, name, x, y] = diffs.front();
  out += fmt::format("Largest difference: {} ({} more)\n", name, y >= x ? format_duration(Seconds(y - x)) : "-" + format_duration(Seconds(x - y)));
  if (peak_memory(other.simulated) != peak_memory(winner.simulated)) {
    out += fmt::format("Peak memory: {} vs {}\n", format_bytes(Bytes(peak_memory(winner.simulated))), format_bytes(Bytes(peak_memory(other.simulated))));
  }
  return out;
}

// The top plans: their figures a row each, the plan under its row (runs of the layer split folded),
// or with --wide the plan in its row with the whole split.
std::string top_table(const planner::SearchReport& report, int top, bool wide, const sim::ErrorModel& errors, Precision precision,
                      const LaunchChoice& choice) {
  std::vector<std::string> header{"#", "tie", "iteration", "80% interval", "tokens/s", "TFLOP/s/GPU", "MFU", "peak memory", "headroom", "analytical", "origin"};
  std::vector<Table::Align> align{Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right,
                                  Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::left};
  if (wide) {
    header.insert(header.begin() + 1, "plan");
    align.insert(align.begin() + 1, Table::Align::left);
  }
  Table t(header, align);
  for (std::size_t i = 0; i < report.ranked.size() && static_cast<int>(i) < top; ++i) {
    const auto& r = report.ranked[i];
    const double peak = peak_memory(r.simulated);
    const int tie = choice.tie_group[i];
    const bool recommended = choice.launched == &r;
    std::vector<std::string> row{fmt::format("{}{}", recommended ? "*" : "", i + 1), tie > 0 ? fmt::format("{}", tie) : "-",
                                 format_duration(r.simulated.iteration),
                                 interval_text(interval_of(errors, r.simulated, precision)), format_number(r.simulated.tokens_per_s, 6),
                                 format_number(r.simulated.model_tflops_per_gpu), fmt::format("{:.1f}%", 100 * r.simulated.mfu), format_bytes(Bytes(peak)),
                                 r.fits ? format_bytes(Bytes(report.capacity.value() - peak)) : "OOM", format_duration(r.estimate.iteration),
                                 r.included                 ? "given"
                                 : r.analytical_rank >= 0 ? fmt::format("search #{}", r.analytical_rank + 1)
                                                            : fmt::format("Megatron #{}", r.megatron_rank + 1)};
    if (wide) row.insert(row.begin() + 1, planner::plan_name(r.plan));
    t.add(row);
    if (!wide) t.add_note(planner::plan_name(r.plan, true));
  }
  return t.render();
}

// What was searched, the top plans and how the analytical order held up.
std::string search_text(const PlanSearch& searched, const LaunchChoice& choice, const sim::ErrorModel& errors, const Options& o) {
  const auto& s = searched.scenario;
  const auto& report = searched.report;
  std::string out = fmt::format("Planning   {}: {} on {} x {}, global batch {}, {} tokens per sample\n", s.name, s.model->name, s.cluster.gpus(),
                                s.cluster.node.gpu.name, searched.global_batch, s.training->seq_len);
  out += fmt::format("Searched   {} candidates; {} fit in {} per GPU (capacity {} less headroom {}); {} simulated\n", report.visited, report.scored,
                     format_bytes(report.budget), format_bytes(report.capacity), format_bytes(searched.options.headroom), report.ranked.size());
  if (report.time_limited) {
    out += fmt::format("  time limit {} s reached: {} of {} candidates scanned, {} simulated\n", o.search.time_limit, report.visited, report.considered,
                       report.ranked.size());
  }
  for (const auto& [why, n] : report.rejected) out += fmt::format("  rejected {:>6}  {}\n", n, why);
  for (const auto& [p, why] : report.unusable) out += fmt::format("  given plan not simulated: {} ({})\n", planner::plan_name(p), why);
  out += "\n";
  out += top_table(report, o.top, o.wide, errors, s.training->precision, choice);
  out += fmt::format("tie: plans within {:.1f}% of their group's fastest (the median error of a difference between plans); * recommended\n",
                     100 * (std::exp(errors.difference) - 1));
  // Given plans below the shown rows still get their line.
  for (std::size_t i = static_cast<std::size_t>(o.top); i < report.ranked.size(); ++i) {
    const auto& r = report.ranked[i];
    if (!r.included) continue;
    out += fmt::format("given plan ranks #{}: {} at {}{}\n", i + 1, planner::plan_name(r.plan), format_duration(r.simulated.iteration),
                       r.fits ? "" : " (does not fit)");
  }
  out += fmt::format("\nAnalytical vs simulated order: {} of {} pairs of simulated candidates disagree; {} of the {} more than 2% apart\n",
                     report.discordant, report.pairs, report.distinct_discordant, report.distinct_pairs);
  return out;
}

// DeepSpeed's config for the launched plan, or why there is none (nothing under torchtitan).
std::string deepspeed_text(const sim::Scenario& s, const LaunchChoice& choice) {
  if (choice.torchtitan || !choice.launched) return "";
  if (const auto problem = planner::deepspeed_plan_problem(choice.plan)) return "\nDeepSpeed  no ds_config.json: " + *problem + "\n";
  if (choice.plan.zero < 1) return "";
  std::string out = "\nDeepSpeed config (ds_config.json)\n" + planner::deepspeed_config(choice.plan, *s.training).dump(2) + "\n";
  // DeepSpeed's ZeRO-3 gathers and reduces in smaller pieces than FSDP, which the plan was priced as.
  if (choice.plan.zero == 3 && s.training->zero3_engine != workload::Zero3Engine::deepspeed) {
    out += "  (priced as FSDP runs ZeRO-3; set training.zero3_engine: deepspeed to price it as DeepSpeed runs it)\n";
  }
  return out;
}

// --explain: which costs make the runner-up, the plan launched and every given plan slower than the best.
std::string explain_text(const planner::SearchReport& report, const LaunchChoice& choice) {
  const auto& best = report.ranked.front();
  std::string out = "\n";
  if (report.ranked.size() > 1) out += explain(best, report.ranked[1], "runner-up");
  // The plan launched against the nominal fastest: what the simulator says it gives up, beside the
  // Tied paragraph's reason for taking it.
  if (choice.launched && choice.launched != &best && choice.launched != &report.ranked[1]) {
    out += "\n" + explain(best, *choice.launched, fmt::format("the plan launched (#{})", choice.rank));
    if (!choice.why_recommended.empty()) out += wrapped_paragraph("Launched", "anyway: " + choice.why_recommended);
  }
  for (std::size_t i = 1; i < report.ranked.size(); ++i) {
    if (report.ranked[i].included) out += "\n" + explain(best, report.ranked[i], fmt::format("given plan (#{})", i + 1));
  }
  return out;
}

// One published run against the planner: the same model, cluster, precision and batch planned from
// scratch, the published plan (each way the policy fills its unknown fields) given too.
struct PublishedCheck {
  std::string id;
  std::optional<std::string> skipped;
  std::string published_plan, best_plan;
  double published_s = 0, best_s = 0;
  int published_rank = 0;  // 1-based among the simulated
  bool published_fits = true;
  bool sound = true;       // the planner's best is at least as fast as the published plan
  std::string why;         // when the published plan is outside the top 10
  std::vector<std::string> unsimulated;  // fillings of the published plan that could not be simulated, with the reason
  std::string explanation;  // with --explain: every cost of the published plan against the best's
};

// Validate's search moves one unprinted field at a time and can stop where a joint change would fit
// (zero 0 forcing recompute when zero 1 and no recompute would do): the published plan as validate
// filled it, then every combination of the unprinted memory fields (zero, sp, recompute), so that
// the published plan is the fastest of them that fits.
std::vector<workload::Plan> published_fillings(const sim::MeasuredRun& run, const workload::Plan& filled) {
  std::vector<workload::Plan> include{filled};
  const std::vector<int> zeros = run.zero ? std::vector<int>{filled.zero} : std::vector<int>{0, 1};
  const std::vector<bool> sps = run.sp || run.tp == 1 ? std::vector<bool>{filled.sp} : std::vector<bool>{true, false};
  const std::vector<workload::Recompute> recomputes =
      run.recompute ? std::vector<workload::Recompute>{filled.recompute}
                    : std::vector<workload::Recompute>{workload::Recompute::none, workload::Recompute::selective, workload::Recompute::full};
  for (int zero : zeros) {
    for (bool sp : sps) {
      for (auto recompute : recomputes) {
        auto p = filled;
        p.zero = zero;
        p.sp = sp;
        p.recompute = recompute;
        if (std::find(include.begin(), include.end(), p) == include.end()) include.push_back(p);
      }
    }
  }
  return include;
}

// Why a published plan that fits ranks outside the top 10: the cost it pays most beyond the best's.
std::string largest_difference(const planner::RankedPlan& best, const planner::RankedPlan& pub) {
  const auto a = breakdown(best.simulated), b = breakdown(pub.simulated);
  std::size_t worst = 0;
  for (std::size_t i = 1; i < a.parts.size(); ++i) {
    if (b.parts[i].second - a.parts[i].second > b.parts[worst].second - a.parts[worst].second) worst = i;
  }
  return fmt::format("{}: {} vs {} in the best plan", a.parts[worst].first, format_duration(Seconds(b.parts[worst].second)),
                     format_duration(Seconds(a.parts[worst].second)));
}

PublishedCheck check_published(const sim::MeasuredRun& run, const Options& o) {
  PublishedCheck c;
  c.id = run.id;
  const auto built = sim::row_scenario(run, o.hardware);
  if (const auto* why = std::get_if<std::string>(&built)) {
    c.skipped = *why;
    return c;
  }
  const auto& row = std::get<sim::RowScenario>(built);
  planner::SearchOptions options;
  options.simulate_top = o.search.simulate_top;
  options.threads = o.search.threads > 0 ? o.search.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The published plan with its unprinted fields filled as validate fills them (the fastest choice
  // that fits under the fill policy), so that both commands speak of the same plan.
  sim::ValidateOptions vo;
  vo.hardware_dir = o.hardware;
  const auto validated = sim::validate({run}, {o.published}, vo);
  const auto& filled = validated.rows.front();
  if (filled.skipped) {
    c.skipped = *filled.skipped;
    return c;
  }
  options.include = published_fillings(run, filled.chosen);
  const auto report = planner::search(row.cluster, row.model, row.training, row.candidates.front().global_batch,
                                      calibrate::default_profile(row.cluster.node.gpu.name), options);
  for (const auto& [plan, why] : report.unusable) c.unsimulated.push_back(fmt::format("{}: {}", planner::plan_name(plan), why));
  if (report.ranked.empty()) {
    c.skipped = "nothing simulated";
    return c;
  }
  // The published plan, as simulated among the candidates: the first given one (fitting first).
  const auto given = std::find_if(report.ranked.begin(), report.ranked.end(), [](const auto& r) { return r.included; });
  if (given == report.ranked.end()) {
    c.skipped = report.unusable.empty() ? "the published plan was not simulated" : report.unusable.front().second;
    return c;
  }
  const std::size_t published = static_cast<std::size_t>(given - report.ranked.begin());
  const auto& best = report.ranked.front();
  const auto& pub = *given;
  c.published_plan = planner::plan_name(pub.plan);
  c.best_plan = planner::plan_name(best.plan);
  c.published_s = pub.simulated.iteration.value();
  c.best_s = best.simulated.iteration.value();
  c.published_rank = static_cast<int>(published) + 1;
  c.published_fits = pub.fits;
  c.sound = !pub.fits || best.simulated.iteration <= pub.simulated.iteration;
  if (o.explain && published > 0) c.explanation = explain(best, pub, fmt::format("the published plan of {} (#{})", run.id, published + 1));
  if (!pub.fits) {
    c.why = fmt::format("the published plan needs {} per GPU under parasim's memory model, more than {}", format_bytes(Bytes(peak_memory(pub.simulated))),
                        format_bytes(report.budget));
  } else if (published >= 10) {
    c.why = largest_difference(best, pub);
  }
  return c;
}

// The file's rows, or those --rows names, in its order.
std::vector<sim::MeasuredRun> published_rows(const Options& o) {
  auto runs = sim::load_measured_runs(o.published);
  if (o.rows.empty()) return runs;
  std::vector<sim::MeasuredRun> kept;
  for (const auto& id : o.rows) {
    const auto it = std::find_if(runs.begin(), runs.end(), [&](const sim::MeasuredRun& r) { return r.id == id; });
    if (it == runs.end()) throw InputError({o.published, 0, 0}, "--rows", fmt::format("no row '{}' in the file", id));
    kept.push_back(*it);
  }
  return kept;
}

struct PublishedTally {
  int checked = 0, sound = 0, top10 = 0;
  double speedup_sum = 0;
};

PublishedTally tally(const std::vector<PublishedCheck>& checks) {
  PublishedTally t;
  for (const auto& c : checks) {
    if (c.skipped) continue;
    ++t.checked;
    t.sound += c.sound;
    t.top10 += c.published_rank <= 10;
    t.speedup_sum += c.published_s / c.best_s;
  }
  return t;
}

nlohmann::json published_json(const Options& o, const std::vector<PublishedCheck>& checks, const PublishedTally& n) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& c : checks) {
    if (c.skipped) {
      rows.push_back({{"id", c.id}, {"skipped", *c.skipped}});
      continue;
    }
    rows.push_back({{"id", c.id},
                    {"published_plan", c.published_plan},
                    {"published_iteration_s", c.published_s},
                    {"published_rank", c.published_rank},
                    {"published_fits", c.published_fits},
                    {"best_plan", c.best_plan},
                    {"best_iteration_s", c.best_s},
                    {"sound", c.sound},
                    {"unsimulated_fillings", c.unsimulated},
                    {"explanation", c.explanation},
                    {"why", c.why}});
  }
  return {{"file", o.published}, {"rows", rows}, {"checked", n.checked}, {"sound", n.sound}, {"published_in_top_10", n.top10}};
}

// Each published row against the best plan found; where the table would pass 120 columns, the best
// plan and the verdict go under their row.
Table published_table(const std::vector<PublishedCheck>& checks, bool best_as_columns) {
  std::vector<std::string> header = {"row", "published plan (simulated)", "time", "rank"};
  if (best_as_columns) header.insert(header.end(), {"best plan found", "time", "speed-up", "verdict"});
  else header.insert(header.end(), {"best's time", "speed-up"});
  std::vector<Table::Align> align(header.size(), Table::Align::right);
  align[0] = align[1] = Table::Align::left;
  if (best_as_columns) align[4] = align[7] = Table::Align::left;
  Table t(header, align);
  for (const auto& c : checks) {
    if (c.skipped) {
      t.add({c.id, "skipped: " + *c.skipped});
      continue;
    }
    const std::string verdict = !c.sound ? "UNSOUND: published plan faster" : c.why.empty() ? "ok" : c.why;
    std::vector<std::string> row = {c.id, c.published_plan, format_duration(Seconds(c.published_s)), fmt::format("{}", c.published_rank)};
    if (best_as_columns) row.insert(row.end(), {c.best_plan, format_duration(Seconds(c.best_s)), fmt::format("{:.2f}x", c.published_s / c.best_s), verdict});
    else row.insert(row.end(), {format_duration(Seconds(c.best_s)), fmt::format("{:.2f}x", c.published_s / c.best_s)});
    t.add(row);
    if (!best_as_columns) t.add_note(fmt::format("best plan found: {} · {}", c.best_plan, verdict));
  }
  return t;
}

std::string published_text(const std::vector<PublishedCheck>& checks, const PublishedTally& n) {
  const auto wide = published_table(checks, true);
  std::string out = wide.columns() <= Table::kNoteWidth ? wide.render() : published_table(checks, false).render();
  for (const auto& c : checks) {
    if (!c.explanation.empty()) out += "\n" + c.explanation;
  }
  out += "\n" + labelled_lines("", fmt::format("{} rows planned: the best plan found is at least as fast as the published one on {}, the published plan "
                                              "is in the top 10 on {}, mean speed-up {:.2f}x",
                                              n.checked, n.sound, n.top10, n.checked ? n.speedup_sum / n.checked : 0.0));
  return out;
}

int check_published_file(const Options& o) {
  const auto runs = published_rows(o);
  std::vector<PublishedCheck> checks;
  {
    ProgressBar bar("planning rows", runs.size(), !o.json);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      checks.push_back(check_published(runs[i], o));
      bar.set_done(i + 1);
    }
  }
  const auto n = tally(checks);
  if (o.json) {
    std::cout << published_json(o, checks, n).dump(2) << "\n";
  } else {
    std::cout << published_text(checks, n);
  }
  return n.sound == n.checked ? 0 : 3;
}

}  // namespace

Action add_plan_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("plan", "Search hybrid parallel plans: the fastest that fits, with launch arguments");
  cmd->footer(
      "Examples:\n"
      "  parasim plan scenarios/default.yaml --out plan/            # plan/launch_megatron.sh runs the launched plan\n"
      "  parasim plan scenarios/default.yaml --framework megatron --fix tp=8 --max-pp 8 --explain\n"
      "  parasim plan scenarios/default.yaml --from-megatron-args plan/launch_megatron.sh   # rank your own launch\n"
      "  parasim plan --list-space --gpus 8\n"
      "  parasim plan --published ../shared/validation/megatron.yaml --json");
  o->search.add_to(cmd);
  cmd->add_flag("--list-space", o->list_space, "list Galvatron's per-layer strategies for --gpus GPUs and exit");
  cmd->add_option("--gpus", o->gpus, "GPUs for --list-space");
  cmd->add_flag("--json", o->json, "print JSON instead of tables");
  cmd->add_flag("--wide", o->wide, "one line a plan with its whole layer split (wider than 120 columns)");
  cmd->add_flag("--explain", o->explain, "say which costs make the runner-up (and every plan given) slower than the best");
  cmd->add_option("--top", o->top, "plans to show")->check(CLI::Range(1, 1000));
  cmd->add_option("--out", o->out,
                  "directory for the launched plan: best_plan.yaml, launch_megatron.sh, megatron_args.txt, ds_config.json (where DeepSpeed runs the plan), and plans.json");
  cmd->add_option("--published", o->published,
                  "plan every row of a measured-run file (../shared/validation/*.yaml) and compare with the published plan; exit 3 if one is faster "
                  "than the plan found");
  cmd->add_option("--rows", o->rows, "with --published: only these row ids (repeatable)");
  cmd->add_option("--hardware", o->hardware, "with --published: directory of the bundled hardware files (default: the project's scenarios/hardware)");
  return [o]() {
    if (o->list_space) return list_space(*o);
    if (!o->published.empty()) return check_published_file(*o);
    if (o->search.scenario.empty()) throw InputError({"", 0, 0}, "scenario", "missing: parasim plan <scenario.yaml> (or --list-space --gpus N)");
    const auto searched = run_plan_search(o->search, !o->json);
    const auto errors = bundled_error_model();
    const auto choice = choose_launch(searched.report, searched.scenario, errors, searched.options.constraints.framework);
    const auto doc = plan_document(searched, choice, errors);
    if (!o->out.empty()) write_launch_files(o->out, choice, searched.scenario, doc);
    if (o->json) {
      std::cout << doc.dump(2) << "\n";
      return 0;
    }
    std::cout << search_text(searched, choice, errors, *o) + launch_summary(choice) + deepspeed_text(searched.scenario, choice) +
                     (o->explain ? explain_text(searched.report, choice) : "");
    return 0;
  };
}

}  // namespace parasim::cli
