#pragma once
// "Did you mean …?" for misspelt keys and names (SimGrid's "Bad config key … Did you mean").
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace parasim {

/// Levenshtein distance (insertions, deletions, substitutions; case-sensitive).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `word` if it is plausibly a typo of it (distance at most a third of its
/// length, at least 1, at most 3); ties go to the candidate closest in length, then to the first.
std::optional<std::string> closest_match(std::string_view word, std::span<const std::string> candidates);

/// " (did you mean 'x'?)" or "" — ready to append to a message.
std::string did_you_mean(std::string_view word, std::span<const std::string> candidates);

/// "a, b, c" in the given order.
std::string join_names(std::span<const std::string> names, std::string_view separator = ", ");

}  // namespace parasim
