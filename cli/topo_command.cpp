// parasim topo <scenario>: what the cluster is made of and what bandwidth its GPUs get.
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "sim/scenario.hpp"
#include "topology/dot.hpp"
#include "topology/summary.hpp"

namespace parasim::cli {
namespace {

struct TopoOptions {
  std::string scenario;
  std::vector<std::string> set;
  bool json = false;
  bool dot = false;
};

nlohmann::json optional_number(const std::optional<BytesPerSecond>& b) {
  return b ? nlohmann::json(b->value()) : nlohmann::json(nullptr);
}

nlohmann::json to_json(const topology::TopologySummary& s) {
  nlohmann::json links = nlohmann::json::array();
  for (const auto& l : s.links) {
    links.push_back({{"kind", topology::link_kind_name(l.kind)}, {"count", l.count}, {"bandwidth_bytes_per_s", l.bandwidth.value()}});
  }
  return {
      {"cluster", s.cluster},
      {"node", s.node},
      {"gpu", s.gpu},
      {"gpus", s.gpus},
      {"nodes", s.nodes},
      {"gpus_per_node", s.gpus_per_node},
      {"islands", {{"count", s.islands}, {"size", s.island_size}}},
      {"nics", {{"count", s.nics}, {"bandwidth_bytes_per_s", optional_number(s.nic_bandwidth)}}},
      {"switches", {{"leaf", s.leaves}, {"spine", s.spines}, {"core", s.cores}}},
      {"links", links},
      {"bandwidth_bytes_per_s",
       {{"intra_island", optional_number(s.intra_island)},
        {"inter_island_pair", optional_number(s.inter_island_pair)},
        {"inter_island_per_gpu", optional_number(s.inter_island_per_gpu)},
        {"bisection", s.bisection.value()}}},
      {"latency_s",
       {{"intra_island", s.intra_island ? nlohmann::json(s.intra_island_latency.value()) : nlohmann::json(nullptr)},
        {"inter_island", s.inter_island_pair ? nlohmann::json(s.inter_island_latency.value()) : nlohmann::json(nullptr)}}},
  };
}

std::string or_dash(const std::optional<BytesPerSecond>& b) { return b ? format_bandwidth(*b) : "-"; }

std::string to_text(const topology::TopologySummary& s) {
  std::string out = fmt::format("Cluster   {}\n", s.cluster);
  out += fmt::format("Nodes     {} x {} ({} GPUs each)\n", s.nodes, s.node, s.gpus_per_node);
  out += fmt::format("GPUs      {} x {} in {} island{} of {}\n", s.gpus, s.gpu, s.islands, s.islands == 1 ? "" : "s", s.island_size);
  if (s.nic_bandwidth) {
    out += fmt::format("NICs      {} x {} ({} Gb/s)\n", s.nics, format_bandwidth(*s.nic_bandwidth),
                       format_number(s.nic_bandwidth->value() * 8 / 1e9));
  } else {
    out += "NICs      none\n";
  }
  out += fmt::format("Switches  {} leaf, {} spine, {} core\n\n", s.leaves, s.spines, s.cores);

  Table links({"link", "count", "bandwidth per direction"}, {Table::Align::left, Table::Align::right, Table::Align::right});
  for (const auto& l : s.links) links.add({std::string(topology::link_kind_name(l.kind)), fmt::format("{}", l.count), format_bandwidth(l.bandwidth)});
  out += links.render() + "\n";

  Table bw({"bandwidth per direction", "value", "latency", "what"}, {Table::Align::left, Table::Align::right, Table::Align::right, Table::Align::left});
  bw.add({"intra-island GPU-GPU", or_dash(s.intra_island), s.intra_island ? format_duration(s.intra_island_latency) : "-", "GPU 0 to GPU 1, alone"});
  bw.add({"inter-island GPU-GPU", or_dash(s.inter_island_pair), s.inter_island_pair ? format_duration(s.inter_island_latency) : "-", "GPU 0 to the next island's GPU 0, alone"});
  bw.add({"inter-island per GPU", or_dash(s.inter_island_per_gpu), "", "every GPU across islands at once (ring bus bandwidth)"});
  bw.add({"bisection", format_bandwidth(s.bisection), "", "first half of the GPUs to the second (max flow)"});
  out += bw.render();
  return out;
}

}  // namespace

Action add_topo_command(CLI::App& app) {
  auto opts = std::make_shared<TopoOptions>();
  auto* cmd = app.add_subcommand("topo", "Show the cluster graph: islands, links, NICs, GPU-to-GPU and bisection bandwidth");
  cmd->footer(
      "Examples:\n"
      "  parasim topo scenarios/default.yaml\n"
      "  parasim topo scenarios/clusters/dgx-a100-1024.yaml --json\n"
      "  parasim topo scenarios/default.yaml --set cluster.nodes=2 --dot | dot -Tsvg > cluster.svg");
  cmd->add_option("scenario", opts->scenario, "scenario or cluster YAML file")->required();
  cmd->add_option("--set", opts->set, "override a scenario key: --set cluster.node.nics.bandwidth=800Gb/s (repeatable)");
  auto* json = cmd->add_flag("--json", opts->json, "print JSON instead of a table");
  cmd->add_flag("--dot", opts->dot, "print the graph in Graphviz DOT (small clusters)")->excludes(json);
  return [opts]() {
    // topo shows the cluster: a plan that does not fit it (after --set cluster.nodes=2) is not its concern.
    const auto scenario = sim::load_scenario(opts->scenario, opts->set, sim::PlanCheck::drop_unsuitable);
    const topology::Cluster cluster(scenario.cluster);
    if (opts->dot) {
      if (boost::num_vertices(cluster.graph()) > topology::kMaxDotVertices) {
        throw InputError({opts->scenario, 0, 0}, "cluster",
                         fmt::format("{} graph vertices are too many to draw (--dot takes up to {}); try fewer nodes with --set cluster.nodes=2",
                                     boost::num_vertices(cluster.graph()), topology::kMaxDotVertices));
      }
      std::cout << topology::to_dot(cluster);
      return 0;
    }
    const topology::Router router(cluster);
    const auto summary = topology::summarize(router);
    if (opts->json) std::cout << to_json(summary).dump(2) << "\n";
    else std::cout << to_text(summary);
    return 0;
  };
}

}  // namespace parasim::cli
