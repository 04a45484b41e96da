#include "topology/summary.hpp"

#include <map>

#include "topology/bisection.hpp"
#include "topology/group_bandwidth.hpp"

namespace parasim::topology {

TopologySummary summarize(const Router& router) {
  const Cluster& c = router.cluster();
  const auto& spec = c.spec();
  TopologySummary s;
  s.cluster = spec.name;
  s.node = spec.node.name;
  s.gpu = spec.node.gpu.name;
  s.gpus = c.gpu_count();
  s.nodes = c.node_count();
  s.gpus_per_node = c.gpus_per_node();
  s.islands = c.island_count();
  s.island_size = c.island_size();
  s.nics = spec.node.nics.count * spec.nodes;
  if (spec.node.nics.count > 0) s.nic_bandwidth = spec.node.nics.bandwidth;
  s.leaves = c.leaf_count();
  s.spines = c.spine_count();
  s.cores = c.core_count();

  // Links come in direction pairs with consecutive ids; count each physical link once.
  std::map<std::pair<int, double>, std::size_t> classes;
  for (std::size_t id = 0; id < c.link_count(); id += 2) {
    const auto& l = c.link(id);
    ++classes[{static_cast<int>(l.kind), l.bandwidth.value()}];
  }
  for (const auto& [key, count] : classes) {
    s.links.push_back({static_cast<LinkKind>(key.first), BytesPerSecond(key.second), count});
  }

  if (c.island_size() > 1) {
    s.intra_island = router.bottleneck(0, 1);
    s.intra_island_latency = router.route(0, 1).latency;
  }
  if (c.island_count() > 1) {
    const int other = c.island_size();
    s.inter_island_pair = router.bottleneck(0, other);
    s.inter_island_latency = router.route(0, other).latency;
    std::vector<RankGroup> strided(static_cast<std::size_t>(c.island_size()));
    for (int gpu = 0; gpu < c.gpu_count(); ++gpu) strided[static_cast<std::size_t>(c.local_index(gpu))].push_back(gpu);
    s.inter_island_per_gpu = ring_bus_bandwidth(router, strided);
  }
  s.bisection = bisection_bandwidth(c);
  return s;
}

}  // namespace parasim::topology
