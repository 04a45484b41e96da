#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/suggest.hpp"

using namespace parasim;

TEST_CASE("edit distance counts insertions, deletions and substitutions") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("bandwidth", "bandwidth") == 0);
  CHECK(edit_distance("bandwith", "bandwidth") == 1);
}

TEST_CASE("closest match suggests plausible typos only") {
  const std::vector<std::string> keys{"count", "bandwidth", "latency", "affinity"};
  CHECK(closest_match("bandwith", keys) == "bandwidth");
  CHECK(closest_match("Latency", keys) == "latency");
  CHECK(closest_match("afinity", keys) == "affinity");
  CHECK_FALSE(closest_match("gpus", keys).has_value());
  CHECK(did_you_mean("cont", keys) == " (did you mean 'count'?)");
  CHECK(did_you_mean("zzzzzz", keys).empty());
  CHECK(join_names(keys) == "count, bandwidth, latency, affinity");
}
