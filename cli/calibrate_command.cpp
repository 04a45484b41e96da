// parasim calibrate show | diff: calibration profiles, what they say and how they differ.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/cost_model.hpp"
#include "calibrate/profile_yaml.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "core/suggest.hpp"
#include "sim/scenario.hpp"
#include "sim/simulator.hpp"

namespace parasim::cli {
namespace {

const std::string kSourceDir = PARASIM_SOURCE_DIR;

/// A profile named on the command line: a file, or the name of a bundled profile (a100, h100, …).
struct NamedProfile {
  std::string shown;  ///< as the user wrote it
  calibrate::Profile profile;
};

NamedProfile resolve_profile(const std::string& arg, const std::string& bundled_dir) {
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) return {arg, calibrate::load_profile(arg)};
  std::vector<std::string> names;
  if (std::filesystem::is_directory(bundled_dir, ec)) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(bundled_dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto p = calibrate::load_profile(f);
      if (p.name == arg || f.stem() == arg) return {arg, std::move(p)};
      names.push_back(p.name);
    }
  }
  throw InputError({arg, 0, 0}, {}, fmt::format("no such file, and no bundled profile of that name (bundled: {})", join_names(names)));
}

std::string percent(double x) { return fmt::format("{:+.1f}%", 100 * x); }

nlohmann::json points_json(const calibrate::Profile& p) {
  nlohmann::json gemm = nlohmann::json::array(), coll = nlohmann::json::array(), mem = nlohmann::json::array();
  for (const auto& g : p.gemm_points) {
    gemm.push_back({{"precision", precision_name(g.precision)}, {"batch", g.batch}, {"m", g.m}, {"n", g.n}, {"k", g.k},
                    {"time_s", g.time.value()}, {"tflops", 2.0 * g.batch * g.m * g.n * g.k / g.time.value() / 1e12}, {"source", g.source}});
  }
  for (const auto& c : p.collective_points) {
    coll.push_back({{"collective", calibrate::collective_kind_name(c.collective)}, {"fabric", calibrate::fabric_name(c.fabric)},
                    {"ranks", c.ranks}, {"bytes", c.bytes}, {"time_s", c.time.value()},
                    {"busbw_bytes_per_s", calibrate::bus_bandwidth(c.collective, c.ranks, c.bytes, c.time)},
                    {"algorithm", c.algorithm}, {"protocol", c.protocol}, {"source", c.source}});
  }
  for (const auto& m : p.memory_points) {
    mem.push_back({{"kind", m.kind}, {"bytes", m.bytes}, {"time_s", m.time.value()}, {"bytes_per_s", m.bytes / m.time.value()}, {"source", m.source}});
  }
  return {{"gemm", gemm}, {"collectives", coll}, {"memory", mem}};
}

nlohmann::json profile_json(const calibrate::Profile& p) {
  // Nested as in the YAML: numbers.gemm.efficiency.bf16 = {value, source}.
  nlohmann::json numbers = nlohmann::json::object();
  for (const auto& n : calibrate::profile_numbers(p)) {
    std::string pointer = "/" + n.path;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    numbers[nlohmann::json::json_pointer(pointer)] = {
        {"value", n.unit == calibrate::NumberUnit::boolean ? nlohmann::json(n.value != 0) : nlohmann::json(n.value)},
        {"source", calibrate::source_of(p, n.path)}};
  }
  return {{"name", p.name}, {"source", p.source}, {"gpu", p.gpu}, {"hardware", p.hardware}, {"what_if", p.what_if},
          {"numbers", numbers}, {"points", points_json(p)}, {"unsourced", calibrate::unsourced_numbers(p)}};
}

