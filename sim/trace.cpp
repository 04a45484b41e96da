#include "sim/trace.hpp"

#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

namespace parasim::sim {

using workload::TaskKind;

void write_chrome_trace(std::ostream& out, const workload::TaskGraph& g, const Timeline& tl, const topology::Cluster& cluster) {
  nlohmann::json events = nlohmann::json::array();
  auto us = [](std::int64_t ps) { return static_cast<double>(ps) * 1e-6; };
  for (int s = 0; s < g.stages; ++s) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", s}, {"tid", 0}, {"args", {{"name", fmt::format("GPU stage {}", s)}}}});
    for (int st = 0; st < workload::kStreams; ++st) {
      events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", s}, {"tid", st},
                        {"args", {{"name", std::string(workload::stream_name(static_cast<workload::Stream>(st)))}}}});
    }
  }
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    const auto& task = g.tasks[t];
    if (tl.finish_ps[t] <= tl.start_ps[t]) continue;
    const std::string name = task.kind == TaskKind::compute
                                 ? fmt::format("{} {}", workload::block_kind_name(g.blocks[task.block].kind), workload::phase_name(task.phase))
                                 : fmt::format("{} {}", workload::comm_dim_name(task.dim), workload::collective_name(task.collective));
    events.push_back({{"ph", "X"},
                      {"name", name},
                      {"cat", task.kind == TaskKind::compute ? "compute" : "comm"},
                      {"pid", task.stage},
                      {"tid", static_cast<int>(task.stream)},
                      {"ts", us(tl.start_ps[t])},
                      {"dur", us(tl.finish_ps[t] - tl.start_ps[t])},
                      {"args", {{"task", t}, {"microbatch", task.microbatch}, {"layer", task.layer}, {"bytes", task.bytes}}}});
  }
  // Network: one track per directed link that carried a transfer; utilization counters step at each
  // transfer's start and end (its usage weight, a load in units of one rank's rate).
  const int net = g.stages;
  events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", net}, {"tid", 0}, {"args", {{"name", "links"}}}});
  std::map<std::size_t, int> track;
  std::map<std::int64_t, std::map<std::size_t, double>> load_changes;
  for (const auto& x : tl.transfers) {
    for (const auto& u : x.usage) {
      auto [it, fresh] = track.emplace(u.resource, static_cast<int>(track.size()) + 1);
      if (fresh) {
        const auto e = cluster.edge(u.resource);
        const auto& gr = cluster.graph();
        events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", net}, {"tid", it->second},
                          {"args", {{"name", fmt::format("{} -> {}", cluster.vertex_name(boost::source(e, gr)), cluster.vertex_name(boost::target(e, gr)))}}}});
      }
      const auto& task = g.tasks[x.task];
      events.push_back({{"ph", "X"}, {"name", fmt::format("{} {}", workload::comm_dim_name(task.dim), workload::collective_name(task.collective))},
                        {"cat", "link"}, {"pid", net}, {"tid", it->second}, {"ts", us(x.start_ps)}, {"dur", us(x.finish_ps - x.start_ps)},
                        {"args", {{"task", x.task}, {"load", u.weight}}}});
      load_changes[x.start_ps][u.resource] += u.weight;
      load_changes[x.finish_ps][u.resource] -= u.weight;
    }
  }
  std::map<std::size_t, double> load;
  for (const auto& [time, changes] : load_changes) {
    for (const auto& [link, delta] : changes) {
      load[link] += delta;
      events.push_back({{"ph", "C"}, {"name", fmt::format("link {} load", link)}, {"pid", net}, {"tid", 0}, {"ts", us(time)},
                        {"args", {{"load", std::max(0.0, load[link])}}}});
    }
  }
  out << nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() << "\n";
}

}  // namespace parasim::sim
