#include "cli/launch_files.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <iostream>
#include <iterator>

#include "core/error.hpp"
#include "planner/launch.hpp"
#include "planner/ties.hpp"

namespace parasim::cli {
namespace {

std::string predicted(const planner::RankedPlan& r) {
  return fmt::format("{} per iteration, {} tokens/s, MFU {:.1f}%", format_duration(r.simulated.iteration), format_number(r.simulated.tokens_per_s, 6),
                     100 * r.simulated.mfu);
}

// How much slower the fastest plan Megatron-LM runs is than the fastest found.
double gap(const LaunchChoice& c) { return c.fastest_launchable->simulated.iteration.value() / c.nominal->simulated.iteration.value() - 1; }

double margin(const planner::SearchReport& report, const planner::RankedPlan& r) { return report.capacity.value() - r.simulated.memory.peak().value(); }

// Why the recommended plan won over the fastest launchable one, tied with it.
std::string why_recommended(const planner::SearchReport& report, const planner::RankedPlan& won, const planner::RankedPlan& fastest,
                            const sim::ErrorModel& errors) {
  const double wanted = errors.memory_margin * report.capacity.value();
  std::vector<std::string> reasons;
  if (margin(report, won) >= wanted && margin(report, fastest) < wanted) {
    reasons.push_back(fmt::format("it keeps {} free against {} (the memory model's median error is {:.1f}% of the capacity, {})",
                                  format_bytes(Bytes(margin(report, won))), format_bytes(Bytes(margin(report, fastest))), 100 * errors.memory_margin,
                                  format_bytes(Bytes(wanted))));
  }
  if (planner::complexity(won.plan) < planner::complexity(fastest.plan)) {
    const auto simpler = planner::complexity_text(won.plan);
    reasons.push_back(fmt::format("it is simpler: {} against {}", simpler.empty() ? "nothing beyond data parallelism" : simpler,
                                  planner::complexity_text(fastest.plan)));
  }
  if (reasons.empty()) reasons.emplace_back("it is as simple and keeps as much memory free");
  return fmt::format("{} is {:.1f}% faster by the simulator, inside the median error of a difference between plans ({:.1f}%); {}",
                     planner::plan_name(fastest.plan, true), 100 * (won.simulated.iteration.value() / fastest.simulated.iteration.value() - 1),
                     100 * (std::exp(errors.difference) - 1), fmt::join(reasons, "; "));
}

}  // namespace

std::string wrapped_paragraph(const std::string& label, const std::string& text) {
  const std::string indent(11, ' ');
  std::string out, line = fmt::format("{:<11}", label);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > 120) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() && line.back() != ' ' ? " " : "") + word;
    start = end + 1;
  }
  return out + line + "\n";
}

