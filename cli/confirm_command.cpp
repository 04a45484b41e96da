// parasim confirm <scenario> --top K --steps N --out DIR: the top K plans Megatron-LM (or, with
// --framework torchtitan, torchtitan) runs, written as launch scripts of N iterations with runners
// (Slurm and per node) that run them one after another; parasim confirm --read DIR: their logs read
// back and ranked by measured time beside the predictions.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/confirm_logs.hpp"
#include "cli/commands.hpp"
#include "cli/launch_files.hpp"
#include "cli/plan_search.hpp"
#include "cli/table.hpp"
#include "core/bundled_files.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "planner/confirm_runner.hpp"
#include "planner/launch.hpp"

namespace parasim::cli {
namespace {

constexpr int kManifestVersion = 1;

struct Options {
  PlanSearchOptions search;
  int top = 4;
  int steps = 20;
  std::string out;
  std::string extra_args;
  std::string read;
  bool json = false;
};

bool on_torchtitan(const PlanSearch& searched) { return searched.options.constraints.framework == planner::Constraints::Framework::torchtitan; }

const planner::ConfirmFramework& framework_of(const PlanSearch& searched) {
  return on_torchtitan(searched) ? planner::kConfirmTorchtitan : planner::kConfirmMegatron;
}

// A plan chosen for confirmation: its rank among the simulated and its launch (Megatron-LM's
// arguments; torchtitan's job config is written from the plan).
struct Candidate {
  const planner::RankedPlan* ranked = nullptr;
  int rank = 0;
  workload::Plan plan;
  planner::MegatronLaunch launch;
};

// The arguments a Megatron-LM plan's log must show to be its run: the model's shape, the parallel plan, the batch.
nlohmann::json checked_arguments(const planner::MegatronLaunch& launch) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : launch.groups) {
    if (g.name != "MODEL_ARGS" && g.name != "PARALLEL_ARGS" && g.name != "BATCH_ARGS") continue;
    for (const auto& a : g.arguments) out.push_back({a.flag, a.value});
  }
  return out;
}

std::optional<std::string> launch_problem(const PlanSearch& searched, const workload::Plan& plan) {
  return on_torchtitan(searched) ? planner::torchtitan_plan_problem(plan) : planner::megatron_plan_problem(plan, *searched.scenario.model);
}

// The candidate's launch and the text that tells two launches apart: two plans parasim tells apart
// that the framework's settings do not (a layer split it balances alike) would be the same run twice.
std::string make_launch(Candidate& c, const PlanSearch& searched, int steps) {
  const auto& s = searched.scenario;
  if (on_torchtitan(searched)) {
    c.plan = c.ranked->plan;
    return planner::torchtitan_toml(c.plan, *s.model, *s.training, {}, s.cluster.node.gpus, steps);
  }
  c.plan = planner::megatron_form(c.ranked->plan, *s.model);
  c.launch = planner::megatron_launch(c.plan, *s.model, *s.training, s.cluster.node.gpu, steps);
  return planner::megatron_argument_line(c.launch);
}

std::vector<Candidate> top_launchable(const PlanSearch& searched, int top, int steps, const planner::MegatronArgumentGroup& site) {
  std::vector<Candidate> out;
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < searched.report.ranked.size() && static_cast<int>(out.size()) < top; ++i) {
    const auto& r = searched.report.ranked[i];
    if (!r.fits || launch_problem(searched, r.plan)) continue;
    Candidate c{&r, static_cast<int>(i) + 1, {}, {}};
    const auto text = make_launch(c, searched, steps);
    if (std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    seen.push_back(text);
    if (!on_torchtitan(searched)) c.launch = planner::with_site_arguments(std::move(c.launch), site);
    out.push_back(std::move(c));
  }
  return out;
}

std::string plan_dir(std::size_t i) { return fmt::format("plan-{:02}", i + 1); }

std::string predicted_text(const planner::RankedPlan& r) {
  return fmt::format("{} per iteration, peak {} per GPU", format_duration(r.simulated.iteration), format_bytes(r.simulated.memory.peak()));
}

