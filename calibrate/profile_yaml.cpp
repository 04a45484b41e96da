#include "calibrate/profile_yaml.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <functional>

#include "core/suggest.hpp"

namespace parasim::calibrate {
namespace {

using yaml::Field;
using yaml::FieldType;
using yaml::Schema;

// ---- schema tables -------------------------------------------------------------------------------

constexpr std::string_view kPrecisionNames[] = {"fp32", "tf32", "bf16", "fp16", "fp8"};
constexpr std::string_view kFabricNames[] = {"nvlink", "pcie", "network"};
constexpr std::string_view kCollectiveNames[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                                 "send_recv", "broadcast", "reduce"};
constexpr std::string_view kMemoryKinds[] = {"copy", "elementwise"};
constexpr std::string_view kClockNames[] = {"sustained", "burst"};

constexpr Field kFractionFields[] = {
    {.name = "fp32", .type = FieldType::number, .description = "FP32 (SIMT) GEMM", .required = true, .min = 0, .max = 1},
    {.name = "tf32", .type = FieldType::number, .description = "TF32 tensor-core GEMM", .required = true, .min = 0, .max = 1},
    {.name = "bf16", .type = FieldType::number, .description = "BF16 tensor-core GEMM", .required = true, .min = 0, .max = 1},
    {.name = "fp16", .type = FieldType::number, .description = "FP16 tensor-core GEMM", .required = true, .min = 0, .max = 1},
    {.name = "fp8", .type = FieldType::number, .description = "FP8 tensor-core GEMM", .required = true, .min = 0, .max = 1},
};
constexpr Schema kGemmEfficiencySchema{"efficiency", "Best measured GEMM throughput per format, as a fraction of the dense peak.", kFractionFields};

constexpr Field kReferenceFields[] = {
    {.name = "m", .type = FieldType::integer, .description = "rows of the output", .required = true, .min = 1},
    {.name = "n", .type = FieldType::integer, .description = "columns of the output", .required = true, .min = 1},
    {.name = "k", .type = FieldType::integer, .description = "inner dimension", .required = true, .min = 1},
};
constexpr Schema kReferenceSchema{"reference", "The GEMM shape the best efficiency was measured at.", kReferenceFields};

constexpr Field kGemmPointFields[] = {
    {.name = "precision", .type = FieldType::choice, .description = "number format", .required = true, .choices = kPrecisionNames},
    {.name = "batch", .type = FieldType::integer, .description = "batch count of a batched GEMM", .default_text = "1", .min = 1},
    {.name = "m", .type = FieldType::integer, .description = "rows of the output", .required = true, .min = 1},
    {.name = "n", .type = FieldType::integer, .description = "columns of the output", .required = true, .min = 1},
    {.name = "k", .type = FieldType::integer, .description = "inner dimension", .required = true, .min = 1},
    {.name = "time", .type = FieldType::duration, .description = "GPU time of one GEMM", .required = true, .min = 0, .min_exclusive = true},
    {.name = "source", .type = FieldType::string, .description = "where it was measured: public: …, trace: …, cupti: …", .required = true},
    {.name = "clock", .type = FieldType::choice, .description = "burst: a few launches at the boost clock (benchmarks, the collector); sustained: under training's power limit (traces)", .default_text = "sustained", .choices = kClockNames},
};
constexpr Schema kGemmPointSchema{"gemm point", "A measured GEMM.", kGemmPointFields};

constexpr Field kGemmFields[] = {
    {.name = "efficiency", .type = FieldType::section, .description = "best GEMM efficiency per format", .required = true, .schema = &kGemmEfficiencySchema},
    {.name = "reference", .type = FieldType::section, .description = "shape of the best efficiency", .required = true, .schema = &kReferenceSchema},
    {.name = "tile", .type = FieldType::integer, .description = "output tile edge for wave quantization", .required = true, .min = 1},
    {.name = "k_half", .type = FieldType::number, .description = "K at which the main loop's fill and drain halve the efficiency", .required = true, .min = 0},
    {.name = "sustained_clock", .type = FieldType::number, .description = "fraction of the burst tensor-core rate sustained under the power limit (GEMMs and attention)", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "points", .type = FieldType::section_list, .description = "measured GEMMs; the cost model interpolates between them in log space", .schema = &kGemmPointSchema},
};
constexpr Schema kGemmSchema{"gemm", "Matrix multiplication.", kGemmFields};

constexpr Field kMemoryPointFields[] = {
    {.name = "kind", .type = FieldType::choice, .description = "device-to-device copy or elementwise kernel", .required = true, .choices = kMemoryKinds},
    {.name = "bytes", .type = FieldType::bytes, .description = "bytes read plus bytes written", .required = true, .min = 0, .min_exclusive = true},
    {.name = "time", .type = FieldType::duration, .description = "GPU time", .required = true, .min = 0, .min_exclusive = true},
    {.name = "source", .type = FieldType::string, .description = "where it was measured", .required = true},
};
constexpr Schema kMemoryPointSchema{"memory point", "A measured memory-bound transfer.", kMemoryPointFields};

constexpr Field kMemoryFields[] = {
    {.name = "efficiency", .type = FieldType::number, .description = "streaming kernels, fraction of HBM bandwidth", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "points", .type = FieldType::section_list, .description = "measured copies and elementwise kernels", .schema = &kMemoryPointSchema},
};
constexpr Schema kMemorySchema{"memory", "Memory-bound kernels.", kMemoryFields};

constexpr Field kFlash1Fields[] = {
    {.name = "forward_efficiency", .type = FieldType::number, .description = "FlashAttention-1 forward, of the dense peak", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "backward_efficiency", .type = FieldType::number, .description = "FlashAttention-1 backward, of the dense peak", .required = true, .min = 0, .max = 1, .min_exclusive = true},
};
constexpr Schema kFlash1Schema{"flash1", "FlashAttention-1 (flash-attn 1.x, built for Ampere's instructions) on this GPU.", kFlash1Fields};

constexpr Field kFlash2Fields[] = {
    {.name = "forward_efficiency", .type = FieldType::number, .description = "FlashAttention-2 forward, of the dense peak", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "backward_efficiency", .type = FieldType::number, .description = "FlashAttention-2 backward, of the dense peak", .required = true, .min = 0, .max = 1, .min_exclusive = true},
};
constexpr Schema kFlash2Schema{"flash2", "FlashAttention-2 (flash-attn 2.x, PyTorch SDPA's flash backend; built for Ampere's instructions) on this GPU.", kFlash2Fields};

constexpr Field kAttentionFields[] = {
    {.name = "forward_efficiency", .type = FieldType::number, .description = "flash attention forward, of the dense peak", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "backward_efficiency", .type = FieldType::number, .description = "flash attention backward, of the dense peak", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "causal_work_fraction", .type = FieldType::number, .description = "fraction of the full s² work a causal kernel does", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "seq_half", .type = FieldType::number, .description = "keys at which a flash kernel's efficiency halves (s / (s + seq_half)); 0: off", .required = true, .min = 0},
    {.name = "exp_head_dim", .type = FieldType::number, .description = "head dim at which the softmax exponentials take as long as the matmuls; 0: off", .required = true, .min = 0},
    {.name = "flash1", .type = FieldType::section, .description = "FlashAttention-1 on this GPU (training.flash_kernel: flash1)", .required = true, .schema = &kFlash1Schema},
    {.name = "flash2", .type = FieldType::section, .description = "FlashAttention-2 on this GPU (training.flash_kernel: flash2)", .required = true, .schema = &kFlash2Schema},
};
constexpr Schema kAttentionSchema{"attention", "Attention kernels.", kAttentionFields};

constexpr Field kLaunchFields[] = {
    {.name = "kernel", .type = FieldType::duration, .description = "fixed time per kernel (launch, prologue, epilogue)", .required = true, .min = 0},
    {.name = "collective", .type = FieldType::duration, .description = "fixed cost of starting a collective", .required = true, .min = 0},
};
constexpr Schema kLaunchSchema{"launch", "Fixed costs.", kLaunchFields};

constexpr Field kFabricFields[] = {
    {.name = "efficiency", .type = FieldType::number, .description = "Simple protocol: achieved / nominal bandwidth of a large collective", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "step_latency", .type = FieldType::duration, .description = "Simple protocol: latency per algorithm step beyond the wires", .required = true, .min = 0},
    {.name = "ll_efficiency", .type = FieldType::number, .description = "LL protocol: achieved / nominal bandwidth", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "ll_step_latency", .type = FieldType::duration, .description = "LL protocol: latency per algorithm step beyond the wires", .required = true, .min = 0},
};
constexpr Schema kFabricSchema{"fabric", "Collectives on one fabric.", kFabricFields};

constexpr Field kFabricsFields[] = {
    {.name = "nvlink", .type = FieldType::section, .description = "NVLink / NVSwitch island", .required = true, .schema = &kFabricSchema},
    {.name = "pcie", .type = FieldType::section, .description = "PCIe peer to peer", .required = true, .schema = &kFabricSchema},
    {.name = "network", .type = FieldType::section, .description = "across nodes", .required = true, .schema = &kFabricSchema},
};
constexpr Schema kFabricsSchema{"fabrics", "Collective bandwidth and latency per fabric.", kFabricsFields};

constexpr Field kNvlsFields[] = {
    {.name = "enabled", .type = FieldType::boolean, .description = "NVLink SHARP (NVSwitch gen3+) reduces in the switch", .required = true},
    {.name = "efficiency", .type = FieldType::number, .description = "of the in-switch bound S / link bandwidth", .required = true, .min = 0, .max = 1, .min_exclusive = true},
    {.name = "latency", .type = FieldType::duration, .description = "fixed cost of an NVLS all-reduce beyond the launch", .required = true, .min = 0},
};
constexpr Schema kNvlsSchema{"nvls", "NVLink SHARP.", kNvlsFields};

constexpr Field kPerFabricFields[] = {
    {.name = "nvlink", .type = FieldType::number, .description = "while an NVLink transfer overlaps", .required = true, .min = 0},
    {.name = "pcie", .type = FieldType::number, .description = "while a PCIe transfer overlaps", .required = true, .min = 0},
    {.name = "network", .type = FieldType::number, .description = "while a network transfer overlaps", .required = true, .min = 0},
};
constexpr Schema kPerFabricSchema{"slowdown", "Relative slowdown per fabric (0.1 = 10% slower).", kPerFabricFields};

constexpr Field kComputeSlowdownFields[] = {
    {.name = "gemm", .type = FieldType::section, .description = "GEMMs", .required = true, .schema = &kPerFabricSchema},
    {.name = "attention", .type = FieldType::section, .description = "attention kernels", .required = true, .schema = &kPerFabricSchema},
    {.name = "memory_bound", .type = FieldType::section, .description = "memory-bound kernels", .required = true, .schema = &kPerFabricSchema},
};
constexpr Schema kComputeSlowdownSchema{"compute_slowdown", "Relative slowdown of compute while a transfer overlaps it.", kComputeSlowdownFields};

constexpr Field kOverlapFields[] = {
    {.name = "compute_slowdown", .type = FieldType::section, .description = "compute slowed by overlapping transfers, per compute kind and fabric", .required = true, .schema = &kComputeSlowdownSchema},
    {.name = "comm_slowdown", .type = FieldType::section, .description = "transfers slowed by overlapping compute, per fabric", .required = true, .schema = &kPerFabricSchema},
};
constexpr Schema kOverlapSchema{"overlap", "Compute and communication slowing each other.", kOverlapFields};

constexpr Field kCollectivePointFields[] = {
    {.name = "collective", .type = FieldType::choice, .description = "the collective", .required = true, .choices = kCollectiveNames},
    {.name = "fabric", .type = FieldType::choice, .description = "the slowest fabric it crossed", .required = true, .choices = kFabricNames},
    {.name = "ranks", .type = FieldType::integer, .description = "ranks in the group", .required = true, .min = 2},
    {.name = "bytes", .type = FieldType::bytes, .description = "the whole buffer as nccl-tests counts it", .required = true, .min = 0, .min_exclusive = true},
    {.name = "time", .type = FieldType::duration, .description = "time of one collective", .required = true, .min = 0, .min_exclusive = true},
    {.name = "algorithm", .type = FieldType::string, .description = "NCCL algorithm (ring, tree, nvls, collnet, …) where known"},
    {.name = "protocol", .type = FieldType::string, .description = "NCCL protocol (LL, LL128, SIMPLE) where known"},
    {.name = "source", .type = FieldType::string, .description = "where it was measured", .required = true},
};
constexpr Schema kCollectivePointSchema{"collective point", "A measured collective.", kCollectivePointFields};

constexpr Field kCollectivesFields[] = {
    {.name = "points", .type = FieldType::section_list, .description = "measured collectives (bus bandwidth by size)", .schema = &kCollectivePointSchema},
};
constexpr Schema kCollectivesSchema{"collectives", "Measured collectives.", kCollectivesFields};

constexpr Field kProfileFields[] = {
    {.name = "name", .type = FieldType::string, .description = "profile name, e.g. a100", .required = true},
    {.name = "source", .type = FieldType::string, .description = "summary of where the figures come from", .required = true},
    {.name = "gpu", .type = FieldType::string, .description = "the device as it names itself (CUDA device properties)"},
    {.name = "hardware", .type = FieldType::string, .description = "name of the hardware file whose datasheet figures the fractions refer to"},
    {.name = "what_if", .type = FieldType::boolean, .description = "true when derived from announced specifications rather than measured", .default_text = "false"},
    {.name = "gemm", .type = FieldType::section, .description = "matrix multiplication", .required = true, .schema = &kGemmSchema},
    {.name = "memory", .type = FieldType::section, .description = "memory-bound kernels", .required = true, .schema = &kMemorySchema},
    {.name = "attention", .type = FieldType::section, .description = "attention kernels", .required = true, .schema = &kAttentionSchema},
    {.name = "launch", .type = FieldType::section, .description = "fixed costs", .required = true, .schema = &kLaunchSchema},
    {.name = "fabrics", .type = FieldType::section, .description = "collectives per fabric", .required = true, .schema = &kFabricsSchema},
    {.name = "nvls", .type = FieldType::section, .description = "NVLink SHARP", .required = true, .schema = &kNvlsSchema},
    {.name = "overlap", .type = FieldType::section, .description = "overlap slowdown", .required = true, .schema = &kOverlapSchema},
    {.name = "collectives", .type = FieldType::section, .description = "measured collectives", .schema = &kCollectivesSchema},
    {.name = "sources", .type = FieldType::node, .description = "where each number comes from: key path -> \"public: …\", \"trace: …\", \"cupti: …\" or \"assumed: …\""},
};

// ---- the scalar figures, by key path ---------------------------------------------------------------

struct Accessor {
  std::string path;
  NumberUnit unit;
  std::function<double(const Profile&)> get;
  std::function<void(Profile&, double)> set;
};

FabricProfile& fabric_ref(Profile& p, std::size_t f) { return f == 0 ? p.nvlink : f == 1 ? p.pcie : p.network; }
const FabricProfile& fabric_ref(const Profile& p, std::size_t f) { return f == 0 ? p.nvlink : f == 1 ? p.pcie : p.network; }

// One row of the table for a Profile member of any arithmetic type.
template <typename Member>
void add_number(std::vector<Accessor>& t, std::string path, NumberUnit unit, Member member) {
  t.push_back({std::move(path), unit, [member](const Profile& p) { return static_cast<double>(p.*member); },
               [member](Profile& p, double v) { p.*member = static_cast<std::remove_reference_t<decltype(p.*member)>>(v); }});
}

// One row for a Seconds value that `get_ref` reaches inside a Profile (const or not).
template <typename GetRef>
void add_seconds(std::vector<Accessor>& t, std::string path, GetRef get_ref) {
  t.push_back({std::move(path), NumberUnit::seconds, [get_ref](const Profile& p) { return get_ref(p).value(); },
               [get_ref](Profile& p, double v) { get_ref(p) = Seconds(v); }});
}

void add_gemm_accessors(std::vector<Accessor>& t) {
  for (std::size_t i = 0; i < kAllPrecisions.size(); ++i) {
    t.push_back({fmt::format("gemm.efficiency.{}", kPrecisionNames[i]), NumberUnit::fraction,
                 [i](const Profile& p) { return p.gemm_efficiency[i]; }, [i](Profile& p, double v) { p.gemm_efficiency[i] = v; }});
  }
  for (std::size_t i = 0; i < 3; ++i) {
    t.push_back({fmt::format("gemm.reference.{}", "mnk"[i]), NumberUnit::integer,
                 [i](const Profile& p) { return static_cast<double>(p.gemm_reference[i]); },
                 [i](Profile& p, double v) { p.gemm_reference[i] = static_cast<std::int64_t>(v); }});
  }
  add_number(t, "gemm.tile", NumberUnit::integer, &Profile::gemm_tile);
  add_number(t, "gemm.k_half", NumberUnit::number, &Profile::gemm_k_half);
  add_number(t, "gemm.sustained_clock", NumberUnit::fraction, &Profile::sustained_clock);
  add_number(t, "memory.efficiency", NumberUnit::fraction, &Profile::memory_efficiency);
}

void add_attention_accessors(std::vector<Accessor>& t) {
  add_number(t, "attention.forward_efficiency", NumberUnit::fraction, &Profile::attention_forward_efficiency);
  add_number(t, "attention.backward_efficiency", NumberUnit::fraction, &Profile::attention_backward_efficiency);
  add_number(t, "attention.flash1.forward_efficiency", NumberUnit::fraction, &Profile::attention_flash1_forward_efficiency);
  add_number(t, "attention.flash1.backward_efficiency", NumberUnit::fraction, &Profile::attention_flash1_backward_efficiency);
  add_number(t, "attention.flash2.forward_efficiency", NumberUnit::fraction, &Profile::attention_flash2_forward_efficiency);
  add_number(t, "attention.flash2.backward_efficiency", NumberUnit::fraction, &Profile::attention_flash2_backward_efficiency);
  add_number(t, "attention.causal_work_fraction", NumberUnit::fraction, &Profile::causal_work_fraction);
  add_number(t, "attention.seq_half", NumberUnit::number, &Profile::attention_seq_half);
  add_number(t, "attention.exp_head_dim", NumberUnit::number, &Profile::attention_exp_head_dim);
}

// Launch costs, the three fabrics' rates and latencies, and NVLink SHARP.
void add_communication_accessors(std::vector<Accessor>& t) {
  add_seconds(t, "launch.kernel", [](auto& p) -> auto& { return p.kernel_launch; });
  add_seconds(t, "launch.collective", [](auto& p) -> auto& { return p.collective_launch; });
  for (std::size_t f = 0; f < 3; ++f) {
    const std::string base = fmt::format("fabrics.{}.", kFabricNames[f]);
    t.push_back({base + "efficiency", NumberUnit::fraction, [f](const Profile& p) { return fabric_ref(p, f).efficiency; },
                 [f](Profile& p, double v) { fabric_ref(p, f).efficiency = v; }});
    add_seconds(t, base + "step_latency", [f](auto& p) -> auto& { return fabric_ref(p, f).step_latency; });
    t.push_back({base + "ll_efficiency", NumberUnit::fraction, [f](const Profile& p) { return fabric_ref(p, f).ll_efficiency; },
                 [f](Profile& p, double v) { fabric_ref(p, f).ll_efficiency = v; }});
    add_seconds(t, base + "ll_step_latency", [f](auto& p) -> auto& { return fabric_ref(p, f).ll_step_latency; });
  }
  t.push_back({"nvls.enabled", NumberUnit::boolean, [](const Profile& p) { return p.nvls ? 1.0 : 0.0; },
               [](Profile& p, double v) { p.nvls = v != 0.0; }});
  add_number(t, "nvls.efficiency", NumberUnit::fraction, &Profile::nvls_efficiency);
  add_seconds(t, "nvls.latency", [](auto& p) -> auto& { return p.nvls_latency; });
}

void add_overlap_accessors(std::vector<Accessor>& t) {
  constexpr std::string_view kinds[] = {"gemm", "attention", "memory_bound"};
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t f = 0; f < 3; ++f) {
      t.push_back({fmt::format("overlap.compute_slowdown.{}.{}", kinds[k], kFabricNames[f]), NumberUnit::number,
                   [k, f](const Profile& p) { return p.compute_slowdown[k][f]; },
                   [k, f](Profile& p, double v) { p.compute_slowdown[k][f] = v; }});
    }
  }
  for (std::size_t f = 0; f < 3; ++f) {
    t.push_back({fmt::format("overlap.comm_slowdown.{}", kFabricNames[f]), NumberUnit::number,
                 [f](const Profile& p) { return p.comm_slowdown[f]; }, [f](Profile& p, double v) { p.comm_slowdown[f] = v; }});
  }
}