std::string show_text(const std::string& file, const calibrate::Profile& p) {
  std::string out = fmt::format("Profile     {} ({}){}\n", p.name, file, p.what_if ? "  WHAT-IF: derived from announced specifications" : "");
  out += fmt::format("Source      {}\n", p.source);
  if (!p.gpu.empty()) out += fmt::format("GPU         {}\n", p.gpu);
  out += fmt::format("Hardware    {}\n\n", p.hardware.empty() ? "unknown (map it with --hardware when importing)" : p.hardware);
  Table t({"key", "value", "source"}, {Table::Align::left, Table::Align::right, Table::Align::left});
  for (const auto& n : calibrate::profile_numbers(p)) {
    const std::string src = calibrate::source_of(p, n.path);
    t.add({n.path, calibrate::format_profile_number(n.unit, n.value), src.empty() ? "(none)" : src});
  }
  out += t.render();
  if (!p.gemm_points.empty()) {
    Table g({"format", "batch", "m", "n", "k", "time", "TFLOP/s", "source"}, std::vector<Table::Align>(7, Table::Align::right));
    for (const auto& x : p.gemm_points) {
      g.add({std::string(precision_name(x.precision)), fmt::format("{}", x.batch), fmt::format("{}", x.m), fmt::format("{}", x.n),
             fmt::format("{}", x.k), format_duration(x.time), format_number(2.0 * x.batch * x.m * x.n * x.k / x.time.value() / 1e12), x.source});
    }
    out += fmt::format("\nGEMM points ({})\n", p.gemm_points.size()) + g.render();
  }
  if (!p.collective_points.empty()) {
    Table c({"collective", "fabric", "ranks", "size", "time", "busbw", "algorithm", "protocol", "source"},
            {Table::Align::left, Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right, Table::Align::right});
    for (const auto& x : p.collective_points) {
      c.add({std::string(calibrate::collective_kind_name(x.collective)), std::string(calibrate::fabric_name(x.fabric)),
             fmt::format("{}", x.ranks), format_bytes(Bytes(x.bytes)), format_duration(x.time),
             format_bandwidth(BytesPerSecond(calibrate::bus_bandwidth(x.collective, x.ranks, x.bytes, x.time))), x.algorithm, x.protocol, x.source});
    }
    out += fmt::format("\nCollective points ({})\n", p.collective_points.size()) + c.render();
  }
  if (!p.memory_points.empty()) {
    Table m({"kind", "bytes", "time", "bandwidth", "source"}, {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right});
    for (const auto& x : p.memory_points) {
      m.add({x.kind, format_bytes(Bytes(x.bytes)), format_duration(x.time), format_bandwidth(BytesPerSecond(x.bytes / x.time.value())), x.source});
    }
    out += fmt::format("\nMemory points ({})\n", p.memory_points.size()) + m.render();
  }
  const auto missing = calibrate::unsourced_numbers(p);
  if (!missing.empty()) out += fmt::format("\nNo source for {} numbers: {}\n", missing.size(), join_names(missing));
  return out;
}

/// The reference workload simulated with a profile.
struct Reference {
  std::string scenario;
  double iteration_s = 0, tokens_per_s = 0, mfu = 0;
};

Reference simulate_with(const sim::Scenario& s, const calibrate::Profile& profile) {
  const auto& gpu = s.cluster.node.gpu;
  if (!gpu.peak_for(s.training->precision)) {
    throw InputError({s.file, 1, 1}, "training.precision",
                     fmt::format("{} has no {} peak in its hardware file", gpu.name, precision_name(s.training->precision)));
  }
  const topology::Cluster cluster(s.cluster);
  const auto graph = workload::build_tasks(*s.model, *s.training, *s.plan);
  const calibrate::CostModel cost(gpu, profile);
  const sim::SimInput in{&cluster, &*s.model, &*s.training, &*s.plan, &graph, &cost};
  const auto r = sim::simulate(in);
  return {s.name, r.iteration.value(), r.tokens_per_s, r.mfu};
}

}  // namespace

