#include <doctest/doctest.h>

#include <filesystem>

#include "core/error.hpp"
#include "planner/hardware_knobs.hpp"
#include "planner/whatif.hpp"
#include "planner/whatif_study.hpp"
#include "sim/scenario.hpp"

using namespace parasim;
using namespace parasim::planner;

TEST_CASE("--vary splits values at commas outside brackets and quotes") {
  const auto a = parse_vary("cluster.node.nics.bandwidth=200Gb/s,400 Gb/s,800Gb/s");
  CHECK(a.key == "cluster.node.nics.bandwidth");
  CHECK(a.values == std::vector<std::string>{"200Gb/s", "400 Gb/s", "800Gb/s"});
  const auto b = parse_vary("cluster.node.nics.affinity=[0,0,1,1],[0,1,2,3]");
  CHECK(b.values == std::vector<std::string>{"[0,0,1,1]", "[0,1,2,3]"});
  const auto c = parse_vary("name='a,b',{x: 1, y: 2}");
  CHECK(c.values == std::vector<std::string>{"'a,b'", "{x: 1, y: 2}"});
  CHECK_THROWS_AS(parse_vary("no-equals"), InputError);
  CHECK_THROWS_AS(parse_vary("=1,2"), InputError);
  CHECK_THROWS_AS(parse_vary("a=1,,2"), InputError);
  CHECK_THROWS_AS(parse_vary("a="), InputError);
}

TEST_CASE("the grid is every combination, the first axis changing slowest") {
  const std::vector<VaryAxis> axes{{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}};
  const auto grid = variant_grid(axes);
  REQUIRE(grid.size() == 6);
  CHECK(grid[0].values == std::vector<std::string>{"1", "x"});
  CHECK(grid[1].values == std::vector<std::string>{"1", "y"});
  CHECK(grid[3].values == std::vector<std::string>{"2", "x"});
  CHECK(grid[5].values == std::vector<std::string>{"2", "z"});
  CHECK(value_label("../nodes/dgx-b200.yaml") == "dgx-b200");
  CHECK(value_label("400 Gb/s") == "400 Gb/s");
}

TEST_CASE("every bundled study loads, and its variants load from any working directory") {
  int studies = 0;
  for (const auto& entry : std::filesystem::directory_iterator("scenarios/whatif")) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path().string());
    REQUIRE(is_study_file(entry.path()));
    const auto study = load_study(entry.path());
    CHECK_FALSE(study.axes.empty());
    // Relative file values resolve against the study's folder, so the loads below do not depend on
    // the working directory (the tests run from the repository root).
    for (const auto& v : variant_grid(study.axes)) {
      CHECK_NOTHROW(sim::load_scenario(study.scenario, study.overrides(v), study.fixed_plan ? sim::PlanCheck::strict : sim::PlanCheck::drop_unsuitable));
    }
    ++studies;
  }
  CHECK(studies >= 4);
  CHECK_FALSE(is_study_file("scenarios/jobs/llama2-7b-lab.yaml"));
}

TEST_CASE("a plan that does not suit a variant is dropped when re-planning, kept as an error otherwise") {
  const std::vector<std::string> one_node{"cluster.nodes=1"};
  CHECK_THROWS_AS(sim::load_scenario("scenarios/jobs/llama2-7b-lab.yaml", one_node), InputError);
  const auto s = sim::load_scenario("scenarios/jobs/llama2-7b-lab.yaml", one_node, sim::PlanCheck::drop_unsuitable);
  CHECK_FALSE(s.plan);
  REQUIRE(s.dropped_plan);
  CHECK(s.dropped_plan->find("plan.dp") != std::string::npos);
  CHECK(study_global_batch(s) == 32);
  // A malformed value is an error either way.
  CHECK_THROWS_AS(sim::load_scenario("scenarios/jobs/llama2-7b-lab.yaml", {"plan.tp=two"}, sim::PlanCheck::drop_unsuitable), InputError);
}

TEST_CASE("knobs scale the figures they name, and only those") {
  const auto base = sim::load_scenario("scenarios/jobs/llama2-7b-lab.yaml");
  auto s = base;
  scale_all(s, KnobKind::bandwidth, 2.0);
  CHECK(s.cluster.node.nics.bandwidth.value() == doctest::Approx(2 * base.cluster.node.nics.bandwidth.value()).scale(0));
  CHECK(s.cluster.node.gpu.hbm_bandwidth.value() == doctest::Approx(2 * base.cluster.node.gpu.hbm_bandwidth.value()).scale(0));
  CHECK(s.cluster.node.gpu.nvlink->bidirectional.value() == doctest::Approx(2 * base.cluster.node.gpu.nvlink->bidirectional.value()).scale(0));
  CHECK(s.cluster.node.gpu.pcie_lanes == 2 * base.cluster.node.gpu.pcie_lanes);
  CHECK(s.cluster.node.gpu.peak == base.cluster.node.gpu.peak);
  CHECK(s.cluster.node.gpu.hbm_capacity == base.cluster.node.gpu.hbm_capacity);
  auto o = base;
  for (const auto& k : hardware_knobs()) {
    if (k.name == "overlap-slowdown") k.scale(o, 0.5);
  }
  REQUIRE(o.profile);
  const auto p0 = base.effective_profile();
  CHECK(o.profile->comm_slowdown[0] == doctest::Approx(0.5 * p0.comm_slowdown[0]).scale(0));
}

TEST_CASE("evaluating jobs in parallel gives the same outcomes as one at a time") {
  std::vector<sim::Scenario> variants;
  for (const char* bw : {"100Gb/s", "400Gb/s", "800Gb/s"}) {
    variants.push_back(sim::load_scenario("scenarios/jobs/llama2-7b-lab.yaml", {std::string("cluster.node.nics.bandwidth=") + bw}));
  }
  WhatifOptions one, three;
  one.threads = 1;
  three.threads = 3;
  const auto jobs = study_jobs(variants, false);
  const auto a = evaluate_jobs(jobs, one);
  const auto b = evaluate_jobs(jobs, three);
  CHECK(a == b);
  // Slower NICs never make the iteration faster.
  CHECK(a[0].iteration_s >= a[1].iteration_s);
  CHECK(a[1].iteration_s >= a[2].iteration_s);
}
