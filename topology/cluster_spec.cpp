#include "topology/cluster_spec.hpp"

#include <fmt/format.h>

namespace parasim::topology {
namespace {

using yaml::Field;
using yaml::FieldType;
using yaml::Schema;

constexpr std::string_view kNetworkKinds[] = {"rail-optimized", "fat-tree"};

constexpr Field kNetworkFields[] = {
    {.name = "kind", .type = FieldType::choice, .description = "rail-optimized: NIC i of every node on the leaves of rail i; fat-tree: a node's NICs on one top-of-rack leaf", .required = true, .choices = kNetworkKinds},
    {.name = "tiers", .type = FieldType::integer, .description = "2: leaf-spine; 3: leaf-spine-core, nodes grouped in pods", .default_text = "2", .min = 2, .max = 3},
    {.name = "switch_radix", .type = FieldType::integer, .description = "ports per switch (at the NIC speed)", .default_text = "64", .min = 4},
    {.name = "oversubscription", .type = FieldType::number, .description = "leaf downlink : uplink bandwidth (1 = non-blocking)", .default_text = "1", .min = 1},
    {.name = "pod_nodes", .type = FieldType::integer, .description = "nodes per pod (three tiers only)", .min = 1},
    {.name = "core_oversubscription", .type = FieldType::number, .description = "spine downlink : uplink bandwidth towards the core (three tiers only)", .default_text = "1", .min = 1},
    {.name = "switch_latency", .type = FieldType::duration, .description = "latency per switch traversed", .default_text = "0.3 us", .min = 0},
    {.name = "sharp", .type = FieldType::boolean, .description = "InfiniBand SHARP in-network reduction (NCCL CollNet) for all-reduce across nodes", .default_text = "false"},
};
constexpr Schema kNetworkSchema{"network", "The inter-node network.", kNetworkFields};

constexpr Field kClusterFields[] = {
    {.name = "name", .type = FieldType::string, .description = "cluster name", .required = true},
    {.name = "description", .type = FieldType::string, .description = "free text"},
    {.name = "node", .type = FieldType::reference, .description = "the node: a file (relative path) or an inline section", .required = true, .schema = &kNodeSchema},
    {.name = "nodes", .type = FieldType::integer, .description = "number of nodes; or give gpus", .min = 1},
    {.name = "gpus", .type = FieldType::integer, .description = "total GPUs, a multiple of the node's GPUs; or give nodes", .min = 1},
    {.name = "network", .type = FieldType::section, .description = "the inter-node network; required with more than one node", .schema = &kNetworkSchema},
};

}  // namespace

const yaml::Schema kClusterSchema{"cluster", "Identical nodes joined by a switched network.", kClusterFields};

ClusterSpec parse_cluster(const yaml::Record& r) {
  ClusterSpec c;
  c.name = r.string("name");
  c.node = parse_node(r.section("node"));
  const int per_node = c.node.gpus;
  if (r.has("gpus")) {
    const auto gpus = r.integer("gpus");
    if (gpus % per_node != 0) {
      r.fail("gpus", fmt::format("{} GPUs cannot be split into nodes of {} ({})", gpus, per_node, c.node.name));
    }
    if (r.has("nodes") && r.integer("nodes") * per_node != gpus) {
      r.fail("gpus", fmt::format("{} GPUs disagree with nodes: {} x {} GPUs = {}", gpus, r.integer("nodes"), per_node,
                                 r.integer("nodes") * per_node));
    }
    c.nodes = static_cast<int>(gpus / per_node);
  } else if (r.has("nodes")) {
    c.nodes = static_cast<int>(r.integer("nodes"));
  } else {
    r.fail("nodes", "missing: give nodes (the number of nodes) or gpus (the total)");
  }
  // Every node and link is a vertex and an edge of the cluster graph: its size is bounded where the
  // GPU count is formed, not left to overflow or to exhaust memory later.
  if (static_cast<long long>(c.nodes) * per_node > kMaxClusterGpus) {
    r.fail(r.has("gpus") ? "gpus" : "nodes", fmt::format("{} nodes of {} GPUs are more than the {} GPUs parasim builds a cluster of", c.nodes, per_node,
                                                        kMaxClusterGpus));
  }
  if (c.nodes > 1 && c.node.nics.count == 0) {
    r.fail("nodes", fmt::format("{} nodes need NICs, and node '{}' has no nics section", c.nodes, c.node.name));
  }
  if (!r.has("network")) {
    if (c.nodes > 1) r.fail("network", fmt::format("missing: {} nodes need a network section", c.nodes));
    return c;
  }
  const auto& net = r.section("network");
  c.network.kind = net.string("kind") == "rail-optimized" ? NetworkKind::rail_optimized : NetworkKind::fat_tree;
  c.network.tiers = static_cast<int>(net.integer("tiers"));
  c.network.switch_radix = static_cast<int>(net.integer("switch_radix"));
  c.network.oversubscription = net.number("oversubscription");
  c.network.core_oversubscription = net.number("core_oversubscription");
  c.network.switch_latency = net.duration("switch_latency");
  c.network.sharp = net.boolean("sharp");
  if (c.network.switch_radix % 2 != 0) net.fail("switch_radix", fmt::format("{} ports cannot be split into down and up links", c.network.switch_radix));
  if (c.network.kind == NetworkKind::fat_tree && c.node.nics.count > 0) {
    const int down = static_cast<int>(c.network.switch_radix * c.network.oversubscription / (1.0 + c.network.oversubscription));
    if (down < c.node.nics.count) {
      net.fail("switch_radix", fmt::format("a leaf with {} downlinks cannot take the {} NICs of one node", down, c.node.nics.count));
    }
  }
  if (c.network.tiers == 3) {
    if (!net.has("pod_nodes")) net.fail("pod_nodes", "missing: a three-tier network needs pod_nodes");
    c.network.pod_nodes = static_cast<int>(net.integer("pod_nodes"));
  } else if (net.has("pod_nodes")) {
    net.fail("pod_nodes", "only a three-tier network has pods (set tiers: 3)");
  } else {
    c.network.pod_nodes = c.nodes;
  }
  return c;
}

}  // namespace parasim::topology
