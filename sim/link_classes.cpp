#include "sim/link_classes.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace parasim::sim {

LinkClasses link_classes(const topology::Cluster& cluster, std::span<const LinkUsage* const> patterns) {
  // Every (link, pattern, weight), sorted by link: a link's run is its signature.
  struct Entry {
    FluidModel::ResourceId link;
    std::uint32_t pattern;
    double weight;
  };
  std::vector<Entry> entries;
  for (std::uint32_t p = 0; p < patterns.size(); ++p) {
    for (const auto& u : patterns[p]->usage) entries.push_back({u.resource, p, u.weight});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return std::tie(a.link, a.pattern) < std::tie(b.link, b.pattern); });

  // A link's signature is its capacity and its run of (pattern, weight) in `entries`, compared in
  // place: no copy per link.
  struct Signature {
    double capacity;
    std::size_t begin, end;
  };
  const auto less = [&entries](const Signature& a, const Signature& b) {
    if (a.capacity != b.capacity) return a.capacity < b.capacity;
    return std::lexicographical_compare(entries.begin() + static_cast<std::ptrdiff_t>(a.begin), entries.begin() + static_cast<std::ptrdiff_t>(a.end),
                                        entries.begin() + static_cast<std::ptrdiff_t>(b.begin), entries.begin() + static_cast<std::ptrdiff_t>(b.end),
                                        [](const Entry& x, const Entry& y) { return std::tie(x.pattern, x.weight) < std::tie(y.pattern, y.weight); });
  };
  std::map<Signature, FluidModel::ResourceId, decltype(less)> class_of_signature(less);
  std::vector<std::pair<FluidModel::ResourceId, FluidModel::ResourceId>> class_of_link;  // (link, class), by link
  LinkClasses out;
  for (std::size_t i = 0; i < entries.size();) {
    const auto link = entries[i].link;
    Signature sig{cluster.link(link).bandwidth.value(), i, i};
    while (i < entries.size() && entries[i].link == link) ++i;
    sig.end = i;
    auto it = class_of_signature.lower_bound(sig);
    if (it == class_of_signature.end() || less(sig, it->first)) {
      it = class_of_signature.emplace_hint(it, sig, static_cast<FluidModel::ResourceId>(out.capacities.size()));
      out.capacities.push_back(sig.capacity);
    }
    class_of_link.emplace_back(link, it->second);
    ++out.links;
  }
  const auto class_of = [&class_of_link](FluidModel::ResourceId link) {
    return std::lower_bound(class_of_link.begin(), class_of_link.end(), std::pair{link, FluidModel::ResourceId{0}})->second;
  };
  std::vector<std::uint32_t> seen_in(out.capacities.size(), UINT32_MAX);  // the last pattern that used a class
  for (std::uint32_t p = 0; p < patterns.size(); ++p) {
    auto& usage = out.usage[patterns[p]];
    for (const auto& u : patterns[p]->usage) {
      const auto c = class_of(u.resource);
      if (seen_in[c] == p) continue;  // the same weight as the class's first link here
      seen_in[c] = p;
      usage.push_back({c, u.weight});
    }
  }
  return out;
}

}  // namespace parasim::sim
