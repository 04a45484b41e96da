#pragma once
// Strong units at the boundaries: bytes, bandwidth, FLOPs, FLOP rates and durations are distinct
// types, so a bandwidth can never be passed where a capacity is expected. Human text ("600 GB/s",
// "200 Gb/s", "80 GiB", "989 TFLOPS", "2 us") is converted once, at the YAML edge.
#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace parasim {

template <class Tag>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(double value) : value_(value) {}
  constexpr double value() const { return value_; }

  constexpr Quantity& operator+=(Quantity o) { value_ += o.value_; return *this; }
  constexpr Quantity& operator-=(Quantity o) { value_ -= o.value_; return *this; }
  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.value_ + b.value_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.value_ - b.value_); }
  friend constexpr Quantity operator*(Quantity a, double k) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator*(double k, Quantity a) { return Quantity(a.value_ * k); }
  friend constexpr Quantity operator/(Quantity a, double k) { return Quantity(a.value_ / k); }
  friend constexpr double operator/(Quantity a, Quantity b) { return a.value_ / b.value_; }
  friend constexpr auto operator<=>(Quantity, Quantity) = default;

 private:
  double value_ = 0.0;
};

struct BytesTag {};
struct BandwidthTag {};
struct FlopsTag {};
struct FlopRateTag {};
struct SecondsTag {};

using Bytes = Quantity<BytesTag>;
using BytesPerSecond = Quantity<BandwidthTag>;
using Flops = Quantity<FlopsTag>;
using FlopsPerSecond = Quantity<FlopRateTag>;
using Seconds = Quantity<SecondsTag>;

constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.value() / r.value()); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.value() / r.value()); }
constexpr Bytes operator*(BytesPerSecond r, Seconds t) { return Bytes(r.value() * t.value()); }
constexpr Flops operator*(FlopsPerSecond r, Seconds t) { return Flops(r.value() * t.value()); }

/// Simulated time: integer picoseconds, so event order never depends on floating-point rounding.
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ps(std::int64_t ps) { return SimTime(ps); }
  /// Rounds to the nearest picosecond.
  static SimTime from_seconds(Seconds s);
  constexpr std::int64_t ps() const { return ps_; }
  constexpr Seconds seconds() const { return Seconds(static_cast<double>(ps_) * 1e-12); }
  friend constexpr auto operator<=>(SimTime, SimTime) = default;
  friend constexpr SimTime operator+(SimTime a, SimTime b) { return SimTime(a.ps_ + b.ps_); }
  friend constexpr SimTime operator-(SimTime a, SimTime b) { return SimTime(a.ps_ - b.ps_); }

 private:
  constexpr explicit SimTime(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

/// What a text quantity measures; selects the units it may carry.
enum class Dimension { bytes, bandwidth, flop_rate, duration };

/// Thrown by parse_quantity with a message fit for the user ("unknown unit 'GBs' for a bandwidth…").
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Parses "600 GB/s" (decimal bytes), "200 Gb/s" (bits), "80 GiB" (binary), "989 TFLOPS", "2 us"
/// into the base unit (bytes, bytes/s, FLOP/s, seconds). Throws UnitError.
double parse_quantity(std::string_view text, Dimension dimension);

Bytes parse_bytes(std::string_view text);
BytesPerSecond parse_bandwidth(std::string_view text);
FlopsPerSecond parse_flop_rate(std::string_view text);
Seconds parse_duration(std::string_view text);

/// The units accepted for a dimension, for help and error texts ("B/s, KB/s, …, Gb/s").
std::string accepted_units(Dimension dimension);
std::string_view dimension_name(Dimension dimension);

/// Human text with up to four significant digits: "450 GB/s", "79.6 GiB", "989.4 TFLOPS", "2 us".
/// Bandwidth and FLOP rates use decimal prefixes, capacities binary ones, as datasheets do.
std::string format_bytes(Bytes b);
std::string format_bandwidth(BytesPerSecond r);
std::string format_flop_rate(FlopsPerSecond r);
std::string format_duration(Seconds s);
/// A plain number with up to `digits` significant digits and no trailing zeros.
std::string format_number(double x, int digits = 4);

}  // namespace parasim
