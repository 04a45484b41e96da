#pragma once
// The figures `parasim topo` reports: what the cluster is made of and what bandwidth GPUs get.
#include <optional>
#include <string>
#include <vector>

#include "topology/routing.hpp"

namespace parasim::topology {

struct LinkClass {
  LinkKind kind;
  BytesPerSecond bandwidth;  ///< per direction
  std::size_t count = 0;     ///< physical (bidirectional) links
};

struct TopologySummary {
  std::string cluster;
  std::string node;
  std::string gpu;
  int gpus = 0, nodes = 0, gpus_per_node = 0;
  int islands = 0, island_size = 0;
  int nics = 0;
  std::optional<BytesPerSecond> nic_bandwidth;
  std::size_t leaves = 0, spines = 0, cores = 0;
  std::vector<LinkClass> links;
  /// GPU 0 to GPU 1 alone (same island), per direction.
  std::optional<BytesPerSecond> intra_island;
  Seconds intra_island_latency;
  /// GPU 0 to the first GPU of the next island alone, per direction.
  std::optional<BytesPerSecond> inter_island_pair;
  Seconds inter_island_latency;
  /// Per GPU when every GPU exchanges with the other islands at once (rings over GPUs of equal
  /// position in every island, all running): what a data-parallel all-reduce across nodes gets.
  std::optional<BytesPerSecond> inter_island_per_gpu;
  BytesPerSecond bisection;
};

TopologySummary summarize(const Router& router);

}  // namespace parasim::topology
