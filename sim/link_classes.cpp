#include "sim/link_classes.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace parasim::sim {

namespace {

// One (link, pattern, weight) of a pattern's usage.
struct Entry {
  FluidModel::ResourceId link;
  std::uint32_t pattern;
  double weight, capacity;
};

// Every entry, sorted by link: a link's run is its signature. A pattern lists a link once, so a
// counting sort by link over the patterns in order is that order (a comparison sort of the 58k
// entries of a 16K-GPU job cost more than the rest of link_classes).
std::vector<Entry> entries_by_link(std::size_t link_count, std::span<const LinkUsage* const> patterns) {
  std::vector<std::uint32_t> start(link_count + 1, 0);
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
  return entries;
}

// A link's signature is its capacity and its run of (pattern, weight) in the entries, hashed and
// compared in place: no copy per link.
struct Signature {
  double capacity;
  std::size_t begin, end;
};

struct SignatureHash {
  const std::vector<Entry>* entries;
  std::size_t operator()(const Signature& s) const {
    auto mix = [](std::uint64_t h, std::uint64_t v) { return (h ^ v) * 0x100000001b3ULL + (h >> 29); };
    std::uint64_t h = mix(0xcbf29ce484222325ULL, std::bit_cast<std::uint64_t>(s.capacity));
    for (std::size_t i = s.begin; i < s.end; ++i) h = mix(mix(h, (*entries)[i].pattern), std::bit_cast<std::uint64_t>((*entries)[i].weight));
    return static_cast<std::size_t>(h);
  }
};

struct SignatureEqual {
  const std::vector<Entry>* entries;
  bool operator()(const Signature& a, const Signature& b) const {
    const auto at = [this](std::size_t i) { return entries->begin() + static_cast<std::ptrdiff_t>(i); };
    return a.capacity == b.capacity && a.end - a.begin == b.end - b.begin &&
           std::equal(at(a.begin), at(a.end), at(b.begin), [](const Entry& x, const Entry& y) { return x.pattern == y.pattern && x.weight == y.weight; });
  }
};

// Each link's class (dense over the cluster's links: a lookup per usage later, where a search per
// usage cost more; written for every link a pattern uses, left unwritten elsewhere), and the
// classes' capacities in `out`, numbered as first met in link order.
std::unique_ptr<FluidModel::ResourceId[]> classify_links(const std::vector<Entry>& entries, std::size_t link_count, LinkClasses& out) {
  std::unordered_map<Signature, FluidModel::ResourceId, SignatureHash, SignatureEqual> class_of_signature(64, SignatureHash{&entries},
                                                                                                          SignatureEqual{&entries});
  auto class_of_link = std::make_unique_for_overwrite<FluidModel::ResourceId[]>(link_count);
  for (std::size_t i = 0; i < entries.size();) {
    const auto link = entries[i].link;
    Signature sig{entries[i].capacity, i, i};
    while (i < entries.size() && entries[i].link == link) ++i;
    sig.end = i;
    const auto [it, added] = class_of_signature.try_emplace(sig, static_cast<FluidModel::ResourceId>(out.capacities.size()));
    if (added) out.capacities.push_back(sig.capacity);
    class_of_link[link] = it->second;
    ++out.links;
  }
  return class_of_link;
}

}  // namespace

LinkClasses link_classes(const topology::Cluster& cluster, std::span<const LinkUsage* const> patterns) {
  const auto entries = entries_by_link(cluster.link_count(), patterns);
  LinkClasses out;
  const auto class_of_link = classify_links(entries, cluster.link_count(), out);
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
