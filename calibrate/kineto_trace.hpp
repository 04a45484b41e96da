#pragma once
// A PyTorch profiler (Kineto) Chrome trace, reduced to what calibration reads: the GPU's identity
// (deviceProperties), the rank and process groups (distributedInfo), GPU activity (kernels, copies,
// memsets: device, stream, start, duration, correlation, NCCL metadata where the trace carries it),
// host ops (cpu_op and user_annotation, e.g. nccl:all_reduce: thread, interval, External id, Input
// Dims and Input type) and the runtime calls
// that launched kernels (cuda_runtime / cuda_driver: thread, time, correlation).
//
// Reading is one pass of simdjson's On-Demand parser over the decompressed text (zlib for .gz, by the
// gzip magic bytes rather than the file name), keeping compact records: peak memory stays a little
// above the decompressed size. Times are kept in integer nanoseconds, parsed from the JSON text
// itself, so "4458677009853.422" keeps its nanoseconds (a double would round them to 0.5 us).
//
// What is not a usable NVIDIA trace fails with one line, FILE: error: …: missing or empty files,
// corrupt or truncated gzip, text that is not JSON or is cut short, JSON of another shape (no
// traceEvents list), a trace without GPU kernels, and ROCm traces (AMD devices, hip* runtime calls).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/kernel_class.hpp"

namespace parasim::calibrate {

struct DeviceInfo {
  int id = 0;
  std::string name;  ///< as CUDA reports it, e.g. "NVIDIA A100-SXM4-80GB"
  int sms = 0;
  double memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int warp_size = 0;
};

struct ProcessGroupInfo {
  std::string name, description;
  int size = 0;
  std::vector<int> ranks;
};

/// Communicator metadata as PyTorch records it on NCCL kernels or record_param_comms ops.
struct CommMetadata {
  std::string collective;  ///< "allreduce", "allgather", "all_to_all", …
  std::int64_t in_elements = -1, out_elements = -1;
  int group_size = 0;  ///< 0 when not recorded
  std::string dtype;   ///< "Float", "BFloat16", …
};

struct GpuEvent {
  KernelClass klass = KernelClass::other;
  std::uint32_t name = 0;  ///< index into KinetoTrace::strings
  int device = 0;
  std::int64_t stream = 0;
  std::int64_t start_ns = 0, dur_ns = 0;
  std::int64_t correlation = -1, external_id = -1;
  double bytes = 0;                  ///< copies and memsets
  std::uint64_t launch_shape = 0;    ///< hash of grid and block, to tell launches of one kernel apart
  std::int32_t comm = -1;            ///< index into KinetoTrace::comm, or -1
};

/// One input of a host op: its dims (a slice of KinetoTrace::dims) and type name.
struct HostInput {
  std::uint32_t dims_offset = 0;
  std::uint32_t rank = 0;
  std::uint32_t dtype = 0;  ///< index into strings ("float", "c10::BFloat16", "Scalar", …)
};

struct HostOp {
  std::uint32_t name = 0;
  std::uint32_t thread = 0;  ///< (pid, tid) interned
  std::int64_t start_ns = 0, dur_ns = 0;
  std::int64_t external_id = -1;
  std::uint32_t inputs_offset = 0, inputs = 0;  ///< slice of KinetoTrace::inputs
  std::int32_t comm = -1;
  bool has_dims = false;  ///< the op recorded Input Dims
};

/// A runtime or driver call that carries a correlation id (kernel launches, copies).
struct Launch {
  std::int64_t correlation = 0;
  std::uint32_t thread = 0;
  std::int64_t ts_ns = 0;
};

struct KinetoTrace {
  std::string file;                ///< as named on the command line
  std::uint64_t file_bytes = 0;    ///< on disk
  std::uint64_t json_bytes = 0;    ///< decompressed
  std::uint64_t events = 0;        ///< traceEvents entries
  std::vector<DeviceInfo> devices;
  std::optional<int> rank, world_size;
  std::string backend, nccl_version;
  std::vector<ProcessGroupInfo> groups;
  std::vector<std::string> strings;  ///< kernel names, op names, dtype names
  std::vector<GpuEvent> gpu;
  std::vector<HostOp> ops;
  std::vector<Launch> launches;
  std::vector<std::int64_t> dims;
  std::vector<HostInput> inputs;
  std::vector<CommMetadata> comm;

  const std::string& string(std::uint32_t id) const { return strings[id]; }
  std::size_t kernels() const;  ///< GPU events that are kernels (not copies or memsets)
};

/// Reads a trace file (.json or gzip-compressed). Throws InputError ("FILE: error: …").
KinetoTrace read_kineto_trace(const std::filesystem::path& file);
/// Parses trace text as if it came from `display_name`; the same checks as read_kineto_trace.
KinetoTrace parse_kineto_trace(std::string_view json, const std::string& display_name);
/// Decompresses gzip or zlib data (several gzip members in a row too). Throws InputError on corrupt or truncated data.
std::string gunzip(std::string_view data, const std::string& display_name);

/// "4458677009853.422" (microseconds, as Chrome traces write them) → 4458677009853422 ns; nullopt
/// beyond int64 nanoseconds (about 292 years).
std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text);

}  // namespace parasim::calibrate
