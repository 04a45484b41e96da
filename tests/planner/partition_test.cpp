#include <doctest/doctest.h>

#include <algorithm>

#include "planner/partition.hpp"

using namespace parasim::planner;

TEST_CASE("uniform layers and free ends keep the even split") {
  const std::vector<double> layers(32, 1.0);
  CHECK(balanced_chunks(layers, 4, 1, 0, 0).empty());
  CHECK(balanced_chunks(layers, 4, 2, 0, 0).empty());
}

TEST_CASE("a heavy LM head moves layers off the last stage") {
  // 16 layers of 1 s on 4 stages; the head costs 3 s. Even: last stage 4 + 3 = 7 s. Best launchable
  // split: first 5, middle 5 and 5... no: first f, middle m each, last l with f + 2m + l = 16 and the
  // slowest of f, m, l + 3 smallest: f = 5, m = 5, l = 1 gives max(5, 5, 4) = 5 s.
  const std::vector<double> layers(16, 1.0);
  const auto chunks = balanced_chunks(layers, 4, 1, 0, 3);
  REQUIRE(chunks.size() == 4);
  const auto t = stage_times(chunks, layers, 0, 3);
  CHECK(*std::max_element(t.begin(), t.end()) == doctest::Approx(5.0).scale(0));
  CHECK(chunks.back() < 4);
  int sum = 0;
  for (int n : chunks) sum += n;
  CHECK(sum == 16);
}

TEST_CASE("layers that do not divide the stages are spread, every chunk getting one") {
  const std::vector<double> layers(30, 1.0);
  const auto chunks = balanced_chunks(layers, 4, 2, 0.5, 0.5);
  REQUIRE(chunks.size() == 8);
  int sum = 0;
  for (int n : chunks) {
    CHECK(n >= 1);
    sum += n;
  }
  CHECK(sum == 30);
  // Stage s holds chunks s and s + 4.
  std::vector<int> stage(4, 0);
  for (int c = 0; c < 8; ++c) stage[static_cast<std::size_t>(c % 4)] += chunks[static_cast<std::size_t>(c)];
  const auto t = stage_times(stage, layers, 0.5, 0.5);
  CHECK(*std::max_element(t.begin(), t.end()) <= 8.5);
}

TEST_CASE("too few layers for the chunks: no split") { CHECK(balanced_chunks(std::vector<double>(6, 1.0), 4, 2, 0, 0).empty()); }

TEST_CASE("the chunk cache gives balanced_chunks' split, built once per distinct argument set") {
  ChunkCache cache;
  std::vector<double> layers(30, 1.0);
  layers[3] = 2.5;  // an uneven layer moves the split
  const auto& split = cache.get(layers, 4, 2, 3.0, 0.5);
  CHECK(split == balanced_chunks(layers, 4, 2, 3.0, 0.5));
  CHECK(&cache.get(layers, 4, 2, 3.0, 0.5) == &split);  // the same entry, not rebuilt
  CHECK(cache.get(layers, 4, 2, 0.5, 3.0) == balanced_chunks(layers, 4, 2, 0.5, 3.0));
  layers[3] = 1.0;
  CHECK(cache.get(layers, 4, 2, 3.0, 0.5) == balanced_chunks(layers, 4, 2, 3.0, 0.5));
  CHECK(split != balanced_chunks(layers, 4, 2, 0.5, 3.0));  // the arguments do change the split
}