// Every number a profile holds, by key path; the writer, `calibrate show` and compare list them in this order.
const std::vector<Accessor>& accessors() {
  static const std::vector<Accessor> table = [] {
    std::vector<Accessor> t;
    add_gemm_accessors(t);
    add_attention_accessors(t);
    add_communication_accessors(t);
    add_overlap_accessors(t);
    return t;
  }();
  return table;
}

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    parts.emplace_back(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

/// Every key path a `sources:` entry may name: the numbers and every section above them, the point
/// lists, and the identity.
const std::vector<std::string>& source_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    auto add = [&out](const std::string& k) {
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    };
    for (const auto& a : accessors()) {
      const auto parts = split_path(a.path);
      std::string prefix;
      for (const auto& part : parts) {
        prefix = prefix.empty() ? part : prefix + "." + part;
        add(prefix);
      }
    }
    for (const char* k : {"gemm.points", "memory.points", "collectives", "collectives.points"}) add(k);
    return out;
  }();
  return keys;
}

// ---- reading ---------------------------------------------------------------------------------------

const yaml::Record& walk(const yaml::Record& root, const std::vector<std::string>& parts) {
  const yaml::Record* r = &root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) r = &r->section(parts[i]);
  return *r;
}

void check_source(const yaml::Node& where, const std::string& text) {
  if (!is_source_text(text)) {
    where.fail(fmt::format("'{}' does not say where it comes from: start it with public:, trace:, cupti:, log: or assumed:", text));
  }
}