LaunchChoice choose_launch(const planner::SearchReport& report, const sim::Scenario& s, const sim::ErrorModel& errors,
                           planner::Constraints::Framework framework) {
  LaunchChoice c;
  const auto& model = *s.model;
  const bool torchtitan = framework == planner::Constraints::Framework::torchtitan;
  const bool deepspeed = framework == planner::Constraints::Framework::deepspeed;
  if (torchtitan || deepspeed) c.target = framework;
  if (torchtitan) c.framework = "torchtitan";
  if (deepspeed) c.framework = "Megatron-DeepSpeed";
  const auto problem = [&](const workload::Plan& p) -> std::optional<std::string> {
    if (torchtitan) return planner::torchtitan_plan_problem(p);
    if (deepspeed && s.training->precision == Precision::fp8) return std::string("Megatron-DeepSpeed has no fp8 training");
    if (deepspeed) return planner::megatron_deepspeed_plan_problem(p, model);
    return planner::megatron_plan_problem(p, model);
  };
  c.nominal = &report.ranked.front();
  std::vector<planner::TieCandidate> candidates;
  std::vector<double> fitting;
  for (const auto& r : report.ranked) {
    candidates.push_back({r.simulated.iteration.value(), margin(report, r), planner::complexity(r.plan), r.fits && !problem(r.plan)});
    if (r.fits) fitting.push_back(r.simulated.iteration.value());
  }
  c.tie_group = planner::tie_groups(fitting, errors.difference);
  c.tie_group.resize(report.ranked.size(), 0);  // the plans that do not fit come last
  const auto rec = planner::recommend(candidates, errors.difference, errors.memory_margin * report.capacity.value());
  if (rec.index >= 0) {
    c.launched = &report.ranked[static_cast<std::size_t>(rec.index)];
    c.fastest_launchable = &report.ranked[static_cast<std::size_t>(rec.fastest)];
    c.rank = rec.index + 1;
  }
  const auto nominal_problem = problem(c.nominal->plan);
  c.header.push_back(fmt::format("parasim plan {}: {} on {} x {}", s.name, model.name, s.cluster.gpus(), s.cluster.node.gpu.name));
  if (!c.launched) {
    c.why_none = nominal_problem ? *nominal_problem : "no simulated plan that fits";
    c.header.push_back(fmt::format("Fastest plan found: {} ({})", planner::plan_name(c.nominal->plan), predicted(*c.nominal)));
    c.header.push_back(c.framework + " cannot run it or any other plan simulated: " + c.why_none);
    c.plan = c.nominal->plan;
    return c;
  }
  c.plan = torchtitan || deepspeed ? c.launched->plan : planner::megatron_form(c.launched->plan, model);
  if (deepspeed) c.megatron_deepspeed = planner::megatron_deepspeed_launch(c.plan, model, *s.training);
  if (!torchtitan && !deepspeed) c.megatron = planner::megatron_launch(c.plan, model, *s.training, s.cluster.node.gpu);
  c.header.push_back(fmt::format("Launches {}", planner::plan_name(c.plan)));
  c.header.push_back(fmt::format("Predicted: {} (#{} of {} simulated)", predicted(*c.launched), c.rank, report.ranked.size()));
  if (c.fastest_launchable != c.nominal) {
    c.why_not_nominal = nominal_problem ? *nominal_problem : "";
    c.header.push_back(fmt::format("The fastest plan found, {}, is {:.1f}% faster; {} cannot run it: {}", planner::plan_name(c.nominal->plan),
                                   100 * gap(c), c.framework, c.why_not_nominal));
  }
  if (c.launched != c.fastest_launchable) {
    c.why_recommended = why_recommended(report, *c.launched, *c.fastest_launchable, errors);
    c.header.push_back(fmt::format("Recommended over the fastest plan {} runs: {}", c.framework, c.why_recommended));
  }
  if (torchtitan) c.torchtitan = planner::torchtitan_toml(c.plan, model, *s.training, c.header, s.cluster.node.gpus);
  return c;
}

nlohmann::json launch_json(const LaunchChoice& c) {
  using Framework = planner::Constraints::Framework;
  const bool torchtitan = c.target == Framework::torchtitan, deepspeed = c.target == Framework::deepspeed;
  nlohmann::json j = {{"framework", torchtitan ? "torchtitan" : deepspeed ? "megatron-deepspeed" : "megatron-lm"},
                      {"nominal", {{"plan", planner::plan_name(c.nominal->plan)}, {"iteration_s", c.nominal->simulated.iteration.value()}}}};
  if (torchtitan) {
    j["torchtitan_release"] = std::string(planner::kTorchtitanRelease);
    j["torchtitan_commit"] = std::string(planner::kTorchtitanCommit);
  } else if (deepspeed) {
    j["megatron_deepspeed_commit"] = std::string(planner::kMegatronDeepSpeedCommit);
  } else {
    j["megatron_lm_commit"] = std::string(planner::kMegatronCommit);
  }
  if (!c.launched) {
    j["launched"] = nullptr;
    j["why_not_launchable"] = c.why_none;
    return j;
  }
  j["launched"] = {{"plan", planner::plan_name(c.plan)}, {"rank", c.rank}, {"iteration_s", c.launched->simulated.iteration.value()},
                   {"tokens_per_s", c.launched->simulated.tokens_per_s}, {"mfu", c.launched->simulated.mfu}};
  j["gap_to_nominal"] = c.launched->simulated.iteration.value() / c.nominal->simulated.iteration.value() - 1;
  if (c.fastest_launchable != c.nominal) j["nominal"]["why_not_launched"] = c.why_not_nominal;
  j["fastest_launchable"] = {{"plan", planner::plan_name(c.fastest_launchable->plan)},
                             {"iteration_s", c.fastest_launchable->simulated.iteration.value()}};
  j["why_recommended"] = c.launched != c.fastest_launchable ? nlohmann::json(c.why_recommended) : nlohmann::json(nullptr);
  return j;
}

