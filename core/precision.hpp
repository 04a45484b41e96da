#pragma once
// Numeric formats a GPU computes in; peak FLOP/s are given per format.
#include <array>
#include <optional>
#include <string_view>

namespace parasim {

enum class Precision { fp32, tf32, bf16, fp16, fp8 };

inline constexpr std::array kAllPrecisions{Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp16,
                                           Precision::fp8};

constexpr std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    case Precision::fp8: return "fp8";
  }
  return "";
}

constexpr std::optional<Precision> precision_from_name(std::string_view name) {
  for (auto p : kAllPrecisions) {
    if (precision_name(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace parasim
