// parasim calibrate show | diff | from-trace: calibration profiles, what they say, how they differ,
// and how profiler traces of a real run become one.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>

#include "calibrate/cost_model.hpp"
#include "calibrate/profile_yaml.hpp"
#include "calibrate/trace_import.hpp"
#include "cli/calibrate_from_log.hpp"
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
                    {"time_s", g.time.value()}, {"tflops", 2.0 * g.batch * g.m * g.n * g.k / g.time.value() / 1e12},
                    {"clock", g.burst ? "burst" : "sustained"}, {"source", g.source}});
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
  // A source too long for the column goes under its row, so that the table stays within 120 columns.
  constexpr std::size_t kSourceColumn = 64;
  for (const auto& n : calibrate::profile_numbers(p)) {
    const std::string src = calibrate::source_of(p, n.path);
    const bool below = src.size() > kSourceColumn;
    t.add({n.path, calibrate::format_profile_number(n.unit, n.value), src.empty() ? "(none)" : below ? "" : src});
    if (below) t.add_note(src);
  }
  out += t.render();
  if (!p.gemm_points.empty()) {
    Table g({"format", "batch", "m", "n", "k", "time", "TFLOP/s", "clock", "source"}, std::vector<Table::Align>(7, Table::Align::right));
    for (const auto& x : p.gemm_points) {
      g.add({std::string(precision_name(x.precision)), fmt::format("{}", x.batch), fmt::format("{}", x.m), fmt::format("{}", x.n),
             fmt::format("{}", x.k), format_duration(x.time), format_number(2.0 * x.batch * x.m * x.n * x.k / x.time.value() / 1e12),
             x.burst ? "burst" : "sustained", x.source});
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
  const calibrate::CostModel cost(gpu, profile);
  const sim::SimInput in{&cluster, &*s.model, &*s.training, &*s.plan, nullptr, &cost};
  const auto r = sim::simulate_plan(in);
  return {s.name, r.iteration.value(), r.tokens_per_s, r.mfu};
}


struct TraceOptions {
  std::vector<std::string> files;
  std::string out, hardware, network_bandwidth, name;
  std::string hardware_dir = kSourceDir + "/scenarios/hardware";
  int gpus_per_node = 8;
  bool json = false;
};

std::string number_or_dash(double x, int digits = 3) { return std::isnan(x) ? std::string("-") : format_number(x, digits); }
std::string percent_or_dash(double x) { return std::isnan(x) ? std::string("-") : fmt::format("{:.1f}%", 100 * x); }
nlohmann::json json_or_null(double x) { return std::isnan(x) ? nlohmann::json(nullptr) : nlohmann::json(x); }

nlohmann::json classes_json(const calibrate::ClassTotals& t) {
  nlohmann::json out = nlohmann::json::object();
  for (auto c : calibrate::kAllKernelClasses) {
    const auto i = static_cast<std::size_t>(c);
    out[std::string(calibrate::kernel_class_name(c))] = {{"count", t.count[i]}, {"ns", t.ns[i]}};
  }
  return out;
}

nlohmann::json import_json(const calibrate::ImportResult& r, const std::string& out) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : r.analysis.files) {
    files.push_back({{"file", f.file}, {"gpu", f.gpu}, {"rank", f.rank ? nlohmann::json(*f.rank) : nlohmann::json(nullptr)},
                     {"world_size", f.world_size ? nlohmann::json(*f.world_size) : nlohmann::json(nullptr)}, {"events", f.events},
                     {"json_bytes", f.json_bytes}, {"file_bytes", f.file_bytes}, {"classes", classes_json(f.totals)}});
  }
  nlohmann::json fits = nlohmann::json::array();
  for (const auto& q : r.fit.quality) {
    fits.push_back({{"what", q.what}, {"samples", q.samples}, {"fitted", q.fitted}, {"keys", q.keys}, {"r2", json_or_null(q.r2)},
                    {"median_error", json_or_null(q.median_error)}, {"worst_error", json_or_null(q.worst_error)}, {"note", q.note}});
  }
  const auto& a = r.analysis;
  const auto& m = a.measurements;
  return {{"files", files},
          {"classes", classes_json(a.totals)},
          {"gpu", {{"device", r.device}, {"hardware", r.gpu ? nlohmann::json(r.gpu->name) : nlohmann::json(nullptr)}, {"hardware_file", r.hardware_file}}},
          {"base", r.base},
          {"join", {{"kernels", a.kernels}, {"kernels_with_op", a.kernels_with_op}, {"gemm_kernels", a.gemm_kernels},
                    {"gemm_kernels_with_shape", a.gemm_kernels_with_shape}, {"nccl_kernels", a.nccl_kernels},
                    {"nccl_kernels_with_size", a.nccl_kernels_with_size}}},
          {"samples", {{"gemm", m.gemms.size()}, {"collectives", m.collectives.size()}, {"memory", m.memory.size()},
                       {"compute_overlap", m.compute_overlap.size()}, {"comm_overlap", m.comm_overlap.size()}}},
          {"fits", fits},
          {"notes", a.notes},
          {"read_seconds", r.read_seconds},
          {"json_bytes", r.json_bytes},
          {"peak_rss_bytes", r.peak_rss_bytes},
          {"profile", {{"name", r.fit.profile.name}, {"file", out.empty() ? nlohmann::json(nullptr) : nlohmann::json(out)}}}};
}

