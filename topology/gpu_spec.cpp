#include "topology/gpu_spec.hpp"

#include <fmt/format.h>

namespace parasim::topology {
namespace {

using yaml::Field;
using yaml::FieldType;
using yaml::Schema;

constexpr Field kPeakFields[] = {
    {.name = "fp32", .type = FieldType::flop_rate, .description = "FP32 (non-tensor) peak", .required = true, .min = 0, .min_exclusive = true},
    {.name = "tf32", .type = FieldType::flop_rate, .description = "TF32 tensor-core dense peak; absent where unsupported", .min = 0, .min_exclusive = true},
    {.name = "bf16", .type = FieldType::flop_rate, .description = "BF16 tensor-core dense peak", .required = true, .min = 0, .min_exclusive = true},
    {.name = "fp16", .type = FieldType::flop_rate, .description = "FP16 tensor-core dense peak", .required = true, .min = 0, .min_exclusive = true},
    {.name = "fp8", .type = FieldType::flop_rate, .description = "FP8 tensor-core dense peak; absent where unsupported", .min = 0, .min_exclusive = true},
};
constexpr Schema kPeakSchema{"peak", "Dense peak FLOP/s per format (without structured sparsity), from the datasheet.", kPeakFields};

constexpr Field kHbmFields[] = {
    {.name = "capacity", .type = FieldType::bytes, .description = "memory capacity as nvidia-smi reports it, e.g. 79.6 GiB", .required = true, .min = 0, .min_exclusive = true},
    {.name = "bandwidth", .type = FieldType::bandwidth, .description = "peak memory bandwidth", .required = true, .min = 0, .min_exclusive = true},
};
constexpr Schema kHbmSchema{"hbm", "Device memory.", kHbmFields};

constexpr Field kNvlinkFields[] = {
    {.name = "bandwidth", .type = FieldType::bandwidth, .description = "bidirectional total per GPU as the datasheet states it (H100: 900 GB/s = 450 GB/s each way)", .required = true, .min = 0, .min_exclusive = true},
    {.name = "links", .type = FieldType::integer, .description = "number of NVLink links", .min = 1},
    {.name = "generation", .type = FieldType::integer, .description = "NVLink generation", .min = 1, .max = 6},
};
constexpr Schema kNvlinkSchema{"nvlink", "NVLink; absent for PCIe-only boards.", kNvlinkFields};

constexpr Field kPcieFields[] = {
    {.name = "generation", .type = FieldType::integer, .description = "PCIe generation of the GPU's host link", .required = true, .min = 1, .max = 6},
    {.name = "lanes", .type = FieldType::integer, .description = "lanes of the host link", .default_text = "16", .min = 1, .max = 32},
};
constexpr Schema kPcieSchema{"pcie", "The GPU's PCIe host link.", kPcieFields};

// Compute capabilities of the GPUs people train on: what frameworks gate features and launch
// requirements on (Megatron-LM's CUDA_DEVICE_MAX_CONNECTIONS rule stops at Blackwell, 10.0).
constexpr std::string_view kComputeCapabilities[] = {"7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0"};

constexpr Field kGpuFields[] = {
    {.name = "name", .type = FieldType::string, .description = "GPU name, e.g. H100-SXM5-80GB", .required = true},
    {.name = "device_names", .type = FieldType::string_list, .description = "names CUDA reports for this part (nvidia-smi, cudaGetDeviceProperties, profiler traces), to find this file from a measurement"},
    {.name = "what_if", .type = FieldType::boolean, .description = "true when the figures are an announced or derived specification rather than a shipping, measured part", .default_text = "false"},
    {.name = "peak", .type = FieldType::section, .description = "dense peak FLOP/s per format", .required = true, .schema = &kPeakSchema},
    {.name = "hbm", .type = FieldType::section, .description = "device memory", .required = true, .schema = &kHbmSchema},
    {.name = "nvlink", .type = FieldType::section, .description = "NVLink; absent for PCIe-only boards", .schema = &kNvlinkSchema},
    {.name = "pcie", .type = FieldType::section, .description = "PCIe host link", .required = true, .schema = &kPcieSchema},
    {.name = "sms", .type = FieldType::integer, .description = "streaming multiprocessors (for GEMM wave quantization)", .min = 1},
    {.name = "compute_capability", .type = FieldType::choice, .description = "CUDA compute capability (H100: 9.0); what launch scripts gate on", .choices = kComputeCapabilities},
};

}  // namespace

const yaml::Schema kGpuSchema{"hardware", "A GPU as its datasheet describes it.", kGpuFields};

BytesPerSecond pcie_bandwidth(int generation, int lanes) {
  // GT/s per lane and encoding efficiency, per the PCI-SIG base specifications.
  double per_lane = 0.0;  // bytes/s per lane per direction
  switch (generation) {
    case 1: per_lane = 2.5e9 * 0.8 / 8; break;
    case 2: per_lane = 5e9 * 0.8 / 8; break;
    case 3: per_lane = 8e9 * 128.0 / 130.0 / 8; break;
    case 4: per_lane = 16e9 * 128.0 / 130.0 / 8; break;
    case 5: per_lane = 32e9 * 128.0 / 130.0 / 8; break;
    case 6: per_lane = 64e9 * 242.0 / 256.0 / 8; break;
    default: throw std::invalid_argument(fmt::format("no PCIe generation {}", generation));
  }
  return BytesPerSecond(per_lane * lanes);
}

BytesPerSecond GpuSpec::pcie_per_direction() const { return pcie_bandwidth(pcie_generation, pcie_lanes); }

GpuSpec parse_gpu(const yaml::Record& r) {
  GpuSpec g;
  g.name = r.string("name");
  if (r.has("device_names")) g.device_names = r.strings("device_names");
  g.what_if = r.boolean("what_if");
  const auto& peak = r.section("peak");
  for (auto p : kAllPrecisions) {
    if (peak.has(precision_name(p))) g.peak[static_cast<std::size_t>(p)] = peak.flop_rate(precision_name(p));
  }
  const auto& hbm = r.section("hbm");
  g.hbm_capacity = hbm.bytes("capacity");
  g.hbm_bandwidth = hbm.bandwidth("bandwidth");
  if (r.has("nvlink")) {
    const auto& nv = r.section("nvlink");
    g.nvlink = NvlinkSpec{nv.bandwidth("bandwidth"), nv.has("links") ? static_cast<int>(nv.integer("links")) : 0};
  }
  const auto& pcie = r.section("pcie");
  g.pcie_generation = static_cast<int>(pcie.integer("generation"));
  g.pcie_lanes = static_cast<int>(pcie.integer("lanes"));
  g.sms = r.has("sms") ? static_cast<int>(r.integer("sms")) : 0;
  if (r.has("compute_capability")) {
    const auto& cc = r.string("compute_capability");
    const auto dot = cc.find('.');
    g.compute_capability = {std::stoi(cc.substr(0, dot)), std::stoi(cc.substr(dot + 1))};
  }
  return g;
}

}  // namespace parasim::topology
