#include <doctest/doctest.h>

#include <stdexcept>

#include "planner/megatron_launch.hpp"

using namespace parasim::planner;

TEST_CASE("site arguments: flags parasim knows, one value each, in the order given") {
  const auto g = site_arguments("--data-path /data/text_document --transformer-impl local --no-persist-layer-norm");
  CHECK(g.name == "SITE_ARGS");
  REQUIRE(g.arguments.size() == 3);
  CHECK(g.arguments[0].flag == "--data-path");
  CHECK(g.arguments[0].value == "/data/text_document");
  CHECK(g.arguments[1].value == "local");
  CHECK(g.arguments[2].flag == "--no-persist-layer-norm");
  CHECK(g.arguments[2].value.empty());
  CHECK(site_arguments("").arguments.empty());
}

TEST_CASE("site arguments refuse an unknown flag, a stray value and a switch given a value") {
  CHECK_THROWS_AS(site_arguments("--tensor-model-paralel-size 2"), std::invalid_argument);
  CHECK_THROWS_AS(site_arguments("local"), std::invalid_argument);
  CHECK_THROWS_AS(site_arguments("--data-path a b"), std::invalid_argument);
  CHECK_THROWS_AS(site_arguments("--no-persist-layer-norm yes"), std::invalid_argument);
}

TEST_CASE("site arguments never change the plan or the model that was priced") {
  CHECK_THROWS_WITH(site_arguments("--micro-batch-size 2"), doctest::Contains("is the plan's"));
  CHECK_THROWS_WITH(site_arguments("--tensor-model-parallel-size 2"), doctest::Contains("is the plan's"));
  CHECK_THROWS_WITH(site_arguments("--num-layers 2"), doctest::Contains("is the model's"));
}

namespace {
MegatronLaunch mock_data_launch() {
  MegatronLaunch l;
  l.groups = {{"DATA_ARGS", {{"--mock-data", ""}, {"--tokenizer-type", "NullTokenizer"}, {"--vocab-size", "32000"}}},
              {"TRAINING_ARGS", {{"--train-iters", "20"}, {"--lr", "3e-4"}}}};
  return l;
}
const MegatronArgument* find(const MegatronLaunch& l, const std::string& flag) {
  for (const auto& g : l.groups) {
    for (const auto& a : g.arguments) {
      if (a.flag == flag) return &a;
    }
  }
  return nullptr;
}
}  // namespace

TEST_CASE("a site's argument the launch already writes takes the site's value in place, once") {
  const auto l = with_site_arguments(mock_data_launch(), site_arguments("--lr 1e-4 --transformer-impl local"));
  REQUIRE(find(l, "--lr"));
  CHECK(find(l, "--lr")->value == "1e-4");
  REQUIRE(l.groups.size() == 3);
  CHECK(l.groups[2].name == "SITE_ARGS");
  REQUIRE(l.groups[2].arguments.size() == 1);
  CHECK(l.groups[2].arguments[0].flag == "--transformer-impl");
  CHECK(find(l, "--mock-data"));
}

TEST_CASE("a site's data source replaces the mock data: Megatron-LM takes one source") {
  const auto l = with_site_arguments(mock_data_launch(), site_arguments("--data-path /data/text_document --tokenizer-type HuggingFaceTokenizer"));
  CHECK_FALSE(find(l, "--mock-data"));
  CHECK(find(l, "--tokenizer-type")->value == "HuggingFaceTokenizer");
  CHECK(find(l, "--data-path")->value == "/data/text_document");
  for (const char* source : {"--data-args-path", "--per-split-data-args-path", "--train-data-path"}) {
    CHECK_FALSE(find(with_site_arguments(mock_data_launch(), site_arguments(std::string(source) + " x")), "--mock-data"));
  }
  CHECK(with_site_arguments(mock_data_launch(), site_arguments("")).groups.size() == 2);
}