// The traces read: how fast, each file's rank, GPU and counts, and the hardware the GPU maps to.
std::string traces_text(const calibrate::ImportResult& r) {
  const auto& a = r.analysis;
  const double mb = static_cast<double>(r.json_bytes) / 1e6;
  std::string text = labelled_lines("Traces      ", fmt::format("{} file{}, {} of JSON read in {} ({} MB/s), peak memory {} ({:.2f}x the largest file's JSON)",
                                                             a.files.size(), a.files.size() == 1 ? "" : "s", format_bytes(Bytes(static_cast<double>(r.json_bytes))),
                                                             format_duration(Seconds(r.read_seconds)), format_number(r.read_seconds > 0 ? mb / r.read_seconds : 0, 3),
                                                             format_bytes(Bytes(static_cast<double>(r.peak_rss_bytes))),
                                                             r.largest_json_bytes ? static_cast<double>(r.peak_rss_bytes) / static_cast<double>(r.largest_json_bytes) : 0.0));
  Table files({"file", "rank", "GPU", "kernels", "events"}, {Table::Align::left, Table::Align::right, Table::Align::left, Table::Align::right, Table::Align::right});
  for (const auto& f : a.files) {
    std::uint64_t kernels = 0;
    for (auto c : calibrate::kAllKernelClasses) {
      if (c != calibrate::KernelClass::memcpy && c != calibrate::KernelClass::memset) kernels += f.totals.count[static_cast<std::size_t>(c)];
    }
    files.add({f.file, f.rank ? fmt::format("{}{}", *f.rank, f.world_size ? fmt::format("/{}", *f.world_size) : "") : "-",
               f.gpu.empty() ? "(not recorded)" : f.gpu, fmt::format("{}", kernels), fmt::format("{}", f.events)});
  }
  text += files.render();
  if (r.device.empty()) {
    text += "GPU         not recorded in the traces (no deviceProperties): efficiencies need --hardware\n";
  } else if (r.gpu) {
    text += labelled_lines("GPU         ", fmt::format("{} = {} ({})", r.device, r.gpu->name, r.hardware_file));
  } else {
    text += labelled_lines("GPU         ", fmt::format("{}: no bundled hardware of that name, kept as the profile's identity, efficiencies need --hardware", r.device));
  }
  return text + fmt::format("Base        {}\n\n", r.base);
}