std::string point_source(const yaml::Record& r) {
  const std::string& s = r.string("source");
  if (!is_source_text(s)) {
    r.fail("source", fmt::format("'{}' does not say where it comes from: start it with public:, trace:, cupti:, log: or assumed:", s));
  }
  return s;
}

Precision precision_of(const yaml::Record& r, std::string_view key) { return *precision_from_name(r.string(key)); }

Fabric fabric_of_name(std::string_view name) {
  for (std::size_t i = 0; i < 3; ++i) {
    if (kFabricNames[i] == name) return kAllFabrics[i];
  }
  return Fabric::nvlink;
}

// ---- writing ---------------------------------------------------------------------------------------

std::string yaml_quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

/// A duration in microseconds with up to 15 significant digits: "5.7 us", "10 us". It reads back
/// within one or two units in the last place (the unit scale is a multiplication).
std::string duration_text(double seconds) {
  if (seconds == 0.0) return "0 us";
  return fmt::format("{} us", format_number(seconds / 1e-6, 15));
}

/// Bytes as an exact binary multiple where there is one ("16 GiB"), else plain bytes.
std::string exact_bytes(double bytes) {
  for (const auto& [unit, scale] : {std::pair<const char*, double>{"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"KiB", 1024.0}}) {
    const double q = bytes / scale;
    if (q >= 1 && q == std::floor(q) && parse_quantity(fmt::format("{} {}", q, unit), Dimension::bytes) == bytes) {
      return fmt::format("{} {}", q, unit);
    }
  }
  return fmt::format("{} B", bytes);
}

std::string number_text(NumberUnit unit, double v) {
  switch (unit) {
    case NumberUnit::seconds: return duration_text(v);
    case NumberUnit::boolean: return v != 0.0 ? "true" : "false";
    case NumberUnit::integer: return fmt::format("{}", static_cast<std::int64_t>(v));
    case NumberUnit::fraction:
    case NumberUnit::number: return fmt::format("{}", v);
  }
  return {};
}

}  // namespace

const yaml::Schema kProfileSchema{"profile", "A calibration profile: what a GPU and its links deliver, with the source of every figure.", kProfileFields};

std::string_view collective_kind_name(CollectiveKind k) { return kCollectiveNames[static_cast<std::size_t>(k)]; }

std::optional<CollectiveKind> collective_kind_from_name(std::string_view name) {
  for (auto k : kAllCollectiveKinds) {
    if (collective_kind_name(k) == name) return k;
  }
  return std::nullopt;
}

double bus_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all: return (n - 1) / n;
    case CollectiveKind::send_recv:
    case CollectiveKind::broadcast:
    case CollectiveKind::reduce: return 1.0;
  }
  return 1.0;
}

