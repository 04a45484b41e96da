#include "calibrate/trace_import.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <sys/resource.h>

#include "calibrate/profile_yaml.hpp"
#include "core/error.hpp"
#include "core/schema.hpp"

namespace parasim::calibrate {
namespace {

std::vector<std::filesystem::path> yaml_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The device the kernels of a trace ran on, by deviceProperties; empty when not recorded.
std::string device_of(const KinetoTrace& t) {
  if (t.devices.empty()) return {};
  const int device = t.gpu.empty() ? t.devices.front().id : t.gpu.front().device;
  for (const auto& d : t.devices) {
    if (d.id == device) return d.name;
  }
  return t.devices.front().name;
}

std::string file_list(const std::vector<std::filesystem::path>& files) {
  std::string out;
  for (std::size_t i = 0; i < files.size() && i < 3; ++i) out += (i ? ", " : "") + files[i].filename().string();
  if (files.size() > 3) out += fmt::format(" and {} more", files.size() - 3);
  return out;
}

}  // namespace

std::string normalized_gpu_name(std::string_view name) {
  std::string s(name);
  for (auto& c : s) c = c == ' ' ? '-' : static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  for (std::string_view prefix : {"NVIDIA-", "TESLA-", "GEFORCE-"}) {
    if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  }
  return s;
}

std::optional<std::filesystem::path> find_hardware(std::string_view device, const std::filesystem::path& dir) {
  const std::string want = normalized_gpu_name(device);
  if (want.empty()) return std::nullopt;
  for (const auto& f : yaml_files(dir)) {
    const auto spec = topology::parse_gpu(yaml::Record(yaml::load_file(f), topology::kGpuSchema));
    if (normalized_gpu_name(spec.name) == want) return f;
    for (const auto& alias : spec.device_names) {
      if (normalized_gpu_name(alias) == want) return f;
    }
  }
  return std::nullopt;
}

std::uint64_t peak_rss_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
  return static_cast<std::uint64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

namespace {

// Reads and analyzes every trace (one GPU model throughout), filling the result's reading figures.
void read_and_analyze(const ImportOptions& o, ImportResult& r) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<KinetoTrace> traces;
  std::string first_device_file;
  for (const auto& f : o.files) {
    traces.push_back(read_kineto_trace(f));
    const auto& t = traces.back();
    r.json_bytes += t.json_bytes;
    r.largest_json_bytes = std::max(r.largest_json_bytes, t.json_bytes);
    const std::string device = device_of(t);
    if (device.empty()) continue;
    if (r.device.empty()) {
      r.device = device;
      first_device_file = t.file;
    } else if (normalized_gpu_name(device) != normalized_gpu_name(r.device)) {
      throw InputError({t.file, 0, 0}, {},
                       fmt::format("traced on {}, but {} was traced on {}: import traces of one GPU model at a time", device, first_device_file, r.device));
    }
  }
  r.read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.peak_rss_bytes = peak_rss_bytes();
  r.analysis = analyze_traces(traces, {o.gpus_per_node});
}

// The bundled profile of the GPU's family (its file named in the result), else the built-in one with
// every figure marked assumed.
Profile base_profile(const ImportOptions& o, ImportResult& r) {
  const std::string family = default_profile(r.gpu ? r.gpu->name : normalized_gpu_name(r.device)).name;
  for (const auto& f : yaml_files(o.profiles_dir)) {
    Profile p = load_profile(f);
    if (p.name == family) {
      r.base = f.string();
      return p;
    }
  }
  Profile base = default_profile(r.gpu ? r.gpu->name : normalized_gpu_name(r.device));
  r.base = fmt::format("default_profile (built-in {})", base.name);
  for (const auto& key : unsourced_numbers(base)) base.sources[key] = fmt::format("assumed: the built-in {} profile's figure", base.name);
  return base;
}

}  // namespace

ImportResult import_traces(const ImportOptions& o) {
  ImportResult r;
  read_and_analyze(o, r);
  // The datasheet.
  std::optional<std::filesystem::path> hardware = o.hardware;
  if (!hardware && !r.device.empty()) hardware = find_hardware(r.device, o.hardware_dir);
  if (hardware) {
    r.gpu = topology::parse_gpu(yaml::Record(yaml::load_file(*hardware), topology::kGpuSchema));
    r.hardware_file = hardware->string();
  }
  const Profile base = base_profile(o, r);
  FitOptions fit;
  fit.gpu = r.gpu;
  fit.network_bandwidth = o.network_bandwidth;
  fit.source = fmt::format("trace: {}", file_list(o.files));
  r.fit = fit_profile(base, r.analysis.measurements, fit);
  Profile& p = r.fit.profile;
  p.name = o.name.empty() ? base.name + "-trace" : o.name;
  p.gpu = r.device;
  p.hardware = r.gpu ? r.gpu->name : std::string();
  p.what_if = false;
  p.source = fmt::format("trace: {} file{} ({}); unfitted figures from {}", o.files.size(), o.files.size() == 1 ? "" : "s", file_list(o.files),
                         base.name);
  return r;
}

}  // namespace parasim::calibrate