Action add_calibrate_command(CLI::App& app) {
  struct Options {
    std::string profile, a, b, scenario = "scenarios/jobs/gpt3-175b-1024-a100.yaml", bundled = kSourceDir + "/scenarios/profiles";
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("calibrate", "Calibration profiles: show one, compare two");
  cmd->require_subcommand(1);

  auto* show = cmd->add_subcommand("show", "Every figure of a profile with its source, and its measured points");
  show->add_option("profile", o->profile, "profile YAML, or the name of a bundled profile (a100, h100, h200, b200, rtx-4090)")->required();
  show->add_option("--bundled", o->bundled, "directory of the bundled profiles")->capture_default_str();
  show->add_flag("--json", o->json, "print JSON instead of tables");

  auto* diff = cmd->add_subcommand("diff", "What changed between two profiles, and how the predicted iteration time of a reference job moves");
  diff->add_option("a", o->a, "the first profile (file or bundled name)")->required();
  diff->add_option("b", o->b, "the second profile (file or bundled name)")->required();
  diff->add_option("--scenario", o->scenario, "reference job simulated with each profile")->capture_default_str();
  diff->add_option("--bundled", o->bundled, "directory of the bundled profiles")->capture_default_str();
  diff->add_flag("--json", o->json, "print JSON instead of tables");

  return [o, show, diff]() {
    if (show->parsed()) {
      const auto p = resolve_profile(o->profile, o->bundled);
      std::cout << (o->json ? profile_json(p.profile).dump(2) + "\n" : show_text(p.shown, p.profile));
      return 0;
    }
    (void)diff;
    const auto a = resolve_profile(o->a, o->bundled);
    const auto b = resolve_profile(o->b, o->bundled);
    const auto changes = calibrate::diff_numbers(a.profile, b.profile, 1e-12);
    std::vector<std::pair<std::string, std::string>> source_changes;
    for (const auto& n : calibrate::profile_numbers(a.profile)) {
      const auto sa = calibrate::source_of(a.profile, n.path), sb = calibrate::source_of(b.profile, n.path);
      if (sa != sb) source_changes.emplace_back(n.path, sb);
    }
    const auto s = sim::load_scenario(o->scenario);
    s.require_workload();
    const Reference ra = simulate_with(s, a.profile), rb = simulate_with(s, b.profile);
    const double moved = rb.iteration_s / ra.iteration_s - 1;
    if (o->json) {
      nlohmann::json numbers = nlohmann::json::array();
      for (const auto& c : changes) {
        numbers.push_back({{"key", c.path}, {"a", c.before}, {"b", c.after},
                           {"relative", c.before != 0 ? nlohmann::json(c.after / c.before - 1) : nlohmann::json(nullptr)}});
      }
      nlohmann::json sources = nlohmann::json::array();
      for (const auto& [k, v] : source_changes) sources.push_back({{"key", k}, {"b", v}});
      const nlohmann::json out = {
          {"a", {{"file", a.shown}, {"name", a.profile.name}}},
          {"b", {{"file", b.shown}, {"name", b.profile.name}}},
          {"changed", numbers},
          {"sources_changed", sources},
          {"points", {{"gemm", {{"a", a.profile.gemm_points.size()}, {"b", b.profile.gemm_points.size()}}},
                      {"collectives", {{"a", a.profile.collective_points.size()}, {"b", b.profile.collective_points.size()}}},
                      {"memory", {{"a", a.profile.memory_points.size()}, {"b", b.profile.memory_points.size()}}}}},
          {"reference", {{"scenario", o->scenario}, {"iteration_s", {{"a", ra.iteration_s}, {"b", rb.iteration_s}}},
                         {"tokens_per_s", {{"a", ra.tokens_per_s}, {"b", rb.tokens_per_s}}}, {"mfu", {{"a", ra.mfu}, {"b", rb.mfu}}},
                         {"relative_change", moved}}}};
      std::cout << out.dump(2) << "\n";
      return 0;
    }
    std::string text = fmt::format("Profiles    a: {} ({})   b: {} ({})\n", a.shown, a.profile.name, b.shown, b.profile.name);
    if (changes.empty()) {
      text += "Numbers     the same\n";
    } else {
      text += fmt::format("Numbers     {} changed\n", changes.size());
      Table t({"key", "a", "b", "change"}, {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right});
      for (const auto& c : changes) {
        const bool relative = c.unit != calibrate::NumberUnit::boolean && c.before != 0;
        t.add({c.path, calibrate::format_profile_number(c.unit, c.before), calibrate::format_profile_number(c.unit, c.after),
               relative ? percent(c.after / c.before - 1) : std::string()});
      }
      text += t.render();
    }
    text += fmt::format("Points      GEMM {} -> {}, collectives {} -> {}, memory {} -> {}\n", a.profile.gemm_points.size(), b.profile.gemm_points.size(),
                        a.profile.collective_points.size(), b.profile.collective_points.size(), a.profile.memory_points.size(),
                        b.profile.memory_points.size());
    text += fmt::format("Sources     {} numbers have another source in b\n", source_changes.size());
    text += fmt::format("Reference   {} ({})\n", ra.scenario, o->scenario);
    text += fmt::format("  iteration {} -> {} ({})\n", format_duration(Seconds(ra.iteration_s)), format_duration(Seconds(rb.iteration_s)), percent(moved));
    text += fmt::format("  tokens/s  {} -> {}   MFU {}% -> {}%\n", format_number(ra.tokens_per_s, 6), format_number(rb.tokens_per_s, 6),
                        format_number(100 * ra.mfu, 3), format_number(100 * rb.mfu, 3));
    std::cout << text;
    return 0;
  };
}

}  // namespace parasim::cli