double bus_bandwidth(CollectiveKind kind, int ranks, double bytes, Seconds time) {
  return bytes / time.value() * bus_factor(kind, ranks);
}

std::string_view source_kind(std::string_view text) {
  for (std::string_view kind : {"public", "trace", "cupti", "log", "assumed"}) {
    if (text.substr(0, kind.size()) == kind && (text.size() == kind.size() || text[kind.size()] == ':')) return kind;
  }
  return {};
}

bool is_source_text(std::string_view text) { return !source_kind(text).empty(); }

namespace {

// The measured points a profile carries beside its figures (gemm, memory, collectives).
void read_points(const yaml::Record& r, Profile& p) {
  const auto& gemm = r.section("gemm");
  if (gemm.has("points")) {
    for (const auto& g : gemm.sections("points")) {
      p.gemm_points.push_back(GemmPoint{precision_of(g, "precision"), g.integer("batch"), g.integer("m"), g.integer("n"), g.integer("k"),
                                        g.duration("time"), point_source(g), g.has("clock") && g.string("clock") == "burst"});
    }
  }
  const auto& memory = r.section("memory");
  if (memory.has("points")) {
    for (const auto& m : memory.sections("points")) {
      p.memory_points.push_back(MemoryPoint{m.string("kind"), m.bytes("bytes").value(), m.duration("time"), point_source(m)});
    }
  }
  if (r.has("collectives") && r.section("collectives").has("points")) {
    for (const auto& c : r.section("collectives").sections("points")) {
      p.collective_points.push_back(CollectivePoint{*collective_kind_from_name(c.string("collective")), fabric_of_name(c.string("fabric")),
                                                    static_cast<int>(c.integer("ranks")), c.bytes("bytes").value(), c.duration("time"),
                                                    c.has("algorithm") ? c.string("algorithm") : std::string(),
                                                    c.has("protocol") ? c.string("protocol") : std::string(), point_source(c)});
    }
  }
}

// `sources:`, a mapping of key path to source text: every path a profile key, every text saying
// where its figure comes from.
void read_sources(const yaml::Record& r, Profile& p) {
  if (!r.has("sources")) return;
  const yaml::Node& node = r.raw("sources");
  if (!node.raw().IsMap()) node.fail("expected a mapping of key path to source text");
  const auto& keys = source_keys();
  for (auto it = node.raw().begin(); it != node.raw().end(); ++it) {
    const yaml::Node key = node.child(it->first, it->first.IsScalar() ? it->first.as<std::string>() : std::string());
    if (!it->first.IsScalar()) key.fail("keys must be key paths such as gemm.efficiency.bf16");
    const std::string path = it->first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), path) == keys.end()) {
      key.fail(fmt::format("'{}' is no key of a profile{}", path, did_you_mean(path, keys)));
    }
    if (p.sources.count(path)) key.fail("duplicate key");
    const yaml::Node value = node.child(it->second, path);
    if (!it->second.IsScalar()) value.fail("expected the source as text");
    const std::string text = it->second.as<std::string>();
    check_source(value, text);
    p.sources.emplace(path, text);
  }
}

}  // namespace