// Plan i's folder, emptied of what an earlier confirm left in it: its logs, and the launch files
// of the other framework.
std::filesystem::path fresh_plan_dir(const std::filesystem::path& dir, std::size_t i) {
  std::error_code ec;
  const auto sub = dir / plan_dir(i);
  std::filesystem::create_directories(sub, ec);
  for (const auto& entry : std::filesystem::directory_iterator(sub, ec)) {
    if (entry.path().extension() == ".log") std::filesystem::remove(entry.path(), ec);  // an earlier run's logs are not this plan's
  }
  for (const char* stale : {"launch_megatron.sh", "megatron_args.txt", "launch_torchtitan.sh", "torchtitan.toml"}) {
    std::filesystem::remove(sub / stale, ec);  // an earlier confirm's launch for the other framework
  }
  return sub;
}

// Writes plan i's launch files into its folder; its entry of confirm.json.
nlohmann::json write_plan(const Options& o, const PlanSearch& searched, const std::vector<Candidate>& chosen, std::size_t i,
                          const std::filesystem::path& sub) {
  const auto& s = searched.scenario;
  const auto& c = chosen[i];
  const planner::LaunchHeader header{{fmt::format("parasim confirm {}: plan {} of {} on {} x {}", s.name, i + 1, chosen.size(), s.cluster.gpus(),
                                                  s.cluster.node.gpu.name),
                                      fmt::format("Launches {}", planner::plan_name(c.plan)),
                                      fmt::format("Predicted: {} (#{} of {} simulated)", predicted_text(*c.ranked), c.rank, searched.report.ranked.size()),
                                      fmt::format("{} iterations; the runners in .. write its logs here, parasim confirm --read reads them", o.steps)},
                                     s.cluster.nodes, s.cluster.node.gpus};
  nlohmann::json entry = {{"dir", plan_dir(i)},
                          {"plan", planner::plan_name(c.plan)},
                          {"simulated_rank", c.rank},
                          {"predicted_iteration_s", c.ranked->simulated.iteration.value()},
                          {"predicted_memory_bytes", c.ranked->simulated.memory.peak().value()}};
  if (on_torchtitan(searched)) {
    write_output_file(sub / "launch_torchtitan.sh", planner::torchtitan_launch_script(header), true);
    write_output_file(sub / "torchtitan.toml", planner::torchtitan_toml(c.plan, *s.model, *s.training, header.lines, s.cluster.node.gpus, o.steps), false);
    nlohmann::json checked = nlohmann::json::array();
    for (const auto& [key, value] : planner::torchtitan_settings(c.plan, *s.training)) checked.push_back({key, std::to_string(value)});
    entry["checked_arguments"] = checked;
  } else {
    write_output_file(sub / "launch_megatron.sh", planner::megatron_launch_script(c.launch, header), true);
    write_output_file(sub / "megatron_args.txt", planner::megatron_argument_file(c.launch, header), false);
    entry["megatron_arguments"] = planner::megatron_argument_line(c.launch);
    entry["checked_arguments"] = checked_arguments(c.launch);
  }
  return entry;
}

// confirm.json without its plans: what ran where, and which framework release.
nlohmann::json confirm_manifest(const Options& o, const PlanSearch& searched) {
  const auto& s = searched.scenario;
  nlohmann::json manifest = {{"parasim_confirm", kManifestVersion},
                             {"scenario", s.name},
                             {"model", s.model->name},
                             {"gpu", s.cluster.node.gpu.name},
                             {"gpus", s.cluster.gpus()},
                             {"nodes", s.cluster.nodes},
                             {"gpus_per_node", s.cluster.node.gpus},
                             {"steps", o.steps},
                             {"framework", on_torchtitan(searched) ? "torchtitan" : "megatron-lm"}};
  if (on_torchtitan(searched)) {
    manifest["torchtitan_release"] = std::string(planner::kTorchtitanRelease);
    manifest["torchtitan_commit"] = std::string(planner::kTorchtitanCommit);
  } else {
    manifest["megatron_lm_commit"] = std::string(planner::kMegatronCommit);
    manifest["site_arguments"] = o.extra_args;
  }
  return manifest;
}

