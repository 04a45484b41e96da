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

  using Signature = std::pair<double, std::vector<std::pair<std::uint32_t, double>>>;  // capacity, (pattern, weight)…
  std::map<Signature, FluidModel::ResourceId> class_of_signature;
  std::map<FluidModel::ResourceId, FluidModel::ResourceId> class_of_link;
  LinkClasses out;
  for (std::size_t i = 0; i < entries.size();) {
    const auto link = entries[i].link;
    Signature sig{cluster.link(link).bandwidth.value(), {}};
    for (; i < entries.size() && entries[i].link == link; ++i) sig.second.emplace_back(entries[i].pattern, entries[i].weight);
    auto [it, added] = class_of_signature.emplace(std::move(sig), static_cast<FluidModel::ResourceId>(out.capacities.size()));
    if (added) out.capacities.push_back(it->first.first);
    class_of_link[link] = it->second;
    ++out.links;
  }
  std::vector<std::uint32_t> seen_in(out.capacities.size(), UINT32_MAX);  // the last pattern that used a class
  for (std::uint32_t p = 0; p < patterns.size(); ++p) {
    auto& usage = out.usage[patterns[p]];
    for (const auto& u : patterns[p]->usage) {
      const auto c = class_of_link.at(u.resource);
      if (seen_in[c] == p) continue;  // the same weight as the class's first link here
      seen_in[c] = p;
      usage.push_back({c, u.weight});
    }
  }
  return out;
}

}  // namespace parasim::sim
