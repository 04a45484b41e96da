#include <doctest/doctest.h>

#include <filesystem>

#include "calibrate/profile_yaml.hpp"

using namespace parasim;
using namespace parasim::calibrate;

namespace {

// Counts the members of an aggregate: the largest N for which T{any x N} compiles.
struct AnyValue {
  template <class T>
  operator T() const;
};
template <class T, class... A>
consteval std::size_t member_count() {
  if constexpr (requires { T{A{}..., AnyValue{}}; }) {
    return member_count<T, A..., AnyValue>();
  } else {
    return sizeof...(A);
  }
}

Profile parse(const std::string& text) { return parse_profile(yaml::Record(yaml::parse_text(text, "p.yaml"), kProfileSchema)); }

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const std::string kBundled[] = {"a100-sxm4", "h100-sxm5", "h200", "b200", "rtx-4090"};

}  // namespace

TEST_CASE("every member of Profile has a place in the profile YAML") {
  // 34 members: name, source, gpu, hardware, what_if, sources, three point lists, five GEMM figures,
  // memory efficiency, seven attention figures (two FlashAttention-1's, two FlashAttention-2's), two launch costs, three fabrics, three NVLS figures and
  // the two overlap tables. A new member needs a key in calibrate/profile_yaml.cpp (accessors() and
  // the schema tables) before this count moves.
  CHECK(member_count<Profile>() == 34);
  // 5 GEMM efficiencies + 3 reference + tile + k_half + sustained clock + memory + 9 attention (two
  // FlashAttention-1's, two FlashAttention-2's) + 2 launch + 3 x 4 fabric + 3 NVLS + 9 compute
  // slowdowns + 3 comm slowdowns = 50 numbers.
  CHECK(profile_numbers(Profile{}).size() == 50);
}

TEST_CASE("each bundled profile file equals the built-in default profile of its GPU, number by number") {
  for (const auto& name : kBundled) {
    CAPTURE(name);
    const Profile file = load_profile("scenarios/profiles/" + name + ".yaml");
    REQUIRE_FALSE(file.hardware.empty());
    const Profile builtin = default_profile(file.hardware);
    CHECK(file.name == builtin.name);
    // Durations read back from "5.7 us" within a unit in the last place of 5.7e-6.
    for (const auto& change : diff_numbers(builtin, file, 1e-12)) {
      FAIL_CHECK(name << ": " << change.path << " is " << change.after << " in the file, " << change.before << " in default_profile()");
    }
    // Every number says where it comes from.
    CHECK(unsourced_numbers(file).empty());
    CHECK(is_source_text(file.source));
  }
  // The B200 profile is derived from announced figures and says so.
  CHECK(load_profile("scenarios/profiles/b200.yaml").what_if);
  CHECK_FALSE(load_profile("scenarios/profiles/h100-sxm5.yaml").what_if);
}

TEST_CASE("save then load gives the same profile: numbers, points and sources") {
  Profile p = default_profile("H100-SXM5-80GB");
  p.gpu = "NVIDIA H100 80GB HBM3";
  p.hardware = "H100-SXM5-80GB";
  p.source = "trace: rank0.json.gz";
  p.nvlink.step_latency = Seconds(1.23456789e-6);
  p.gemm_points.push_back({Precision::bf16, 2, 4096, 1024, 512, Seconds(37.5e-6), "trace: rank0.json.gz, 12 kernels"});
  p.gemm_points.push_back({Precision::fp32, 1, 100, 3, 7, Seconds(2.1e-6), "cupti: sweep"});
  p.collective_points.push_back({CollectiveKind::all_gather, Fabric::network, 16, 1073741824.0, Seconds(0.0123), "ring", "SIMPLE",
                                 "public: nccl-tests"});
  p.collective_points.push_back({CollectiveKind::send_recv, Fabric::nvlink, 2, 1000.0, Seconds(9e-6), "", "", "trace: \"quoted\" name"});
  p.memory_points.push_back({"copy", 3.0 * 1048576, Seconds(4.5e-6), "cupti: cudaMemcpyAsync D2D"});
  p.sources["gemm.efficiency.bf16"] = "trace: 212 GEMMs";
  p.sources["fabrics"] = "public: nccl-tests";
  const Profile back = parse(profile_yaml(p));
  CHECK(diff_numbers(p, back, 1e-12).empty());
  CHECK(back.name == p.name);
  CHECK(back.gpu == p.gpu);
  CHECK(back.hardware == p.hardware);
  CHECK(back.source == p.source);
  CHECK(back.sources == p.sources);
  REQUIRE(back.gemm_points.size() == 2);
  CHECK(back.gemm_points[0].batch == 2);
  CHECK(back.gemm_points[0].m == 4096);
  CHECK(back.gemm_points[0].time.value() == doctest::Approx(37.5e-6).epsilon(1e-12));
  CHECK(back.gemm_points[1].precision == Precision::fp32);
  REQUIRE(back.collective_points.size() == 2);
  CHECK(back.collective_points[0].collective == CollectiveKind::all_gather);
  CHECK(back.collective_points[0].fabric == Fabric::network);
  CHECK(back.collective_points[0].bytes == 1073741824.0);
  CHECK(back.collective_points[0].protocol == "SIMPLE");
  CHECK(back.collective_points[1].source == "trace: \"quoted\" name");
  CHECK(back.collective_points[1].algorithm.empty());
  REQUIRE(back.memory_points.size() == 1);
  CHECK(back.memory_points[0].bytes == 3.0 * 1048576);
  // Written twice, the text is the same (deterministic output).
  CHECK(profile_yaml(back) == profile_yaml(parse(profile_yaml(back))));
}