void write_output_file(const std::filesystem::path& path, const std::string& text, bool executable) {
  {
    std::ofstream f(path);
    f << text;
    f.close();  // a full disk shows when the buffer is written
    if (!f) throw InputError({path.parent_path().string(), 0, 0}, "--out", fmt::format("cannot write {}", path.filename().string()));
  }
  std::error_code ec;
  if (executable) std::filesystem::permissions(path, std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec | std::filesystem::perms::others_exec,
                                               std::filesystem::perm_options::add, ec);
}

std::vector<LaunchFile> launch_files(const LaunchChoice& c, const sim::Scenario& s, const nlohmann::json& plans) {
  std::vector<LaunchFile> files;
  std::string comment;
  for (const auto& line : c.header) comment += line + "\n";
  files.push_back({"best_plan.yaml", planner::plan_yaml(c.plan, comment)});
  if (c.torchtitan) files.push_back({"torchtitan.toml", *c.torchtitan});
  const planner::LaunchHeader header{c.header, s.cluster.nodes, s.cluster.node.gpus};
  if (c.megatron_deepspeed) files.push_back({"launch_megatron_deepspeed.sh", planner::megatron_deepspeed_script(*c.megatron_deepspeed, header), true});
  if (c.megatron) {
    files.push_back({"launch_megatron.sh", planner::megatron_launch_script(*c.megatron, header), true});
    files.push_back({"megatron_args.txt", planner::megatron_argument_file(*c.megatron, header)});
  }
  // Under torchtitan the launch is its own; under Megatron-DeepSpeed the config goes with its launch.
  std::optional<std::string> deepspeed_problem = planner::deepspeed_plan_problem(c.plan);
  if (c.target == planner::Constraints::Framework::torchtitan) deepspeed_problem = "the launch is torchtitan's (--framework torchtitan)";
  if (c.target == planner::Constraints::Framework::deepspeed && !c.launched) deepspeed_problem = "no launch: " + c.why_none;
  if (!deepspeed_problem) {
    auto ds = planner::deepspeed_config(c.plan, *s.training);
    // JSON has no comments: the plan and its prediction under a key DeepSpeed does not read.
    ds["parasim"] = {{"plan", planner::plan_name(c.plan)}, {"note", c.header.size() > 2 ? c.header[2] : c.header.back()}};
    files.push_back({"ds_config.json", ds.dump(2) + "\n"});
  }
  auto listed = plans;
  listed["deepspeed"] = {{"ds_config", !deepspeed_problem}, {"why_not", deepspeed_problem ? nlohmann::json(*deepspeed_problem) : nlohmann::json(nullptr)}};
  files.push_back({"plans.json", listed.dump(2) + "\n"});
  return files;
}

