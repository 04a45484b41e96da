#pragma once
// `parasim calibrate from-trace`: Kineto traces (one file per rank) → measurements → a profile.
//
// The GPU is the one the traces' deviceProperties name (all files must agree). Its datasheet is the
// bundled hardware file of the same name ("NVIDIA A100-SXM4-80GB" matches A100-SXM4-80GB, ignoring
// the NVIDIA / Tesla prefix, case and spaces) or the file given with --hardware; a name nothing matches
// (a board variant such as A100-PG509-200) is kept as the profile's identity, and without --hardware
// only what needs no datasheet is fitted. The fit starts from the bundled profile of that GPU family
// (default_profile's choice; its sources carry over), or the generic profile.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/profile_fit.hpp"
#include "calibrate/trace_analysis.hpp"

namespace parasim::calibrate {

struct ImportOptions {
  std::vector<std::filesystem::path> files;
  std::optional<std::filesystem::path> hardware;  ///< a hardware YAML for the traced GPU
  std::filesystem::path hardware_dir;             ///< the bundled hardware files
  std::filesystem::path profiles_dir;             ///< the bundled profiles
  std::optional<BytesPerSecond> network_bandwidth;
  int gpus_per_node = 8;
  std::string name;  ///< the new profile's name
};

struct ImportResult {
  TraceAnalysis analysis;
  FitResult fit;
  std::string device;             ///< deviceProperties name; empty when no file recorded it
  std::optional<topology::GpuSpec> gpu;
  std::string hardware_file;      ///< where the datasheet came from; empty when unknown
  std::string base;               ///< the profile the fit started from
  double read_seconds = 0;        ///< reading and parsing all files
  std::uint64_t json_bytes = 0;   ///< decompressed, all files
  std::uint64_t largest_json_bytes = 0;
  std::uint64_t peak_rss_bytes = 0;  ///< of the process, after reading (0 where the OS does not say)
};

ImportResult import_traces(const ImportOptions& options);

/// "NVIDIA A100-SXM4-80GB" → "A100-SXM4-80GB"; "Tesla V100-SXM2-32GB" → "V100-SXM2-32GB";
/// upper case, spaces as dashes.
std::string normalized_gpu_name(std::string_view name);

/// The bundled hardware file whose `name` is the device's (normalized); nullopt when none.
std::optional<std::filesystem::path> find_hardware(std::string_view device, const std::filesystem::path& dir);

/// Peak resident memory of this process in bytes (getrusage), 0 when unavailable.
std::uint64_t peak_rss_bytes();

}  // namespace parasim::calibrate
