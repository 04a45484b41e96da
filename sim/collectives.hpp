#pragma once
// Collectives lowered to link usage, and the choice of algorithm.
//
// A collective runs as one fluid activity per phase: its rate is the bus bandwidth each rank gets
// (bytes per second of the algorithm's per-rank traffic), and its usage of each directed link is the
// sum, over the rings (or trees, or switch ports) of every twin group running at the same time, of
// the share of a hop's route on that link, divided by the fabric's efficiency. Alone on the network
// such an activity moves at min over links of capacity / usage: the ring bus bandwidth of the
// topology module, scaled by the fabric's efficiency.
//
// Algorithms and their per-rank traffic for an S-byte buffer over n ranks:
//   ring all-reduce 2(n−1)/n·S in 2(n−1) steps; ring all-gather / reduce-scatter (n−1)/n·S in n−1;
//   tree all-reduce (double binary tree) ~2·S on the ring's links, in 2·⌈log2 n⌉ steps inside one
//     island; across N islands of m ranks, NCCL's tree (tuning.cc): a chain through each island's
//     ranks under a binary tree of islands, 2(m−1) steps inside and 2·⌈log2 N⌉ across, each at its
//     own fabric's step cost;
//   NVLS all-reduce inside one NVSwitch island: S up to the switch and S back, 2 steps, and a fixed
//     cost that grows with the ranks it spans: the profile's NVLS latency (quoted at 8 ranks, as
//     measured on 8x H200) times ranks / 8 (GB200 NVL72: 72 ranks, 9 times that);
//   hierarchical all-reduce (NCCL's tree and NVLS-tree across NVSwitch nodes, pipelined): in each
//     island a reduce-scatter and an all-gather of S, 2(m−1)/m·S per rank on the island's ring (or,
//     where the profile has NVLS, S up to the switch and S back), and across islands an all-reduce of
//     S/m among ranks of equal position, 2(p−1)/p·S/m per rank; NCCL streams chunks through both
//     levels at once, so it runs as one phase that loads the island and network links together (its
//     rate is set by the slower level) and pays the latency of both;
//   SHARP all-reduce across nodes (InfiniBand with SHARP, NCCL CollNet): each rank sends S up to its
//     leaf and receives the reduced S back; the switches combine it; 2 steps per switch tier;
//   pairwise all-to-all: every rank sends S/n to each other rank, (n−1)/n·S in n−1 steps;
//   send/recv: the message, one step.
// The choice, as NCCL's tuner makes it: the eligible algorithm and protocol with the smallest
// estimated time alone (launch + steps × (wires + protocol latency) + traffic / bus bandwidth, with
// LL trading bandwidth for latency). NVLS needs NVLS hardware (the profile says so) and an NVSwitch
// island; the hierarchical (tree-like) all-reduce needs NVSwitch nodes and a group spanning them with
// equal ranks per node; SHARP needs `network.sharp` and a group that spans nodes.
#include <deque>
#include <map>
#include <unordered_map>
#include <vector>

#include "calibrate/profile.hpp"
#include "sim/fluid.hpp"
#include "topology/routing.hpp"
#include "workload/task_graph.hpp"

namespace parasim::sim {

enum class Algorithm { ring, tree, nvls, hierarchical, direct, sharp, pairwise };
std::string_view algorithm_name(Algorithm a);

calibrate::Fabric fabric_of(topology::LinkKind kind);

/// The steps a phase's latency is made of, on one fabric.
struct LatencyPart {
  calibrate::Fabric fabric = calibrate::Fabric::nvlink;
  int steps = 1;
  Seconds step_latency;  ///< wires (route latency) per step
  bool nvls = false;     ///< an NVLS reduction: the profile's NVLS latency instead of per-step protocol costs
  int ranks = 8;         ///< ranks of the NVLS reduction (its fixed cost is the profile's x ranks / 8)
};

/// Link usage of one phase, per unit of the phase's rate (directed link id, weight).
struct LinkUsage {
  std::vector<FluidModel::Usage> usage;  ///< resource ids are directed link ids
  /// Per entry of `usage`: its link's bandwidth (bytes/s), read where the usage is built, so that
  /// the link classes need not look every link up again (a cache miss each on a large cluster).
  std::vector<double> capacities;
  double bytes_factor = 1;               ///< per-rank traffic per byte of the buffer
  int steps = 1;
  Seconds step_latency;                  ///< wires (route latency) + protocol per step
  calibrate::Fabric fabric = calibrate::Fabric::nvlink;  ///< slowest fabric crossed
  double alone_rate = 0;                 ///< bytes/s per rank with no other traffic
  /// Where a phase spans fabrics (the pipelined hierarchical all-reduce), its latency by part; empty:
  /// one part, {fabric, steps, step_latency}.
  std::vector<LatencyPart> parts;
  int ranks = 8;  ///< ranks in the island (NVLS)
};

enum class Protocol { simple, ll };
std::string_view protocol_name(Protocol p);

struct Lowering {
  Algorithm algorithm = Algorithm::ring;
  std::vector<const LinkUsage*> phases;
  /// Per phase, for the protocol chosen: the latency before data moves, and the rate relative to
  /// the phase's Simple-protocol link usage.
  std::vector<Protocol> protocols;
  std::vector<Seconds> latencies;
  std::vector<double> rate_scales;
  Seconds estimated;  ///< alone, for the choice
};

class CollectiveLowering {
 public:
  CollectiveLowering(const topology::Router& router, const calibrate::Profile& profile);

