#include <doctest/doctest.h>

#include "core/schema.hpp"

using namespace parasim;
using namespace parasim::yaml;

namespace {

constexpr std::string_view kKinds[] = {"nvswitch", "pcie"};
constexpr Field kInnerFields[] = {
    {.name = "bandwidth", .type = FieldType::bandwidth, .description = "per direction", .required = true, .min = 0, .min_exclusive = true},
    {.name = "latency", .type = FieldType::duration, .description = "one way", .default_text = "2 us", .min = 0},
};
constexpr Schema kInner{"link", "a link", kInnerFields};
constexpr Field kFields[] = {
    {.name = "name", .type = FieldType::string, .description = "name", .required = true},
    {.name = "gpus", .type = FieldType::integer, .description = "GPUs", .required = true, .min = 1},
    {.name = "kind", .type = FieldType::choice, .description = "fabric", .default_text = "nvswitch", .choices = kKinds},
    {.name = "ratio", .type = FieldType::number, .description = "ratio", .default_text = "1", .min = 1},
    {.name = "fast", .type = FieldType::boolean, .description = "flag", .default_text = "false"},
    {.name = "memory", .type = FieldType::bytes, .description = "memory", .min = 0, .min_exclusive = true},
    {.name = "affinity", .type = FieldType::integer_list, .description = "list", .min = 0},
    {.name = "link", .type = FieldType::section, .description = "the link", .schema = &kInner},
};
constexpr Schema kTest{"test", "a test section", kFields};

Record read(const std::string& text, Overrides* o = nullptr) { return Record(parse_text(text, "t.yaml", o), kTest); }

std::string error_of(const std::string& text, Overrides* o = nullptr) {
  try {
    read(text, o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a record reads typed values and fills defaults") {
  const Record r = read("name: n\ngpus: 8\nmemory: 80 GiB\naffinity: [0, 0, 1]\nlink: {bandwidth: 200 Gb/s}\n");
  CHECK(r.string("name") == "n");
  CHECK(r.integer("gpus") == 8);
  CHECK(r.string("kind") == "nvswitch");  // default
  CHECK(r.number("ratio") == 1.0);
  CHECK_FALSE(r.boolean("fast"));
  CHECK(r.bytes("memory").value() == doctest::Approx(80.0 * (1u << 30)).scale(0));
  CHECK(r.integers("affinity") == std::vector<std::int64_t>{0, 0, 1});
  CHECK(r.section("link").bandwidth("bandwidth").value() == doctest::Approx(25e9).scale(0));
  CHECK(r.section("link").duration("latency").value() == doctest::Approx(2e-6).scale(0));
}

TEST_CASE("every kind of bad value fails with file, line, column and key path") {
  CHECK(error_of("name: n\ngpus: 8\ngpsu: 2\n") ==
        "t.yaml:3:1: error: gpsu: unknown key; valid keys: name, gpus, kind, ratio, fast, memory, affinity, link");
  CHECK(error_of("name: n\ngpus: 8\nlink: {bandwith: 1 GB/s}\n") ==
        "t.yaml:3:8: error: link.bandwith: unknown key (did you mean 'bandwidth'?); valid keys: bandwidth, latency");
  CHECK(error_of("name: n\n") == "t.yaml:1:1: error: missing required key 'gpus' (GPUs)");
  CHECK(error_of("name: n\ngpus: eight\n") == "t.yaml:2:7: error: gpus: 'eight' is not an integer");
  CHECK(error_of("name: n\ngpus: 0\n") == "t.yaml:2:7: error: gpus: 0 is out of range: must be >= 1");
  // Integers are counts kept in 32 bits: past that they are out of range, never wrapped, even past
  // 64 bits.
  CHECK(error_of("name: n\ngpus: 4294967297\n") == "t.yaml:2:7: error: gpus: 4294967297 is out of range: must be <= 2147483647");
  CHECK(error_of("name: n\ngpus: 99999999999999999999\n") == "t.yaml:2:7: error: gpus: 99999999999999999999 is out of range: must be <= 2147483647");
  CHECK(error_of("name: n\ngpus: 2147483647\n") == "no error");
  CHECK(error_of("name: n\ngpus: 8\nkind: nvswich\n") ==
        "t.yaml:3:7: error: kind: 'nvswich' is not valid (did you mean 'nvswitch'?); valid values: nvswitch, pcie");
  CHECK(error_of("name: n\ngpus: 8\nlink:\n  bandwidth: -200 Gb/s\n") ==
        "t.yaml:4:14: error: link.bandwidth: -25 GB/s is out of range: must be > 0 B/s");
  CHECK(error_of("name: n\ngpus: 8\nlink:\n  bandwidth: 0 GB/s\n") ==
        "t.yaml:4:14: error: link.bandwidth: 0 B/s is out of range: must be > 0 B/s");
  CHECK(error_of("name: n\ngpus: 8\nmemory: 80\n") == "t.yaml:3:9: error: memory: '80' has no unit (write e.g. '80 GiB')");
  CHECK(error_of("name: n\ngpus: 8\nfast: maybe\n") == "t.yaml:3:7: error: fast: 'maybe' is not a boolean (true or false)");
  CHECK(error_of("name: n\ngpus: 8\naffinity: [0, x]\n") == "t.yaml:3:15: error: affinity.1: 'x' is not an integer");
  CHECK(error_of("name: n\ngpus: 8\ngpus: 4\n") == "t.yaml:3:1: error: gpus: duplicate key");
  CHECK(error_of("name: n\ngpus: [8]\n") == "t.yaml:2:7: error: gpus: expected an integer, found a list");
  CHECK(error_of("- a\n- b\n") == "t.yaml:1:1: error: expected a mapping of test keys, found a list");
  CHECK(error_of("name: n\ngpus: 8\nlink: {bandwidth: 1 GB/s\n") == "t.yaml:4:1: error: malformed YAML: end of map flow not found");
}

TEST_CASE("--set overrides reach any key by its path and unknown paths fail") {
  Overrides o;
  o.add("gpus=4");
  o.add("link.bandwidth=400Gb/s");
  const Record r = read("name: n\ngpus: 8\nlink: {bandwidth: 200 Gb/s}\n", &o);
  CHECK(r.integer("gpus") == 4);
  CHECK(r.section("link").bandwidth("bandwidth").value() == doctest::Approx(50e9).scale(0));
  CHECK_NOTHROW(o.check_all_used());

  Overrides bad;
  bad.add("link.bandwith=1GB/s");
  (void)read("name: n\ngpus: 8\nlink: {bandwidth: 200 Gb/s}\n", &bad);
  CHECK_THROWS_WITH_AS(bad.check_all_used(), "--set: error: link.bandwith: no such key in this scenario (did you mean 'link.bandwidth'?)",
                       InputError);

  Overrides wrong;
  wrong.add("gpus=many");
  CHECK(error_of("name: n\ngpus: 8\n", &wrong) == "--set: error: gpus: 'many' is not an integer");
  Overrides empty;
  empty.add("gpus=");
  CHECK(error_of("name: n\ngpus: 8\n", &empty) == "--set: error: gpus: expected an integer, found nothing");
  CHECK_THROWS_AS(Overrides().add("novalue"), InputError);
}

TEST_CASE("the schema documents itself") {
  const std::string md = schema_markdown(kTest);
  CHECK(md.find("| `gpus` | integer | required | >= 1 | GPUs |") != std::string::npos);
  CHECK(md.find("| `kind` | one of: nvswitch, pcie | `nvswitch` |") != std::string::npos);
  CHECK(md.find("### `link`") != std::string::npos);
}
