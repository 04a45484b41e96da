#pragma once
// A calibration profile as a YAML file: every figure of calibrate::Profile under a stable key path,
// measured points (GEMMs, collectives, memory transfers) each with its source, and a `sources:`
// mapping that says where every other number comes from ("public: …", "trace: …", "cupti: …",
// "assumed: …"; an entry for a section covers its keys). Read through the schema tables like every
// other YAML section (unknown keys, wrong types and out-of-range values fail with file:line:col);
// written deterministically; load(save(p)) gives p back (durations to a unit or two in the last place).
//
//   name: a100                     gemm: {efficiency: {fp32: …, bf16: …}, reference: {m, n, k}, tile, k_half, points: […]}
//   source: "public: …"            memory: {efficiency, points: […]}
//   gpu: NVIDIA A100-SXM4-80GB     attention: {forward_efficiency, backward_efficiency, causal_work_fraction}
//   hardware: A100-SXM4-80GB       launch: {kernel: 4 us, collective: 10 us}
//   what_if: false                 fabrics: {nvlink|pcie|network: {efficiency, step_latency, ll_efficiency, ll_step_latency}}
//                                  nvls: {enabled, efficiency, latency}
//                                  overlap: {compute_slowdown: {gemm|attention|memory_bound: {nvlink, pcie, network}},
//                                            comm_slowdown: {nvlink, pcie, network}}
//                                  collectives: {points: […]}
//                                  sources: {gemm.efficiency.bf16: "public: …", …}
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibrate/profile.hpp"
#include "core/schema.hpp"

namespace parasim::calibrate {

extern const yaml::Schema kProfileSchema;

/// Loads a profile file. Throws InputError naming file, line, column and key path.
Profile load_profile(const std::filesystem::path& file);
/// Reads a profile from a record read against kProfileSchema (a file's root or an inlined section).
Profile parse_profile(const yaml::Record& record);
/// The profile as YAML text: every number, every point, every source, in a fixed order.
std::string profile_yaml(const Profile& profile);
/// Writes profile_yaml(profile) to a file. Throws InputError when the file cannot be written.
void save_profile(const Profile& profile, const std::filesystem::path& file);

/// How a number of a profile reads.
enum class NumberUnit { fraction, number, integer, seconds, boolean };

/// One scalar of a profile, by its key path in the YAML.
struct ProfileNumber {
  std::string path;
  NumberUnit unit = NumberUnit::number;
  double value = 0;
};

/// Every scalar figure of a profile (not the identity, points or sources), in file order.
std::vector<ProfileNumber> profile_numbers(const Profile& profile);
/// "0.869", "5.7 us", "true", "128": how `show` and `diff` print a number.
std::string format_profile_number(NumberUnit unit, double value);

/// The source text covering a key path: its own entry in `sources`, or its nearest section's; empty if none.
std::string source_of(const Profile& profile, std::string_view path);
/// Key paths of numbers that no source covers.
std::vector<std::string> unsourced_numbers(const Profile& profile);
/// True when a source text starts with one of the source kinds: public, trace, cupti, assumed.
bool is_source_text(std::string_view text);
/// The source kind of a text ("public", "trace", "cupti", "assumed"), or empty.
std::string_view source_kind(std::string_view text);

/// A number that differs between two profiles.
struct NumberChange {
  std::string path;
  NumberUnit unit = NumberUnit::number;
  double before = 0, after = 0;
};
/// The numbers of `b` that differ from `a` by more than `relative_tolerance` of the larger magnitude.
std::vector<NumberChange> diff_numbers(const Profile& a, const Profile& b, double relative_tolerance = 0);

std::optional<CollectiveKind> collective_kind_from_name(std::string_view name);
/// Bus bandwidth of a collective as nccl-tests reports it: algorithm bandwidth bytes / time times
/// 2(n−1)/n for all-reduce, (n−1)/n for all-gather, reduce-scatter and all-to-all, 1 otherwise.
double bus_bandwidth(CollectiveKind kind, int ranks, double bytes, Seconds time);
double bus_factor(CollectiveKind kind, int ranks);

}  // namespace parasim::calibrate