// GPU time by kernel class, how much of it could be joined to its host op, and what was sampled.
std::string activity_text(const calibrate::TraceAnalysis& a) {
  std::int64_t total_ns = 0;
  for (auto ns : a.totals.ns) total_ns += ns;
  Table classes({"class", "count", "GPU time", "share"}, {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right});
  for (auto c : calibrate::kAllKernelClasses) {
    const auto i = static_cast<std::size_t>(c);
    if (a.totals.count[i] == 0) continue;
    classes.add({std::string(calibrate::kernel_class_name(c)), fmt::format("{}", a.totals.count[i]),
                 format_duration(Seconds(static_cast<double>(a.totals.ns[i]) * 1e-9)),
                 fmt::format("{:.1f}%", total_ns ? 100.0 * static_cast<double>(a.totals.ns[i]) / static_cast<double>(total_ns) : 0.0)});
  }
  std::string text = "GPU activity by class (all files)\n" + classes.render() + "\n";
  text += labelled_lines("Join        ", fmt::format("{} of {} kernels traced to their host op, GEMM shapes for {} of {} GEMM kernels, sizes for {} of {} NCCL kernels",
                                                   a.kernels_with_op, a.kernels, a.gemm_kernels_with_shape, a.gemm_kernels, a.nccl_kernels_with_size, a.nccl_kernels));
  const auto& m = a.measurements;
  text += labelled_lines("Samples     ", fmt::format("{} GEMMs, {} collectives, {} memory transfers, {} compute and {} collective overlap pairs", m.gemms.size(),
                                                   m.collectives.size(), m.memory.size(), m.compute_overlap.size(), m.comm_overlap.size()));
  for (const auto& n : a.notes) text += labelled_lines("Note        ", n);
  return text;
}

// What each fit set, or why it did not; the reasons go under their rows where a column would pass 120.
std::string fit_text(const std::vector<calibrate::FitQuality>& quality) {
  auto build = [&](bool reason_column) {
    std::vector<std::string> header = {"fit", "samples", "R² (log)", "median err", "worst err"};
    if (reason_column) header.emplace_back("set / why not");
    std::vector<Table::Align> align(header.size(), Table::Align::right);
    align.front() = Table::Align::left;
    align.back() = reason_column ? Table::Align::left : Table::Align::right;
    Table fit(header, align);
    for (const auto& q : quality) {
      std::string what = q.fitted ? join_names(q.keys) : q.note;
      if (q.fitted && !q.note.empty() && q.what.rfind("overlap", 0) == 0) what += ": " + q.note;
      std::vector<std::string> row = {q.what, fmt::format("{}", q.samples), number_or_dash(q.r2), percent_or_dash(q.median_error), percent_or_dash(q.worst_error)};
      if (reason_column) row.push_back(what);
      fit.add(row);
      if (!reason_column) fit.add_note(what);
    }
    return fit;
  };
  const auto wide = build(true);
  return "\n" + (wide.columns() <= Table::kNoteWidth ? wide.render() : build(false).render());
}

std::string import_text(const calibrate::ImportResult& r, const std::string& out) {
  std::string text = traces_text(r) + activity_text(r.analysis);
  if (!r.fit.quality.empty()) text += fit_text(r.fit.quality);
  const auto& p = r.fit.profile;
  text += fmt::format("\nProfile     {}: {} GEMM, {} collective and {} memory points{}\n", p.name, p.gemm_points.size(), p.collective_points.size(),
                      p.memory_points.size(), out.empty() ? " (not written: no --out)" : fmt::format(", written to {}", out));
  if (!out.empty()) {
    text += labelled_lines("Use it      ", fmt::format("`profile: {}` in a scenario (a path relative to it), or parasim simulate JOB --set profile={}", out, out));
  }
  return text;
}