Profile parse_profile(const yaml::Record& r) {
  Profile p;
  p.name = r.string("name");
  p.source = r.string("source");
  if (!is_source_text(p.source)) {
    r.fail("source", fmt::format("'{}' does not say where it comes from: start it with public:, trace:, cupti:, log: or assumed:", p.source));
  }
  if (r.has("gpu")) p.gpu = r.string("gpu");
  if (r.has("hardware")) p.hardware = r.string("hardware");
  p.what_if = r.boolean("what_if");
  for (const auto& a : accessors()) {
    const auto parts = split_path(a.path);
    const auto& section = walk(r, parts);
    const std::string& key = parts.back();
    switch (a.unit) {
      case NumberUnit::seconds: a.set(p, section.duration(key).value()); break;
      case NumberUnit::boolean: a.set(p, section.boolean(key) ? 1.0 : 0.0); break;
      case NumberUnit::integer: a.set(p, static_cast<double>(section.integer(key))); break;
      case NumberUnit::fraction:
      case NumberUnit::number: a.set(p, section.number(key)); break;
    }
  }
  read_points(r, p);
  read_sources(r, p);
  return p;
}

Profile load_profile(const std::filesystem::path& file) {
  const yaml::Node root = yaml::load_file(file);
  return parse_profile(yaml::Record(root, kProfileSchema));
}

