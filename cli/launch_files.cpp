#include "cli/launch_files.hpp"

#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <iterator>

#include "core/error.hpp"
#include "planner/launch.hpp"

namespace parasim::cli {
namespace {

std::string predicted(const planner::RankedPlan& r) {
  return fmt::format("{} per iteration, {} tokens/s, MFU {:.1f}%", format_duration(r.simulated.iteration), format_number(r.simulated.tokens_per_s, 6),
                     100 * r.simulated.mfu);
}

double gap(const LaunchChoice& c) { return c.launched->simulated.iteration.value() / c.nominal->simulated.iteration.value() - 1; }

}  // namespace

LaunchChoice choose_launch(const planner::SearchReport& report, const sim::Scenario& s) {
  LaunchChoice c;
  const auto& model = *s.model;
  c.nominal = &report.ranked.front();
  for (std::size_t i = 0; i < report.ranked.size(); ++i) {
    const auto& r = report.ranked[i];
    if (r.fits && !planner::megatron_plan_problem(r.plan, model)) {
      c.launched = &r;
      c.rank = static_cast<int>(i) + 1;
      break;
    }
  }
  const auto nominal_problem = planner::megatron_plan_problem(c.nominal->plan, model);
  c.header.push_back(fmt::format("parasim plan {}: {} on {} x {}", s.name, model.name, s.cluster.gpus(), s.cluster.node.gpu.name));
  if (!c.launched) {
    c.why_none = nominal_problem ? *nominal_problem : "no simulated plan that fits";
    c.header.push_back(fmt::format("Fastest plan found: {} ({})", planner::plan_name(c.nominal->plan), predicted(*c.nominal)));
    c.header.push_back("Megatron-LM cannot run it or any other plan simulated: " + c.why_none);
    c.plan = c.nominal->plan;
    return c;
  }
  c.plan = planner::megatron_form(c.launched->plan, model);
  c.megatron = planner::megatron_launch(c.plan, model, *s.training, s.cluster.node.gpu);
  c.header.push_back(fmt::format("Launches {}", planner::plan_name(c.plan)));
  c.header.push_back(fmt::format("Predicted: {} (#{} of {} simulated)", predicted(*c.launched), c.rank, report.ranked.size()));
  if (c.launched != c.nominal) {
    c.why_not_nominal = nominal_problem ? *nominal_problem : "";
    c.header.push_back(fmt::format("The fastest plan found, {}, is {:.1f}% faster; Megatron-LM cannot run it: {}", planner::plan_name(c.nominal->plan),
                                   100 * gap(c), c.why_not_nominal));
  }
  return c;
}

nlohmann::json launch_json(const LaunchChoice& c) {
  nlohmann::json j = {{"framework", "megatron-lm"},
                      {"megatron_lm_commit", std::string(planner::kMegatronCommit)},
                      {"nominal", {{"plan", planner::plan_name(c.nominal->plan)}, {"iteration_s", c.nominal->simulated.iteration.value()}}}};
  if (!c.launched) {
    j["launched"] = nullptr;
    j["why_not_launchable"] = c.why_none;
    return j;
  }
  j["launched"] = {{"plan", planner::plan_name(c.plan)}, {"rank", c.rank}, {"iteration_s", c.launched->simulated.iteration.value()},
                   {"tokens_per_s", c.launched->simulated.tokens_per_s}, {"mfu", c.launched->simulated.mfu}};
  j["gap_to_nominal"] = gap(c);
  if (c.launched != c.nominal) j["nominal"]["why_not_launched"] = c.why_not_nominal;
  return j;
}

void write_launch_files(const std::string& dir, const LaunchChoice& c, const sim::Scenario& s, const nlohmann::json& plans) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto write = [&](const std::string& name, const std::string& text, bool executable = false) {
    const auto path = std::filesystem::path(dir) / name;
    {
      std::ofstream f(path);
      f << text;
      f.close();  // a full disk shows when the buffer is written
      if (!f) throw InputError({dir, 0, 0}, "--out", fmt::format("cannot write {}", name));
    }
    if (executable) std::filesystem::permissions(path, std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec | std::filesystem::perms::others_exec,
                                                 std::filesystem::perm_options::add, ec);
  };
  std::string comment;
  for (const auto& line : c.header) comment += line + "\n";
  write("best_plan.yaml", planner::plan_yaml(c.plan, comment));
  // Files of an earlier run that no longer describe this plan must not stay behind.
  for (const char* stale : {"launch_megatron.sh", "megatron_args.txt"}) std::filesystem::remove(std::filesystem::path(dir) / stale, ec);
  if (c.megatron) {
    const planner::LaunchHeader header{c.header, s.cluster.nodes, s.cluster.node.gpus};
    write("launch_megatron.sh", planner::megatron_launch_script(*c.megatron, header), true);
    write("megatron_args.txt", planner::megatron_argument_file(*c.megatron, header));
  }
  auto ds = planner::deepspeed_config(c.plan, *s.training);
  // JSON has no comments: the plan and its prediction under a key DeepSpeed does not read.
  ds["parasim"] = {{"plan", planner::plan_name(c.plan)}, {"note", c.header.size() > 2 ? c.header[2] : c.header.back()}};
  write("ds_config.json", ds.dump(2) + "\n");
  write("plans.json", plans.dump(2) + "\n");
}

std::string launch_summary(const LaunchChoice& c) {
  std::string out;
  if (!c.launched) {
    out += fmt::format("\nBest plan  {}\n           {}\n", planner::plan_name(c.nominal->plan, true), predicted(*c.nominal));
    out += "\nNo launch script: Megatron-LM cannot run it or any other plan simulated: " + c.why_none + "\n";
    return out;
  }
  out += fmt::format("\nLaunch     {}\n           {}\n", planner::plan_name(c.plan, true), predicted(*c.launched));
  if (c.launched != c.nominal) {
    out += fmt::format("Nominal    {}\n           is {:.1f}% faster ({}), but Megatron-LM cannot run it:\n           {}\n", planner::plan_name(c.nominal->plan, true),
                       100 * gap(c), format_duration(c.nominal->simulated.iteration), c.why_not_nominal);
  }
  const auto& launch = *c.megatron;
  out += fmt::format("\nMegatron-LM arguments (Megatron-LM {}; --out writes launch_megatron.sh)\n", planner::kMegatronCommit.substr(0, 7));
  for (const auto& [name, value] : launch.environment) {
    if (value) out += fmt::format("  {}={}\n", name, *value);
  }
  for (const auto& g : launch.groups) {
    std::string line;
    for (const auto& a : g.arguments) {
      const std::string word = planner::argument_text(a);
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

workload::Plan read_megatron_source(const std::string& source, const sim::Scenario& s, bool ignore_unknown) {
  std::string text = source;
  if (std::ifstream f(source); f && !source.starts_with("--")) text.assign(std::istreambuf_iterator<char>(f), {});
  const auto read = planner::read_megatron_arguments(text, *s.model, s.cluster.gpus(), s.training->seq_len, ignore_unknown);
  for (const auto& flag : read.ignored) std::cerr << fmt::format("--from-megatron-args: ignored {} (not a Megatron-LM flag parasim knows)\n", flag);
  return read.plan;
}

}  // namespace parasim::cli