int run_from_trace(const TraceOptions& o, const std::string& profiles_dir) {
  calibrate::ImportOptions opt;
  for (const auto& f : o.files) opt.files.emplace_back(f);
  if (!o.hardware.empty()) opt.hardware = o.hardware;
  opt.hardware_dir = o.hardware_dir;
  opt.profiles_dir = profiles_dir;
  opt.gpus_per_node = o.gpus_per_node;
  if (!o.network_bandwidth.empty()) {
    try {
      opt.network_bandwidth = parse_bandwidth(o.network_bandwidth);
    } catch (const UnitError& e) {
      throw InputError({"--network-bandwidth", 0, 0}, {}, e.what());
    }
  }
  opt.name = o.name.empty() && !o.out.empty() ? std::filesystem::path(o.out).stem().string() : o.name;
  const auto r = calibrate::import_traces(opt);
  if (!o.out.empty()) calibrate::save_profile(r.fit.profile, o.out);
  std::cout << (o.json ? import_json(r, o.out).dump(2) + "\n" : import_text(r, o.out));
  return 0;
}

/// The logs and where they ran, as calibrate from-log and calibrate fit take them.
void add_log_options(CLI::App& cmd, FromLogOptions& o) {
  cmd.add_option("logs", o.logs, "Megatron-LM, torchtitan or NeMo logs (rank 0's stdout, from the first line)")->required()->check(CLI::ExistingFile);
  cmd.add_option("--gpu", o.gpu, "bundled hardware the runs used (scenarios/hardware: h100-sxm5-80gb, a100-sxm4-80gb, …)")->required();
  cmd.add_option("--gpus-per-node", o.gpus_per_node, "GPUs per node (one NVSwitch domain)")->capture_default_str()->check(CLI::Range(1, 72));
  cmd.add_option("--nic-gbps", o.nic_gbps, "inter-node bandwidth per GPU in Gb/s (default: the GPU's standard node: 200 on A100, 400 on H100)")
      ->check(CLI::Range(0.001, 1e6));
}

/// The bundled job with the fewest GPUs whose GPU is `hardware`, or `fallback` where none is.
std::string reference_job(const std::string& hardware, const std::string& fallback) {
  const std::filesystem::path jobs = std::filesystem::path(kSourceDir) / "scenarios" / "jobs";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(jobs)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::string best = fallback;
  int fewest = std::numeric_limits<int>::max();
  for (const auto& f : files) {
    const auto s = sim::load_scenario(f.string());
    if (s.cluster.node.gpu.name != hardware || s.cluster.gpus() >= fewest) continue;
    fewest = s.cluster.gpus();
    best = std::filesystem::relative(f).string();
  }
  return best;
}
// Two profiles compared: the numbers and sources that changed, and a reference job under each.
struct ProfileDiff {
  NamedProfile a, b;
  std::vector<calibrate::NumberChange> changes;
  std::vector<std::pair<std::string, std::string>> source_changes;
  std::string scenario, scenario_gpu;
  Reference ra, rb;
  double moved = 0;
};

nlohmann::json diff_json(const ProfileDiff& d) {
  nlohmann::json numbers = nlohmann::json::array();
  for (const auto& c : d.changes) {
    numbers.push_back({{"key", c.path}, {"a", c.before}, {"b", c.after},
                       {"relative", c.before != 0 ? nlohmann::json(c.after / c.before - 1) : nlohmann::json(nullptr)}});
  }
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& [k, v] : d.source_changes) sources.push_back({{"key", k}, {"b", v}});
  const auto& a = d.a.profile;
  const auto& b = d.b.profile;
  return {{"a", {{"file", d.a.shown}, {"name", a.name}}},
          {"b", {{"file", d.b.shown}, {"name", b.name}}},
          {"changed", numbers},
          {"sources_changed", sources},
          {"points", {{"gemm", {{"a", a.gemm_points.size()}, {"b", b.gemm_points.size()}}},
                      {"collectives", {{"a", a.collective_points.size()}, {"b", b.collective_points.size()}}},
                      {"memory", {{"a", a.memory_points.size()}, {"b", b.memory_points.size()}}}}},
          {"reference", {{"scenario", d.scenario}, {"iteration_s", {{"a", d.ra.iteration_s}, {"b", d.rb.iteration_s}}},
                         {"tokens_per_s", {{"a", d.ra.tokens_per_s}, {"b", d.rb.tokens_per_s}}}, {"mfu", {{"a", d.ra.mfu}, {"b", d.rb.mfu}}},
                         {"relative_change", d.moved}}}};
}