std::vector<ProfileNumber> profile_numbers(const Profile& p) {
  std::vector<ProfileNumber> out;
  for (const auto& a : accessors()) out.push_back({a.path, a.unit, a.get(p)});
  return out;
}

std::string format_profile_number(NumberUnit unit, double v) {
  switch (unit) {
    case NumberUnit::seconds: return format_duration(Seconds(v));
    case NumberUnit::boolean: return v != 0.0 ? "true" : "false";
    case NumberUnit::integer: return fmt::format("{}", static_cast<std::int64_t>(v));
    case NumberUnit::fraction:
    case NumberUnit::number: return format_number(v, 4);
  }
  return {};
}

std::string source_of(const Profile& p, std::string_view path) {
  std::string key(path);
  while (true) {
    if (auto it = p.sources.find(key); it != p.sources.end()) return it->second;
    const auto dot = key.rfind('.');
    if (dot == std::string::npos) return {};
    key.resize(dot);
  }
}

std::vector<std::string> unsourced_numbers(const Profile& p) {
  std::vector<std::string> out;
  for (const auto& a : accessors()) {
    if (source_of(p, a.path).empty()) out.push_back(a.path);
  }
  return out;
}

std::vector<NumberChange> diff_numbers(const Profile& a, const Profile& b, double relative_tolerance) {
  std::vector<NumberChange> out;
  for (const auto& acc : accessors()) {
    const double x = acc.get(a), y = acc.get(b);
    if (std::fabs(x - y) > relative_tolerance * std::max(std::fabs(x), std::fabs(y))) out.push_back({acc.path, acc.unit, x, y});
  }
  return out;
}

