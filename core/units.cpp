#include "core/units.hpp"

#include <array>
#include <algorithm>
#include <charconv>
#include <span>
#include <cmath>
#include <limits>
#include <fmt/format.h>

namespace parasim {
namespace {

struct UnitEntry {
  std::string_view symbol;
  double factor;
};

// Decimal prefixes for rates and datasheet sizes, binary ones for memory capacities (GiB as nvidia-smi
// reports). Bits are written with a lower-case b, bytes with an upper-case B, as network vendors do.
constexpr std::array kBytes{
    UnitEntry{"B", 1.0},          UnitEntry{"KB", 1e3},         UnitEntry{"kB", 1e3},
    UnitEntry{"MB", 1e6},         UnitEntry{"GB", 1e9},         UnitEntry{"TB", 1e12},
    UnitEntry{"PB", 1e15},        UnitEntry{"KiB", 1024.0},     UnitEntry{"MiB", 1048576.0},
    UnitEntry{"GiB", 1073741824.0}, UnitEntry{"TiB", 1099511627776.0},
    UnitEntry{"PiB", 1125899906842624.0},
};
constexpr std::array kBandwidth{
    UnitEntry{"B/s", 1.0},     UnitEntry{"KB/s", 1e3},     UnitEntry{"kB/s", 1e3},
    UnitEntry{"MB/s", 1e6},    UnitEntry{"GB/s", 1e9},     UnitEntry{"TB/s", 1e12},
    UnitEntry{"KiB/s", 1024.0}, UnitEntry{"MiB/s", 1048576.0}, UnitEntry{"GiB/s", 1073741824.0},
    UnitEntry{"b/s", 0.125},   UnitEntry{"Kb/s", 125.0},   UnitEntry{"kb/s", 125.0},
    UnitEntry{"Mb/s", 1.25e5}, UnitEntry{"Gb/s", 1.25e8},  UnitEntry{"Tb/s", 1.25e11},
    UnitEntry{"bps", 0.125},   UnitEntry{"Kbps", 125.0},   UnitEntry{"Mbps", 1.25e5},
    UnitEntry{"Gbps", 1.25e8}, UnitEntry{"Tbps", 1.25e11}, UnitEntry{"GBps", 1e9},
    UnitEntry{"TBps", 1e12},
};
constexpr std::array kFlopRate{
    UnitEntry{"FLOPS", 1.0},   UnitEntry{"FLOP/s", 1.0},   UnitEntry{"GFLOPS", 1e9},
    UnitEntry{"GFLOP/s", 1e9}, UnitEntry{"TFLOPS", 1e12},  UnitEntry{"TFLOP/s", 1e12},
    UnitEntry{"PFLOPS", 1e15}, UnitEntry{"PFLOP/s", 1e15},
};
constexpr std::array kDuration{
    UnitEntry{"s", 1.0},   UnitEntry{"ms", 1e-3},  UnitEntry{"us", 1e-6},
    UnitEntry{"\xC2\xB5s", 1e-6},  // µs
    UnitEntry{"ns", 1e-9}, UnitEntry{"ps", 1e-12},
};

std::span<const UnitEntry> table(Dimension d) {
  switch (d) {
    case Dimension::bytes: return kBytes;
    case Dimension::bandwidth: return kBandwidth;
    case Dimension::flop_rate: return kFlopRate;
    case Dimension::duration: return kDuration;
  }
  return {};
}

std::string_view example(Dimension d) {
  switch (d) {
    case Dimension::bytes: return "80 GiB";
    case Dimension::bandwidth: return "600 GB/s";
    case Dimension::flop_rate: return "989 TFLOPS";
    case Dimension::duration: return "2 us";
  }
  return "";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

SimTime SimTime::from_seconds(Seconds s) {
  return SimTime(static_cast<std::int64_t>(std::llround(s.value() * 1e12)));
}

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::bytes: return "size";
    case Dimension::bandwidth: return "bandwidth";
    case Dimension::flop_rate: return "FLOP rate";
    case Dimension::duration: return "duration";
  }
  return "";
}

std::string accepted_units(Dimension d) {
  std::string out;
  for (const auto& u : table(d)) {
    if (!out.empty()) out += ", ";
    out += u.symbol;
  }
  return out;
}

double parse_quantity(std::string_view text, Dimension d) {
  const std::string_view s = trim(text);
  double number = 0.0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec == std::errc::result_out_of_range) throw UnitError(fmt::format("'{}' is out of range for a number", text));
  if (ec != std::errc() || end == s.data()) {
    throw UnitError(fmt::format("'{}' is not a {} (write e.g. '{}')", text, dimension_name(d), example(d)));
  }
  if (!std::isfinite(number)) throw UnitError(fmt::format("'{}' is not a finite number", text));
  const std::string_view unit = trim(std::string_view(end, static_cast<std::size_t>(s.data() + s.size() - end)));
  if (unit.empty()) {
    throw UnitError(fmt::format("'{}' has no unit (write e.g. '{}')", text, example(d)));
  }
  for (const auto& u : table(d)) {
    if (u.symbol != unit) continue;
    // 1e308 TB/s is a finite number of a unit whose product in base units is not.
    if (!std::isfinite(number * u.factor)) throw UnitError(fmt::format("'{}' is out of range: more than {:g} {}", text, std::numeric_limits<double>::max() / u.factor, unit));
    return number * u.factor;
  }
  throw UnitError(fmt::format("unknown unit '{}' for a {}; use one of: {}", unit, dimension_name(d), accepted_units(d)));
}

