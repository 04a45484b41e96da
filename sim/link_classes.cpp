#include "sim/link_classes.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace parasim::sim {

LinkClasses link_classes(const topology::Cluster& cluster, std::span<const LinkUsage* const> patterns) {
  // Every (link, pattern, weight), sorted by link: a link's run is its signature.
  struct Entry {
    FluidModel::ResourceId link;
    std::uint32_t pattern;
    double weight, capacity;
  };
  // A pattern lists a link once, so a counting sort by link over the patterns in order is that order
  // (a comparison sort of the 58k entries of a 16K-GPU job cost more than the rest of this).
  std::vector<std::uint32_t> start(cluster.link_count() + 1, 0);
  std::size_t count = 0;
  for (const auto* pattern : patterns) {
    for (const auto& u : pattern->usage) ++start[u.resource + 1];
    count += pattern->usage.size();
  }
  for (std::size_t l = 1; l < start.size(); ++l) start[l] += start[l - 1];
  std::vector<Entry> entries(count);
  for (std::uint32_t p = 0; p < patterns.size(); ++p) {
    const auto& pattern = *patterns[p];
    if (pattern.capacities.size() != pattern.usage.size()) throw std::logic_error("a link usage without its links' capacities");
    for (std::size_t k = 0; k < pattern.usage.size(); ++k) {
      const auto& u = pattern.usage[k];
      entries[start[u.resource]++] = {u.resource, p, u.weight, pattern.capacities[k]};
    }
  }

  // A link's signature is its capacity and its run of (pattern, weight) in `entries`, hashed and
  // compared in place: no copy per link.
  struct Signature {
    double capacity;
    std::size_t begin, end;
  };
  const auto hash = [&entries](const Signature& s) {
    auto mix = [](std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ULL + (h >> 29); };
    std::uint64_t h = mix(0xcbf29ce484222325ULL, std::bit_cast<std::uint64_t>(s.capacity));
    for (std::size_t i = s.begin; i < s.end; ++i) h = mix(mix(h, entries[i].pattern), std::bit_cast<std::uint64_t>(entries[i].weight));
    return static_cast<std::size_t>(h);
  };
  const auto equal = [&entries](const Signature& a, const Signature& b) {
    return a.capacity == b.capacity && a.end - a.begin == b.end - b.begin &&
           std::equal(entries.begin() + static_cast<std::ptrdiff_t>(a.begin), entries.begin() + static_cast<std::ptrdiff_t>(a.end),
                      entries.begin() + static_cast<std::ptrdiff_t>(b.begin),
                      [](const Entry& x, const Entry& y) { return x.pattern == y.pattern && x.weight == y.weight; });
  };
  std::unordered_map<Signature, FluidModel::ResourceId, decltype(hash), decltype(equal)> class_of_signature(64, hash, equal);
  // Dense over the cluster's links: a lookup per usage below, where a search per usage cost more.
  // Written for every link a pattern uses before it is read, so left unwritten elsewhere.
  const auto class_of_link = std::make_unique_for_overwrite<FluidModel::ResourceId[]>(cluster.link_count());
  LinkClasses out;
  for (std::size_t i = 0; i < entries.size();) {
    const auto link = entries[i].link;
    Signature sig{entries[i].capacity, i, i};
    while (i < entries.size() && entries[i].link == link) ++i;
    sig.end = i;
    // Classes are numbered as first met, in link order.
    const auto [it, added] = class_of_signature.try_emplace(sig, static_cast<FluidModel::ResourceId>(out.capacities.size()));
    if (added) out.capacities.push_back(sig.capacity);
    class_of_link[link] = it->second;
    ++out.links;
  }
  std::vector<std::uint32_t> seen_in(out.capacities.size(), UINT32_MAX);  // the last pattern that used a class
  for (std::uint32_t p = 0; p < patterns.size(); ++p) {
    auto& usage = out.usage[patterns[p]];
    for (const auto& u : patterns[p]->usage) {
      const auto c = class_of_link[u.resource];
      if (seen_in[c] == p) continue;  // the same weight as the class's first link here
      seen_in[c] = p;
      usage.push_back({c, u.weight});
    }
  }
  return out;
}

}  // namespace parasim::sim