nlohmann::json write_confirm(const Options& o, const PlanSearch& searched, const std::vector<Candidate>& chosen) {
  const auto& s = searched.scenario;
  const std::filesystem::path dir(o.out);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  nlohmann::json plans = nlohmann::json::array();
  planner::ConfirmRunner runner;
  runner.framework = framework_of(searched);
  runner.nodes = s.cluster.nodes;
  runner.gpus_per_node = s.cluster.node.gpus;
  std::vector<double> predicted;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    plans.push_back(write_plan(o, searched, chosen, i, fresh_plan_dir(dir, i)));
    runner.plan_dirs.push_back(plan_dir(i));
    predicted.push_back(chosen[i].ranked->simulated.iteration.value());
  }
  runner.header = {fmt::format("parasim confirm {}: the {} fastest plans {} runs of {} on {} x {},", s.name, chosen.size(),
                               runner.framework.name, s.model->name, s.cluster.gpus(), s.cluster.node.gpu.name),
                   fmt::format("{} iterations each, predicted fastest first (confirm.json has the predictions).", o.steps)};
  runner.wall_seconds = planner::confirm_wall_seconds(predicted, o.steps);
  write_output_file(dir / "confirm.sbatch", planner::confirm_sbatch(runner), true);
  write_output_file(dir / "run_on_node.sh", planner::confirm_node_script(runner), true);
  auto manifest = confirm_manifest(o, searched);
  manifest["plans"] = plans;
  write_output_file(dir / "confirm.json", manifest.dump(2) + "\n", false);
  return manifest;
}

std::string written_text(const Options& o, const PlanSearch& searched, const std::vector<Candidate>& chosen) {
  const auto& s = searched.scenario;
  Table t({"#", "plan", "predicted", "peak memory", "simulated rank", "folder"},
          {Table::Align::right, Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::left});
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    const auto& c = chosen[i];
    t.add({fmt::format("{}", i + 1), planner::plan_name(c.plan), format_duration(c.ranked->simulated.iteration),
           format_bytes(c.ranked->simulated.memory.peak()), fmt::format("{}", c.rank), plan_dir(i)});
  }
  std::string out = fmt::format("Confirming {}: {} on {} x {}, {} iterations a plan\n\n", s.name, s.model->name, s.cluster.gpus(), s.cluster.node.gpu.name, o.steps);
  out += t.render();
  const auto& f = framework_of(searched);
  if (static_cast<int>(chosen.size()) < o.top) out += fmt::format("(only {} of the plans that fit are ones {} runs)\n", chosen.size(), f.name);
  double training = 0;
  for (const auto& c : chosen) training += o.steps * c.ranked->simulated.iteration.value();
  const auto home = fmt::format("{}=/path/to/{}", f.home_variable, f.name);
  out += fmt::format("\nRun them ({} of training by the predictions, plus each plan's start-up):\n", format_duration(Seconds(training)));
  out += fmt::format("  cd {} && {} sbatch confirm.sbatch\n", o.out, home);
  out += fmt::format("or, without Slurm, on every node at once (NODE_RANK, MASTER_ADDR set):\n  {} bash {}/run_on_node.sh\n", home, o.out);
  out += "then rank them by measured time:\n  parasim confirm --read " + o.out + "\n";
  return out;
}

// --- confirm --read -------------------------------------------------------------------------------

struct Manifest {
  nlohmann::json doc;
  std::vector<calibrate::ConfirmedPlan> plans;
};

template <typename T>
T field(const nlohmann::json& j, const std::string& key, const std::string& file, const std::string& path) {
  if (!j.contains(key)) throw InputError({file, 0, 0}, path + key, "missing: not a confirm.json written by parasim confirm");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception&) {
    throw InputError({file, 0, 0}, path + key, "has the wrong type");
  }
}