std::string diff_text(const ProfileDiff& d) {
  const auto& a = d.a.profile;
  const auto& b = d.b.profile;
  std::string text = fmt::format("Profiles    a: {} ({})   b: {} ({})\n", d.a.shown, a.name, d.b.shown, b.name);
  if (d.changes.empty()) {
    text += "Numbers     the same\n";
  } else {
    text += fmt::format("Numbers     {} changed\n", d.changes.size());
    Table t({"key", "a", "b", "change"}, {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::right});
    for (const auto& c : d.changes) {
      const bool relative = c.unit != calibrate::NumberUnit::boolean && c.before != 0;
      t.add({c.path, calibrate::format_profile_number(c.unit, c.before), calibrate::format_profile_number(c.unit, c.after),
             relative ? percent(c.after / c.before - 1) : std::string()});
    }
    text += t.render();
  }
  text += fmt::format("Points      GEMM {} -> {}, collectives {} -> {}, memory {} -> {}\n", a.gemm_points.size(), b.gemm_points.size(),
                      a.collective_points.size(), b.collective_points.size(), a.memory_points.size(), b.memory_points.size());
  text += fmt::format("Sources     {} numbers have another source in b\n", d.source_changes.size());
  text += fmt::format("Reference   {} ({})\n", d.ra.scenario, d.scenario);
  if (d.scenario_gpu != b.hardware && !b.hardware.empty()) {
    // No bundled job runs on b's GPU: b's efficiencies are priced on another GPU's peaks.
    text += fmt::format("  on {}, not {}: --scenario names a job on {}\n", d.scenario_gpu, b.hardware, b.hardware);
  }
  text += fmt::format("  iteration {} -> {} ({})\n", format_duration(Seconds(d.ra.iteration_s)), format_duration(Seconds(d.rb.iteration_s)),
                      percent(d.moved));
  text += fmt::format("  tokens/s  {} -> {}   MFU {}% -> {}%\n", format_number(d.ra.tokens_per_s, 6), format_number(d.rb.tokens_per_s, 6),
                      format_number(100 * d.ra.mfu, 3), format_number(100 * d.rb.mfu, 3));
  return text;
}

// `scenario`: the reference job named with --scenario; without it, the smallest bundled job on the
// GPU the second profile was measured on (from `fallback`), so that an H100 profile is not judged
// on an A100 job.
int run_diff(const std::string& first, const std::string& second, const std::optional<std::string>& scenario, const std::string& fallback,
             const std::string& bundled, bool json) {
  ProfileDiff d{resolve_profile(first, bundled), resolve_profile(second, bundled), {}, {}, {}, {}, {}, {}, 0};
  d.changes = calibrate::diff_numbers(d.a.profile, d.b.profile, 1e-12);
  for (const auto& n : calibrate::profile_numbers(d.a.profile)) {
    const auto sa = calibrate::source_of(d.a.profile, n.path), sb = calibrate::source_of(d.b.profile, n.path);
    if (sa != sb) d.source_changes.emplace_back(n.path, sb);
  }
  d.scenario = scenario ? *scenario : reference_job(d.b.profile.hardware, fallback);
  const auto s = sim::load_scenario(d.scenario);
  s.require_workload();
  d.scenario_gpu = s.cluster.node.gpu.name;
  d.ra = simulate_with(s, d.a.profile);
  d.rb = simulate_with(s, d.b.profile);
  d.moved = d.rb.iteration_s / d.ra.iteration_s - 1;
  std::cout << (json ? diff_json(d).dump(2) + "\n" : diff_text(d));
  return 0;
}

struct CalibrateOptions {
  std::string profile, a, b, scenario = "scenarios/jobs/gpt3-175b-1024-a100.yaml", bundled = kSourceDir + "/scenarios/profiles";
  bool json = false;
  TraceOptions trace;
  FromLogOptions log;
};