std::string profile_yaml(const Profile& p) {
  std::string out = "# parasim calibration profile (parasim calibrate show <file> prints it as a table).\n";
  out += fmt::format("name: {}\nsource: {}\n", yaml_quoted(p.name), yaml_quoted(p.source));
  if (!p.gpu.empty()) out += fmt::format("gpu: {}\n", yaml_quoted(p.gpu));
  if (!p.hardware.empty()) out += fmt::format("hardware: {}\n", yaml_quoted(p.hardware));
  out += fmt::format("what_if: {}\n", p.what_if ? "true" : "false");
  // Nested sections from the key paths: open each section the first time a path enters it.
  std::vector<std::string> open;
  auto emit_points = [&](const std::string& section) {
    if (section == "gemm" && !p.gemm_points.empty()) {
      out += "  points:\n";
      for (const auto& g : p.gemm_points) {
        out += fmt::format("    - {{precision: {}, batch: {}, m: {}, n: {}, k: {}, time: {}, source: {}{}}}\n", precision_name(g.precision), g.batch,
                           g.m, g.n, g.k, duration_text(g.time.value()), yaml_quoted(g.source), g.burst ? ", clock: burst" : "");
      }
    }
    if (section == "memory" && !p.memory_points.empty()) {
      out += "  points:\n";
      for (const auto& m : p.memory_points) {
        out += fmt::format("    - {{kind: {}, bytes: {}, time: {}, source: {}}}\n", m.kind, exact_bytes(m.bytes), duration_text(m.time.value()),
                           yaml_quoted(m.source));
      }
    }
  };
  for (const auto& a : accessors()) {
    const auto parts = split_path(a.path);
    std::size_t common = 0;
    while (common < open.size() && common + 1 < parts.size() && open[common] == parts[common]) ++common;
    if (common == 0 && !open.empty()) emit_points(open.front());
    open.resize(common);
    for (std::size_t i = common; i + 1 < parts.size(); ++i) {
      out += fmt::format("{}{}:\n", std::string(2 * i, ' '), parts[i]);
      open.push_back(parts[i]);
    }
    out += fmt::format("{}{}: {}\n", std::string(2 * (parts.size() - 1), ' '), parts.back(), number_text(a.unit, a.get(p)));
  }
  if (!open.empty()) emit_points(open.front());
  if (!p.collective_points.empty()) {
    out += "collectives:\n  points:\n";
    for (const auto& c : p.collective_points) {
      out += fmt::format("    - {{collective: {}, fabric: {}, ranks: {}, bytes: {}, time: {}", collective_kind_name(c.collective),
                         fabric_name(c.fabric), c.ranks, exact_bytes(c.bytes), duration_text(c.time.value()));
      if (!c.algorithm.empty()) out += fmt::format(", algorithm: {}", yaml_quoted(c.algorithm));
      if (!c.protocol.empty()) out += fmt::format(", protocol: {}", yaml_quoted(c.protocol));
      out += fmt::format(", source: {}}}\n", yaml_quoted(c.source));
    }
  }
  if (!p.sources.empty()) {
    out += "sources:\n";
    // In the order of the keys in the file, then anything else alphabetically.
    std::vector<std::string> written;
    for (const auto& key : source_keys()) {
      if (auto it = p.sources.find(key); it != p.sources.end()) {
        out += fmt::format("  {}: {}\n", key, yaml_quoted(it->second));
        written.push_back(key);
      }
    }
    for (const auto& [key, text] : p.sources) {
      if (std::find(written.begin(), written.end(), key) == written.end()) out += fmt::format("  {}: {}\n", yaml_quoted(key), yaml_quoted(text));
    }
  }
  return out;
}

void save_profile(const Profile& p, const std::filesystem::path& file) {
  std::ofstream out(file, std::ios::binary);
  if (!out) throw InputError({file.string(), 0, 0}, {}, "cannot write the profile file");
  out << profile_yaml(p);
  out.close();
  if (!out) throw InputError({file.string(), 0, 0}, {}, "cannot write the profile file");
}

}  // namespace parasim::calibrate