Manifest read_manifest(const std::filesystem::path& dir) {
  const auto file = (dir / "confirm.json").string();
  std::ifstream in(file);
  if (!in) throw InputError({file, 0, 0}, "--read", "cannot read it: is this a folder written by parasim confirm --out?");
  Manifest m;
  try {
    m.doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError({file, 0, 0}, {}, fmt::format("not JSON (byte {})", e.byte));
  }
  if (!m.doc.is_object()) throw InputError({file, 0, 0}, {}, "not a confirm.json written by parasim confirm");
  if (field<int>(m.doc, "parasim_confirm", file, "") != kManifestVersion) throw InputError({file, 0, 0}, "parasim_confirm", "an unknown version");
  // Folders written before torchtitan could be confirmed name no framework: Megatron-LM's.
  const auto framework = m.doc.contains("framework") ? field<std::string>(m.doc, "framework", file, "") : std::string("megatron-lm");
  if (framework != "megatron-lm" && framework != "torchtitan") throw InputError({file, 0, 0}, "framework", fmt::format("'{}' is not megatron-lm or torchtitan", framework));
  const auto plans = field<nlohmann::json>(m.doc, "plans", file, "");
  if (!plans.is_array()) throw InputError({file, 0, 0}, "plans", "is not a list");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const auto& p = plans[i];
    const auto at = fmt::format("plans[{}].", i);
    calibrate::ConfirmedPlan c{field<std::string>(p, "dir", file, at), field<std::string>(p, "plan", file, at),
                               field<double>(p, "predicted_iteration_s", file, at), field<double>(p, "predicted_memory_bytes", file, at) / (1 << 20), {},
                               framework};
    if (c.dir.empty() || c.dir.find('/') != std::string::npos || c.dir.find("..") != std::string::npos) {
      throw InputError({file, 0, 0}, at + "dir", fmt::format("'{}' is not a folder name", c.dir));
    }
    for (const auto& a : field<nlohmann::json>(p, "checked_arguments", file, at)) {
      if (!a.is_array() || a.size() != 2 || !a[0].is_string() || !a[1].is_string()) throw InputError({file, 0, 0}, at + "checked_arguments", "is not a list of [flag, value]");
      c.arguments.emplace_back(a[0].get<std::string>(), a[1].get<std::string>());
    }
    m.plans.push_back(std::move(c));
  }
  return m;
}

// The measured time of the first plan (in predicted order) that has one.
double first_measured(const calibrate::ConfirmReading& r) {
  for (const auto& x : r.measured) {
    if (x.measured_s) return *x.measured_s;
  }
  return 0;
}

// Ranks by measured time (1 = fastest), 0 for plans without one.
std::vector<int> measured_ranks(const calibrate::ConfirmReading& r) {
  std::vector<int> ranks(r.measured.size(), 0);
  for (std::size_t i = 0; i < r.measured.size(); ++i) {
    if (!r.measured[i].measured_s) continue;
    ranks[i] = 1;
    for (const auto& other : r.measured) ranks[i] += other.measured_s && *other.measured_s < *r.measured[i].measured_s;
  }
  return ranks;
}

// The bundled hardware file of the GPU confirm.json names (what `calibrate fit --gpu` takes), or GPU.
std::string bundled_gpu(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto found = find_bundled_file(std::string(PARASIM_SOURCE_DIR) + "/scenarios/hardware", name);
  return found.file ? found.file->stem().string() : "GPU";
}

std::string signed_percent(double x) { return fmt::format("{:+.1f}%", 100 * x); }

bool read_torchtitan(const Manifest& m) { return !m.plans.empty() && m.plans.front().framework == "torchtitan"; }