TEST_CASE("a source entry on a section covers its keys; the nearest entry wins") {
  Profile p;
  p.sources["fabrics"] = "public: nccl-tests";
  p.sources["fabrics.nvlink.efficiency"] = "trace: rank0";
  CHECK(source_of(p, "fabrics.nvlink.efficiency") == "trace: rank0");
  CHECK(source_of(p, "fabrics.pcie.step_latency") == "public: nccl-tests");
  CHECK(source_of(p, "gemm.tile").empty());
  CHECK(source_kind("cupti: sweep") == "cupti");
  CHECK(source_kind("assumed") == "assumed");
  CHECK(source_kind("publication: x").empty());
}

TEST_CASE("bad profile files fail with file, line, column and key path") {
  const std::string good = profile_yaml(default_profile("A100"));
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  // Line 9 of the saved text is gemm.efficiency.bf16 (comment, name, source, what_if, gemm:, efficiency:, fp32, tf32, bf16);
  // the 71 lines end with overlap.comm_slowdown.network, so an appended sources: entry sits on line 72.
  CHECK(error_of(replace("    bf16: 0.869", "    bf16: 1.2")) == "p.yaml:9:11: error: gemm.efficiency.bf16: 1.2 is out of range: must be between 0 and 1");
  CHECK(error_of(replace("  k_half:", "  khalf:")) ==
        "p.yaml:17:3: error: gemm.khalf: unknown key (did you mean 'k_half'?); valid keys: efficiency, reference, tile, k_half, sustained_clock, points");
  CHECK(error_of(replace("source: \"public: [MAMF] [NCCL8] [FA2]\"", "source: \"the internet\"")) ==
        "p.yaml:3:9: error: source: 'the internet' does not say where it comes from: start it with public:, trace:, cupti:, log: or assumed:");
  CHECK(error_of(good + "sources:\n  gemm.efficency.bf16: \"public: x\"\n") ==
        "p.yaml:75:3: error: sources.gemm.efficency.bf16: 'gemm.efficency.bf16' is no key of a profile (did you mean 'gemm.efficiency.bf16'?)");
  CHECK(error_of(good + "sources:\n  gemm.tile: \"a guess\"\n") ==
        "p.yaml:75:14: error: sources.gemm.tile: 'a guess' does not say where it comes from: start it with public:, trace:, cupti:, log: or assumed:");
  CHECK(error_of(replace("  tile: 128\n", "  tile: 128\n  points:\n    - {precision: bf17, m: 1, n: 1, k: 1, time: 1 us, source: \"cupti: x\"}\n")) ==
        "p.yaml:18:19: error: gemm.points.0.precision: 'bf17' is not valid (did you mean 'bf16'?); valid values: fp32, tf32, bf16, fp16, fp8");
  CHECK(error_of(replace("  kernel: 4 us", "  kernel: 4 parsecs")) ==
        "p.yaml:34:11: error: launch.kernel: unknown unit 'parsecs' for a duration; use one of: s, ms, us, µs, ns, ps");
}

TEST_CASE("load_profile names a missing file") {
  CHECK_THROWS_WITH_AS(load_profile("scenarios/profiles/nowhere.yaml"), "scenarios/profiles/nowhere.yaml: error: cannot open file: no such file",
                       InputError);
}

TEST_CASE("bus bandwidth as nccl-tests computes it") {
  // 8 ranks, 1 GiB all-reduce in 8.2039 ms: algbw 130.88 GB/s x 2·7/8 = 229.04 GB/s (the stas00 A100 row).
  CHECK(bus_bandwidth(CollectiveKind::all_reduce, 8, 1073741824.0, Seconds(8203.9e-6)) / 1e9 == doctest::Approx(229.04).epsilon(1e-3));
  CHECK(bus_factor(CollectiveKind::all_gather, 8) == doctest::Approx(7.0 / 8).scale(0));
  CHECK(bus_factor(CollectiveKind::send_recv, 2) == 1.0);
}
