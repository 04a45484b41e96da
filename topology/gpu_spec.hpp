#pragma once
// What a GPU is on paper: dense peak FLOP/s per format, HBM, NVLink and PCIe. Figures come from
// datasheets; what the GPU really delivers is the calibration profile's business.
#include <array>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "core/precision.hpp"
#include "core/schema.hpp"
#include "core/units.hpp"

namespace parasim::topology {

struct NvlinkSpec {
  /// Bidirectional total per GPU as the datasheet states it (900 GB/s for H100 = 450 GB/s each way).
  BytesPerSecond bidirectional;
  int links = 0;  ///< 0 = not stated
  BytesPerSecond per_direction() const { return bidirectional / 2.0; }
  bool operator==(const NvlinkSpec&) const = default;
};

struct GpuSpec {
  std::string name;
  /// The names CUDA reports for this part (cudaGetDeviceProperties, nvidia-smi, a profiler trace's
  /// deviceProperties), which need not be `name`: "NVIDIA H100 80GB HBM3" is an H100-SXM5-80GB.
  std::vector<std::string> device_names;
  bool what_if = false;  ///< an announced or derived specification, not a measured part
  /// Dense (no structured sparsity) tensor-core peak per format; nullopt where unsupported.
  std::array<std::optional<FlopsPerSecond>, kAllPrecisions.size()> peak{};
  Bytes hbm_capacity;  ///< as nvidia-smi reports it
  BytesPerSecond hbm_bandwidth;
  std::optional<NvlinkSpec> nvlink;  ///< nullopt for PCIe-only boards
  int pcie_generation = 4;
  int pcie_lanes = 16;
  int sms = 0;  ///< streaming multiprocessors (GEMM wave quantization); 0 = not stated
  /// CUDA compute capability (major, minor); {0, 0} = not stated.
  std::pair<int, int> compute_capability{0, 0};

  std::optional<FlopsPerSecond> peak_for(Precision p) const { return peak[static_cast<std::size_t>(p)]; }
  /// Usable PCIe bandwidth per direction after line encoding (gen4 x16: 31.5 GB/s).
  BytesPerSecond pcie_per_direction() const;
  bool operator==(const GpuSpec&) const = default;
};

/// PCIe bandwidth per direction for a generation and lane count, after 8b/10b (gen1-2),
/// 128b/130b (gen3-5) or FLIT (gen6) encoding.
BytesPerSecond pcie_bandwidth(int generation, int lanes);

extern const yaml::Schema kGpuSchema;
GpuSpec parse_gpu(const yaml::Record& record);

}  // namespace parasim::topology
