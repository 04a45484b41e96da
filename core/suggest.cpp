#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace parasim {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates) {
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  std::size_t best_length_gap = 0;
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  const std::string lw = lower(word);
  for (const auto& c : candidates) {
    // Case differences alone count as one edit: "Bandwidth" for "bandwidth" is a typo, not a new key.
    const std::size_t d = lower(c) == lw ? 1 : edit_distance(word, c);
    // Among equally close candidates prefer the one of the same length: "nodez" is "nodes", not "node".
    const std::size_t gap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
    if (d < best_distance || (d == best_distance && gap < best_length_gap)) {
      best_distance = d;
      best_length_gap = gap;
      best = c;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  const auto m = closest_match(word, candidates);
  return m ? " (did you mean '" + *m + "'?)" : std::string();
}

std::string join_names(std::span<const std::string> names, std::string_view separator) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += separator;
    out += n;
  }
  return out;
}

}  // namespace parasim
