#include <doctest/doctest.h>

#include "core/units.hpp"

using namespace parasim;

TEST_CASE("human units parse to base units") {
  // Decimal prefixes for rates: 600 GB/s = 600e9 bytes/s.
  CHECK(parse_bandwidth("600 GB/s").value() == doctest::Approx(600e9).scale(0));
  // Bits: 200 Gb/s = 200e9 / 8 = 25e9 bytes/s (a 200 Gb/s HDR port moves 25 GB/s each way).
  CHECK(parse_bandwidth("200 Gb/s").value() == doctest::Approx(25e9).scale(0));
  CHECK(parse_bandwidth("400Gbps").value() == doctest::Approx(50e9).scale(0));
  CHECK(parse_bandwidth("3.35 TB/s").value() == doctest::Approx(3.35e12).scale(0));
  // Binary prefixes for capacities: 80 GiB = 80 * 2^30 bytes.
  CHECK(parse_bytes("80 GiB").value() == doctest::Approx(80.0 * 1073741824.0).scale(0));
  CHECK(parse_bytes("40 GB").value() == doctest::Approx(40e9).scale(0));
  CHECK(parse_flop_rate("989 TFLOPS").value() == doctest::Approx(989e12).scale(0));
  CHECK(parse_flop_rate("2.25 PFLOPS").value() == doctest::Approx(2.25e15).scale(0));
  CHECK(parse_flop_rate("312 TFLOP/s").value() == doctest::Approx(312e12).scale(0));
  CHECK(parse_duration("2 us").value() == doctest::Approx(2e-6).scale(0));
  CHECK(parse_duration("2 \xC2\xB5s").value() == doctest::Approx(2e-6).scale(0));
  CHECK(parse_duration("1.5ms").value() == doctest::Approx(1.5e-3).scale(0));
  CHECK(parse_duration("  700 ns ").value() == doctest::Approx(700e-9).scale(0));
  CHECK(parse_bandwidth("-5 GB/s").value() == doctest::Approx(-5e9).scale(0));  // the schema, not the parser, rejects signs
}

TEST_CASE("bad quantities explain what is wrong") {
  CHECK_THROWS_WITH_AS(parse_bandwidth("600"), "'600' has no unit (write e.g. '600 GB/s')", UnitError);
  CHECK_THROWS_WITH_AS(parse_bandwidth("600 GBs"),
                       doctest::Contains("unknown unit 'GBs' for a bandwidth; use one of: B/s"), UnitError);
  CHECK_THROWS_WITH_AS(parse_bytes("eighty GiB"), "'eighty GiB' is not a size (write e.g. '80 GiB')", UnitError);
  CHECK_THROWS_AS(parse_bytes("80 GB/s"), UnitError);  // a bandwidth is not a size
  CHECK_THROWS_AS(parse_duration(""), UnitError);
}

TEST_CASE("quantities print with up to four significant digits") {
  CHECK(format_bandwidth(BytesPerSecond(450e9)) == "450 GB/s");
  CHECK(format_bandwidth(BytesPerSecond(25.6e12)) == "25.6 TB/s");
  CHECK(format_bandwidth(BytesPerSecond(31.5076923e9)) == "31.51 GB/s");
  CHECK(format_bytes(Bytes(80.0 * 1073741824.0)) == "80 GiB");
  CHECK(format_bytes(Bytes(512)) == "512 B");
  CHECK(format_flop_rate(FlopsPerSecond(989.4e12)) == "989.4 TFLOPS");
  CHECK(format_duration(Seconds(7e-7)) == "700 ns");
  CHECK(format_duration(Seconds(4.6e-6)) == "4.6 us");
  CHECK(format_number(12345.678) == "12346");
  CHECK(format_number(0.5) == "0.5");
}

TEST_CASE("unit arithmetic keeps dimensions apart") {
  // 1 GB over 50 GB/s takes 20 ms; 10 TFLOP at 1 PFLOP/s takes 10 ms.
  CHECK((Bytes(1e9) / BytesPerSecond(50e9)).value() == doctest::Approx(0.02).scale(0));
  CHECK((Flops(1e13) / FlopsPerSecond(1e15)).value() == doctest::Approx(0.01).scale(0));
  CHECK((BytesPerSecond(50e9) * Seconds(0.02)).value() == doctest::Approx(1e9).scale(0));
  CHECK(BytesPerSecond(450e9) / BytesPerSecond(50e9) == doctest::Approx(9.0).scale(0));
}

TEST_CASE("simulated time is integer picoseconds") {
  CHECK(SimTime::from_seconds(Seconds(1e-6)).ps() == 1'000'000);
  CHECK(SimTime::from_seconds(Seconds(2.5e-12)).ps() == 3);  // rounds to nearest
  CHECK(SimTime::from_ps(1'500'000'000'000).seconds().value() == doctest::Approx(1.5).scale(0));
  CHECK(SimTime::from_ps(5) + SimTime::from_ps(7) == SimTime::from_ps(12));
  CHECK(SimTime::from_ps(5) < SimTime::from_ps(7));
}