void write_launch_files(const std::string& dir, const LaunchChoice& c, const sim::Scenario& s, const nlohmann::json& plans) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const auto files = launch_files(c, s, plans);
  // Files of an earlier run that no longer describe this plan must not stay behind.
  for (const char* stale : {"launch_megatron.sh", "megatron_args.txt", "torchtitan.toml", "launch_megatron_deepspeed.sh", "ds_config.json"}) {
    const bool written = std::any_of(files.begin(), files.end(), [&](const LaunchFile& f) { return f.name == stale; });
    if (!written) std::filesystem::remove(std::filesystem::path(dir) / stale, ec);
  }
  for (const auto& f : files) write_output_file(std::filesystem::path(dir) / f.name, f.text, f.executable);
}

// A launch's environment, arguments (a line per group, wrapped at 112 columns) and notes, indented.
static std::string arguments_text(const planner::MegatronLaunch& launch) {
  std::string out;
  for (const auto& [name, value] : launch.environment) {
    if (value) out += fmt::format("  {}={}\n", name, *value);
  }
  for (const auto& g : launch.groups) {
    std::string line;
    for (const auto& a : g.arguments) {
      const std::string word = planner::script_argument_text(a);
      if (!line.empty() && line.size() + word.size() > 112) {
        out += "  " + line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) out += "  " + line + "\n";
  }
  for (const auto& n : launch.notes) out += "  # " + n + "\n";
  return out;
}

std::string launch_summary(const LaunchChoice& c) {
  std::string out;
  if (!c.launched) {
    out += fmt::format("\nBest plan  {}\n           {}\n", planner::plan_name(c.nominal->plan, true), predicted(*c.nominal));
    out += fmt::format("\nNo launch file: {} cannot run it or any other plan simulated: {}\n", c.framework, c.why_none);
    return out;
  }
  out += fmt::format("\nLaunch     {}\n           {}\n", planner::plan_name(c.plan, true), predicted(*c.launched));
  if (c.fastest_launchable != c.nominal) {
    out += fmt::format("Nominal    {}\n           is {:.1f}% faster ({}), but {} cannot run it:\n           {}\n", planner::plan_name(c.nominal->plan, true),
                       100 * gap(c), format_duration(c.nominal->simulated.iteration), c.framework, c.why_not_nominal);
  }
  if (c.launched != c.fastest_launchable) out += wrapped_paragraph("Tied", c.why_recommended);
  if (c.torchtitan) {
    out += fmt::format("\ntorchtitan job config (torchtitan {}; --out writes torchtitan.toml)\n", planner::kTorchtitanRelease);
    std::size_t start = 0;
    while (start < c.torchtitan->size()) {
      const auto end = c.torchtitan->find('\n', start);
      const auto line = c.torchtitan->substr(start, end - start);
      if (!line.empty() && (line[0] != '#' || line.rfind("# note:", 0) == 0)) out += "  " + line + "\n";
      start = end == std::string::npos ? c.torchtitan->size() : end + 1;
    }
    return out;
  }
  if (c.megatron_deepspeed) {
    out += fmt::format("\nMegatron-DeepSpeed arguments (Megatron-DeepSpeed {}; --out writes launch_megatron_deepspeed.sh and ds_config.json)\n",
                       planner::kMegatronDeepSpeedCommit);
    return out + arguments_text(*c.megatron_deepspeed);
  }
  const auto& launch = *c.megatron;
  out += fmt::format("\nMegatron-LM arguments (Megatron-LM {}; --out writes launch_megatron.sh)\n", planner::kMegatronCommit.substr(0, 7));
  return out + arguments_text(launch);
}

workload::Plan read_megatron_source(const std::string& source, const sim::Scenario& s, bool ignore_unknown) {
  std::string text = source;
  if (std::ifstream f(source); f && !source.starts_with("--")) text.assign(std::istreambuf_iterator<char>(f), {});
  const auto read = planner::read_megatron_arguments(text, *s.model, s.cluster.gpus(), s.training->seq_len, ignore_unknown);
  for (const auto& flag : read.ignored) std::cerr << fmt::format("--from-megatron-args: ignored {} (not a Megatron-LM flag parasim knows)\n", flag);
  return read.plan;
}

}  // namespace parasim::cli