CLI::App* add_show(CLI::App& cmd, CalibrateOptions& o) {
  auto* show = cmd.add_subcommand("show", "Every figure of a profile with its source, and its measured points");
  show->add_option("profile", o.profile, "profile YAML, or the name of a bundled profile (a100, h100, h200, b200, rtx-4090)")->required();
  show->add_option("--bundled", o.bundled, "directory of the bundled profiles (default: the project's scenarios/profiles)");
  show->add_flag("--json", o.json, "print JSON instead of tables");
  return show;
}

CLI::App* add_diff(CLI::App& cmd, CalibrateOptions& o) {
  auto* diff = cmd.add_subcommand("diff", "What changed between two profiles, and how the predicted iteration time of a reference job moves");
  diff->add_option("a", o.a, "the first profile (file or bundled name)")->required();
  diff->add_option("b", o.b, "the second profile (file or bundled name)")->required();
  diff->add_option("--scenario", o.scenario, "reference job simulated with each profile (default: the smallest bundled job on b's GPU)")
      ->capture_default_str();
  diff->add_option("--bundled", o.bundled, "directory of the bundled profiles (default: the project's scenarios/profiles)");
  diff->add_flag("--json", o.json, "print JSON instead of tables");
  return diff;
}

CLI::App* add_from_trace(CLI::App& cmd, CalibrateOptions& o) {
  auto* from_trace = cmd.add_subcommand("from-trace", "Build a profile from PyTorch profiler (Kineto) traces, one file per rank");
  from_trace->add_option("traces", o.trace.files, "Chrome trace JSON files (.json or .json.gz), one per rank")->required();
  from_trace->add_option("--out", o.trace.out, "write the profile YAML here");
  from_trace->add_option("--hardware", o.trace.hardware, "hardware YAML of the traced GPU, when its name matches no bundled file");
  from_trace->add_option("--hardware-dir", o.trace.hardware_dir, "directory of the bundled hardware files (default: the project's scenarios/hardware)");
  from_trace->add_option("--bundled", o.bundled, "directory of the bundled profiles (default: the project's scenarios/profiles)");
  from_trace->add_option("--network-bandwidth", o.trace.network_bandwidth, "per-GPU bandwidth across nodes, to fit network collectives (e.g. 200Gb/s)");
  from_trace->add_option("--gpus-per-node", o.trace.gpus_per_node, "GPUs per node: a job no larger stays on NVLink / PCIe")->capture_default_str()->check(CLI::PositiveNumber);
  from_trace->add_option("--name", o.trace.name, "name of the new profile (default: the --out file's stem)");
  from_trace->add_flag("--json", o.trace.json, "print the report as JSON");
  return from_trace;
}

CLI::App* add_from_log(CLI::App& cmd, CalibrateOptions& o) {
  auto* from_log = cmd.add_subcommand("from-log", "Megatron-LM, torchtitan and NeMo training logs: the plan they ran, their step time and peak memory against parasim's");
  from_log->footer(
      "Megatron-LM: each log's argument dump (model, plan, precision), its 'elapsed time per iteration' lines (the median\n"
      "after the first third: warm-up dropped) and its 'memory (MB)' lines (the highest max allocated). torchtitan: the\n"
      "model's arguments as it builds them, the device mesh, the checkpointing, compile and Float8 lines, the training-\n"
      "start line (global batch, sequence length) and the step lines (tps per GPU; memory: the highest max reserved).\n"
      "NeMo: the experiment configuration it echoes as YAML (trainer and model: plan, model, precision, optimizer), the\n"
      "padded vocabulary line and the 'train_step_timing in s' of its progress bar or step lines (no memory by default).\n"
      "A log does not say where it ran: name the GPU, and the node and network where the job spans nodes.\n"
      "Examples:\n"
      "  parasim calibrate from-log tests/data/logs/megatron/h100_gpt0.7b_mb4.log --gpu h100-sxm5-80gb\n"
      "  parasim calibrate from-log tests/data/logs/torchtitan/llama3_8b_fsdp8.log --gpu h100-sxm5-80gb\n"
      "  parasim calibrate from-log tests/data/logs/nemo/gpt3_5b_64g.log --gpu h100-sxm5-80gb\n"
      "  parasim calibrate from-log run-*.log --gpu a100-sxm4-80gb --gpus-per-node 8 --nic-gbps 200 --json");
  add_log_options(*from_log, o.log);
  from_log->add_option("--threads", o.log.threads, "logs simulated at once (default: the machine's cores)")->check(CLI::Range(1, 1024));
  from_log->add_flag("--json", o.log.json, "print JSON instead of a table");
  return from_log;
}