Bytes parse_bytes(std::string_view t) { return Bytes(parse_quantity(t, Dimension::bytes)); }
BytesPerSecond parse_bandwidth(std::string_view t) { return BytesPerSecond(parse_quantity(t, Dimension::bandwidth)); }
FlopsPerSecond parse_flop_rate(std::string_view t) { return FlopsPerSecond(parse_quantity(t, Dimension::flop_rate)); }
Seconds parse_duration(std::string_view t) { return Seconds(parse_quantity(t, Dimension::duration)); }

std::string format_number(double x, int digits) {
  if (x == 0.0) return "0";
  std::string s = fmt::format("{:.{}g}", x, digits);
  // Plain notation for the magnitudes tables show; {:g} switches to exponents at 1e4.
  if (s.find('e') != std::string::npos && std::fabs(x) >= 1.0 && std::fabs(x) < 1e15) {
    const int integer_digits = static_cast<int>(std::floor(std::log10(std::fabs(x)))) + 1;
    const int decimals = std::max(0, digits - integer_digits);
    s = fmt::format("{:.{}f}", x, decimals);
    if (s.find('.') != std::string::npos) {
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s.pop_back();
    }
  }
  return s;
}

namespace {
std::string with_prefix(double x, std::span<const UnitEntry> units) {
  // units are ordered from small to large; pick the largest whose factor is <= |x|.
  const UnitEntry* best = &units.front();
  for (const auto& u : units) {
    if (std::fabs(x) >= u.factor) best = &u;
  }
  return fmt::format("{} {}", format_number(x / best->factor), best->symbol);
}
constexpr std::array kBytesOut{UnitEntry{"B", 1.0}, UnitEntry{"KiB", 1024.0}, UnitEntry{"MiB", 1048576.0},
                               UnitEntry{"GiB", 1073741824.0}, UnitEntry{"TiB", 1099511627776.0}};
constexpr std::array kBandwidthOut{UnitEntry{"B/s", 1.0}, UnitEntry{"KB/s", 1e3}, UnitEntry{"MB/s", 1e6},
                                   UnitEntry{"GB/s", 1e9}, UnitEntry{"TB/s", 1e12}, UnitEntry{"PB/s", 1e15}};
constexpr std::array kFlopRateOut{UnitEntry{"FLOPS", 1.0}, UnitEntry{"GFLOPS", 1e9}, UnitEntry{"TFLOPS", 1e12},
                                  UnitEntry{"PFLOPS", 1e15}, UnitEntry{"EFLOPS", 1e18}};
constexpr std::array kDurationOut{UnitEntry{"ps", 1e-12}, UnitEntry{"ns", 1e-9}, UnitEntry{"us", 1e-6},
                                  UnitEntry{"ms", 1e-3}, UnitEntry{"s", 1.0}};
}  // namespace

std::string format_bytes(Bytes b) { return with_prefix(b.value(), kBytesOut); }
std::string format_bandwidth(BytesPerSecond r) { return with_prefix(r.value(), kBandwidthOut); }
std::string format_flop_rate(FlopsPerSecond r) { return with_prefix(r.value(), kFlopRateOut); }
std::string format_duration(Seconds s) { return with_prefix(s.value(), kDurationOut); }

}  // namespace parasim