std::string read_text(const Manifest& m, const calibrate::ConfirmReading& r, const std::string& dir) {
  // What the logs print as the peak: Megatron-LM's max allocated, torchtitan's max reserved.
  Table t({"#", "plan", "predicted", "measured", "error", "measured rank", "peak modelled", read_torchtitan(m) ? "max reserved" : "max allocated"},
          {Table::Align::right, Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right,
           Table::Align::right, Table::Align::right});
  const auto ranks = measured_ranks(r);
  for (std::size_t i = 0; i < m.plans.size(); ++i) {
    const auto& p = m.plans[i];
    const auto& x = r.measured[i];
    t.add({fmt::format("{}", i + 1), p.plan, format_duration(Seconds(p.predicted_s)), x.measured_s ? format_duration(Seconds(*x.measured_s)) : "-",
           x.measured_s ? signed_percent(p.predicted_s / *x.measured_s - 1) : "-", ranks[i] ? fmt::format("{}", ranks[i]) : "-",
           format_bytes(Bytes(p.predicted_memory_mib * (1 << 20))), x.peak_mib ? format_bytes(Bytes(*x.peak_mib * (1 << 20))) : "-"});
    if (!x.problem.empty()) t.add_note(p.dir + ": " + x.problem);
  }
  std::string out = fmt::format("Confirmed {}: {} on {} x {}, {} iterations a plan (# = predicted order)\n\n", m.doc.value("scenario", "?"),
                                m.doc.value("model", "?"), m.doc.value("gpus", 0), m.doc.value("gpu", "?"), m.doc.value("steps", 0));
  out += t.render();
  if (r.fastest) {
    const bool predicted_fastest = *r.measured[*r.fastest].measured_s == first_measured(r);
    out += fmt::format("\nMeasured fastest: #{} {}{}\n", *r.fastest + 1, m.plans[*r.fastest].plan,
                       *r.fastest == 0        ? " (the predicted fastest)"
                       : predicted_fastest    ? " (the predicted fastest of those that ran)"
                                              : fmt::format(", {:.1f}% faster than the predicted fastest measured",
                                                            100 * (1 - *r.measured[*r.fastest].measured_s / first_measured(r))));
    out += fmt::format("Order: prediction and measurement agree on {} of {} pairs of measured plans{}\n", r.agreeing, r.pairs,
                       r.tied ? fmt::format(" ({} more predicted equally fast)", r.tied) : std::string());
  }
  // torchtitan's every node logs its local rank 0, rank 0's is node 0's. Where a plan did not run, its
  // logs are left out, one a line: calibrate fit refuses a log without step lines.
  const auto gpu = bundled_gpu(m.doc.value("gpu", ""));
  out += "error = predicted / measured - 1 (measured: the median step after the first third). To correct the model:\n";
  if (std::all_of(r.measured.begin(), r.measured.end(), [](const auto& x) { return x.measured_s.has_value(); })) {
    out += fmt::format("  parasim calibrate fit {}/plan-*/{} --gpu {} --out profile.yaml\n", dir, read_torchtitan(m) ? "node0.log" : "*.log", gpu);
    return out;
  }
  out += fmt::format("  parasim calibrate fit --gpu {} --out profile.yaml", gpu);
  for (const auto& x : r.measured) {
    if (!x.measured_s) continue;
    for (const auto& log : x.logs) {
      out += " \\\n      " + log.string();
      if (read_torchtitan(m)) break;
    }
  }
  out += "\n";
  return out;
}

nlohmann::json read_json(const Manifest& m, const calibrate::ConfirmReading& r) {
  const auto ranks = measured_ranks(r);
  nlohmann::json plans = nlohmann::json::array();
  for (std::size_t i = 0; i < m.plans.size(); ++i) {
    const auto& p = m.plans[i];
    const auto& x = r.measured[i];
    nlohmann::json logs = nlohmann::json::array();
    for (const auto& l : x.logs) logs.push_back(l.string());
    plans.push_back({{"dir", p.dir},
                     {"plan", p.plan},
                     {"predicted_rank", i + 1},
                     {"predicted_iteration_s", p.predicted_s},
                     {"measured_iteration_s", x.measured_s ? nlohmann::json(*x.measured_s) : nlohmann::json(nullptr)},
                     {"error", x.measured_s ? nlohmann::json(p.predicted_s / *x.measured_s - 1) : nlohmann::json(nullptr)},
                     {"measured_rank", ranks[i] ? nlohmann::json(ranks[i]) : nlohmann::json(nullptr)},
                     {"steps_used", x.steps_used},
                     {"predicted_memory_mib", p.predicted_memory_mib},
                     {read_torchtitan(m) ? "max_reserved_mib" : "max_allocated_mib", x.peak_mib ? nlohmann::json(*x.peak_mib) : nlohmann::json(nullptr)},
                     {"logs", logs},
                     {"problem", x.problem.empty() ? nlohmann::json(nullptr) : nlohmann::json(x.problem)}});
  }
  return {{"scenario", m.doc.value("scenario", "")}, {"plans", plans}, {"pairs", r.pairs}, {"pairs_agreeing", r.agreeing}, {"pairs_predicted_tied", r.tied},
          {"measured_fastest", r.fastest ? nlohmann::json(m.plans[*r.fastest].dir) : nlohmann::json(nullptr)}};
}

