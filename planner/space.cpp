#include "planner/space.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace parasim::planner {

std::string_view method_name(Method m) {
  switch (m) {
    case Method::dp: return "dp";
    case Method::sdp: return "sdp";
    case Method::tp: return "tp";
  }
  return "?";
}

int LayerStrategy::degree(Method m) const {
  int d = 1;
  for (const auto& l : levels) {
    if (l.method == m) d *= l.degree;
  }
  return d;
}

std::string strategy_name(const LayerStrategy& s) {
  std::string tree;
  for (const auto& l : s.levels) tree += fmt::format("{}{}{}", tree.empty() ? "" : "×", method_name(l.method), l.degree);
  if (tree.empty()) tree = "(one GPU)";
  if (s.levels.size() > 1) tree += fmt::format(" ({} inner)", method_name(s.levels.front().method));
  return fmt::format("pp{} · {}", s.pp, tree);
}

namespace {

// Ordered factorizations of 2^bits into power-of-two parts > 1, each part given a distinct method.
void grow(int bits_left, std::vector<Level>& levels, bool allow_dp_with_sdp, int pp, std::vector<LayerStrategy>& out) {
  if (bits_left == 0) {
    out.push_back({pp, levels});
    return;
  }
  for (const Method m : {Method::dp, Method::sdp, Method::tp}) {
    const bool used = std::any_of(levels.begin(), levels.end(), [&](const Level& l) { return l.method == m; });
    if (used) continue;
    if (!allow_dp_with_sdp && m != Method::tp) {
      const Method other = m == Method::dp ? Method::sdp : Method::dp;
      if (std::any_of(levels.begin(), levels.end(), [&](const Level& l) { return l.method == other; })) continue;
    }
    for (int bits = 1; bits <= bits_left; ++bits) {
      levels.push_back({m, 1 << bits});
      grow(bits_left - bits, levels, allow_dp_with_sdp, pp, out);
      levels.pop_back();
    }
  }
}

}  // namespace

std::vector<LayerStrategy> galvatron_space(int gpus, bool allow_dp_with_sdp) {
  std::vector<LayerStrategy> out;
  if (gpus < 1 || (gpus & (gpus - 1)) != 0) return out;
  for (int pp = 1; pp <= gpus; pp *= 2) {
    int bits = 0;
    while ((1 << bits) < gpus / pp) ++bits;
    std::vector<Level> levels;
    grow(bits, levels, allow_dp_with_sdp, pp, out);
  }
  return out;
}

}  // namespace parasim::planner