CLI::App* add_fit(CLI::App& cmd, CalibrateOptions& o) {
  auto* fit = cmd.add_subcommand("fit", "A per-cluster correction (GEMM, memory-bound and network efficiency) fitted on training logs");
  fit->footer(
      "Scales the bundled profile of the GPU so that the logs' step times come out as measured: every GEMM efficiency,\n"
      "the memory-bound efficiency and (when a log spans more than one GPU) every fabric's collective efficiency, by\n"
      "least squares on ln(predicted / measured). Each log is also predicted with the correction fitted on the others.\n"
      "Examples:\n"
      "  parasim calibrate fit tests/data/logs/megatron/h100_*.log --gpu h100-sxm5-80gb --out my-cluster.yaml\n"
      "  parasim simulate scenarios/jobs/llama2-7b-lab.yaml --set profile=my-cluster.yaml");
  add_log_options(*fit, o.log);
  fit->add_option("--out", o.log.out, "write the corrected profile here");
  fit->add_flag("--json", o.log.json, "print JSON instead of a table");
  return fit;
}

}  // namespace

Action add_calibrate_command(CLI::App& app) {
  auto o = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand("calibrate", "Calibration profiles: show one, compare two, build one from profiler traces; training logs against predictions");
  cmd->footer(
      "Examples:\n"
      "  parasim calibrate show scenarios/profiles/h100-sxm5.yaml\n"
      "  parasim calibrate diff a100-sxm4 my-profile.yaml --scenario scenarios/jobs/llama2-7b-lab.yaml\n"
      "  parasim calibrate from-trace rank0.pt.trace.json.gz rank1.pt.trace.json.gz --out my-profile.yaml\n"
      "  parasim calibrate from-log train.log --gpu h100-sxm5-80gb\n"
      "  parasim calibrate fit run-*.log --gpu h100-sxm5-80gb --out my-cluster.yaml");
  cmd->require_subcommand(1);
  auto* show = add_show(*cmd, *o);
  auto* diff = add_diff(*cmd, *o);
  auto* from_trace = add_from_trace(*cmd, *o);
  auto* from_log = add_from_log(*cmd, *o);
  auto* fit = add_fit(*cmd, *o);

  return [o, show, diff, from_trace, from_log, fit]() {
    if (fit->parsed()) {
      o->log.hardware_dir = kSourceDir + "/scenarios/hardware";
      return run_fit_logs(o->log);
    }
    if (from_log->parsed()) {
      o->log.hardware_dir = kSourceDir + "/scenarios/hardware";
      return run_from_log(o->log);
    }
    if (show->parsed()) {
      const auto p = resolve_profile(o->profile, o->bundled);
      std::cout << (o->json ? profile_json(p.profile).dump(2) + "\n" : show_text(p.shown, p.profile));
      return 0;
    }
    if (from_trace->parsed()) return run_from_trace(o->trace, o->bundled);
    const bool scenario_given = diff->get_option("--scenario")->count() > 0;
    return run_diff(o->a, o->b, scenario_given ? std::optional<std::string>(o->scenario) : std::nullopt, o->scenario, o->bundled, o->json);
  };
}

}  // namespace parasim::cli