int read_confirm(const Options& o) {
  const auto manifest = read_manifest(o.read);
  const auto reading = calibrate::read_confirmed(manifest.plans, o.read);
  if (!reading.fastest) {
    const std::string first = manifest.plans.empty() ? "confirm.json lists no plan" : manifest.plans.front().dir + ": " + reading.measured.front().problem;
    throw InputError({o.read, 0, 0}, "--read", "no plan has a measured step time: " + first);
  }
  std::cout << (o.json ? read_json(manifest, reading).dump(2) + "\n" : read_text(manifest, reading, o.read));
  return 0;
}

int write_confirm_files(const Options& o) {
  if (o.search.scenario.empty()) throw InputError({"", 0, 0}, "scenario", "missing: parasim confirm <scenario.yaml> --out DIR (or --read DIR)");
  if (o.out.empty()) throw InputError({"", 0, 0}, "--out", "missing: the folder for the launch scripts and runners");
  if (o.search.constraints.framework == "torchtitan" && !o.extra_args.empty()) {
    throw InputError({"", 0, 0}, "--extra-args", "Megatron-LM arguments; a torchtitan launch takes its settings from torchtitan.toml");
  }
  planner::MegatronArgumentGroup site{"SITE_ARGS", {}};
  try {
    site = planner::site_arguments(o.extra_args);
  } catch (const std::invalid_argument& e) {
    throw InputError({"", 0, 0}, "--extra-args", e.what());
  }
  const auto searched = run_plan_search(o.search, !o.json);
  const auto chosen = top_launchable(searched, o.top, o.steps, site);
  if (chosen.empty()) {
    const auto problem = launch_problem(searched, searched.report.ranked.front().plan);
    throw InputError({"", 0, 0}, "", std::string(framework_of(searched).name) + " runs none of the plans that fit" +
                                         (problem ? ": the fastest, " + *problem : std::string()));
  }
  const auto manifest = write_confirm(o, searched, chosen);
  std::cout << (o.json ? manifest.dump(2) + "\n" : written_text(o, searched, chosen));
  return 0;
}

}  // namespace

Action add_confirm_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  o->search.command = "confirm";
  auto* cmd = app.add_subcommand("confirm", "Run the top plans for a few steps on the cluster and rank them by measured time");
  cmd->footer(
      "Examples:\n"
      "  parasim confirm scenarios/jobs/llama2-7b-lab.yaml --top 4 --steps 20 --out confirm/  # then: sbatch confirm.sbatch\n"
      "  parasim confirm scenarios/jobs/llama2-7b-lab.yaml --out confirm/ --extra-args='--data-path /data/my_text_document'\n"
      "  parasim confirm scenarios/jobs/llama3-8b-128k-cp8.yaml --framework torchtitan --out confirm/  # torchtitan configs\n"
      "  parasim confirm --read confirm/            # measured against predicted, after the runs\n"
      "  parasim confirm --read confirm/ --json");
  o->search.add_to(cmd);
  cmd->add_option("--top", o->top, "plans to confirm: the fastest that fit and that Megatron-LM (--framework torchtitan: torchtitan) runs")->check(CLI::Range(1, 32))->capture_default_str();
  cmd->add_option("--steps", o->steps, "training iterations a plan runs (the first third is warm-up)")->check(CLI::Range(4, 100000))->capture_default_str();
  cmd->add_option("--out", o->out, "folder for plan-NN/launch_megatron.sh (torchtitan: launch_torchtitan.sh, torchtitan.toml), confirm.sbatch, run_on_node.sh "
                  "and confirm.json");
  cmd->add_option("--extra-args", o->extra_args,
                  "Megatron-LM arguments every launch adds (not under torchtitan), e.g. --extra-args='--data-path PREFIX --tokenizer-type HuggingFaceTokenizer "
                  "--tokenizer-model NAME' (flags parasim knows, one value each)");
  cmd->add_option("--read", o->read, "a folder confirm wrote, after its runs: rank the plans by measured time beside the predictions");
  cmd->add_flag("--json", o->json, "print JSON instead of tables");
  return [o]() { return o->read.empty() ? write_confirm_files(*o) : read_confirm(*o); };
}

}  // namespace parasim::cli