  /// The algorithm chosen for a collective of `bytes` over a group and its twins, and its phases.
  /// `group` is a cache key standing for that exact set of twins. The lowering is kept: the
  /// reference stays valid as long as this object.
  const Lowering& lower(workload::Collective kind, std::uint64_t group, const workload::Twins& twins, double bytes);

 private:
  Lowering choose(workload::Collective kind, std::uint64_t group, const workload::Twins& twins, double bytes);
  /// How a ring-routed collective's steps are counted: passes round the ring, or a tree's levels.
  enum class Pattern { one_pass, two_passes, tree };
  const LinkUsage& ring(std::uint64_t group, const workload::Twins& twins, double factor, Pattern pattern);
  /// A tree's latency parts where it spans islands (empty inside one): its steps inside an island
  /// and between islands, from the hops of the group's ring order.
  std::vector<LatencyPart> tree_latency(const std::vector<int>& ring) const;
  const LinkUsage& nvls(std::uint64_t group, const workload::Twins& twins);
  const LinkUsage& direct(std::uint64_t group, const workload::Twins& twins);
  const LinkUsage& sharp(std::uint64_t group, const workload::Twins& twins);
  const LinkUsage& pairwise(std::uint64_t group, const workload::Twins& twins);
  const LinkUsage& hierarchical(std::uint64_t group, const workload::Twins& twins, bool nvls);
  LinkUsage finish(topology::LinkLoads& all, double factor, int steps, topology::LinkLoads& own) const;
  /// Fills the protocols, latencies and estimate of a lowering for a buffer of `bytes`.
  void price(Lowering& l, double bytes) const;

  /// Scratch link loads i, emptied (dense over the cluster's links, kept between collectives).
  topology::LinkLoads& fresh(std::size_t i);

  /// The representative group's nodes. A lowering keeps the links its representative crosses: inside
  /// those nodes, their NIC cables and the network's. A twin's route elsewhere loads none of them
  /// but through the network, so only its network part and latency are added (a 16K-GPU cluster's
  /// tensor-parallel twins are 2,048 groups, all but one on other nodes).
  class NearNodes {
   public:
    NearNodes(const topology::Cluster& cluster, std::span<const int> ranks, std::vector<unsigned char>& marks);
    ~NearNodes();
    NearNodes(const NearNodes&) = delete;
    NearNodes& operator=(const NearNodes&) = delete;
    bool near(int gpu) const { return (*marks_)[static_cast<std::size_t>(cluster_->node_of(gpu))] != 0; }
    /// Adds the route from a to b to `all`: whole where it may load a kept link, else its network part.
    void add(const topology::Router& router, int a, int b, double share, topology::LinkLoads& all) const;

   private:
    const topology::Cluster* cluster_;
    std::vector<unsigned char>* marks_;
    std::vector<int> nodes_;
  };

  const topology::Router* router_;
  const calibrate::Profile* profile_;
  std::deque<topology::LinkLoads> scratch_;  ///< a deque: a scratch made later moves none made before
  std::vector<unsigned char> near_marks_;  ///< per node, for NearNodes
  // Cached patterns by (group, algorithm, variant): the usage does not depend on the size.
  std::map<std::tuple<std::uint64_t, int, int>, LinkUsage> cache_;
  // Choices already made, by (collective, group key, bytes).
  /// By (kind, group, the bytes' bit pattern): a node map, so a Lowering's address stays valid.
  struct ChosenKey {
    int kind;
    std::uint64_t group, bytes;
    bool operator==(const ChosenKey&) const = default;
  };
  struct ChosenHash {
    std::size_t operator()(const ChosenKey& k) const {
      return std::hash<std::uint64_t>()(k.group * 0x9e3779b97f4a7c15ULL ^ k.bytes * 0xff51afd7ed558ccdULL ^ static_cast<std::uint64_t>(k.kind));
    }
  };
  std::unordered_map<ChosenKey, Lowering, ChosenHash> chosen_;
};

}  // namespace parasim::sim
