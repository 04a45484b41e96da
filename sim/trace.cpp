#include "sim/trace.hpp"

#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "workload/chunk_placement.hpp"

namespace parasim::sim {

using workload::TaskKind;

namespace {

// Writes the events one by one as they are formed: a large job's millions of events never sit in
// memory as a document.
class EventStream {
 public:
  explicit EventStream(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":["; }
  void finish() { out_ << "],\"displayTimeUnit\":\"ms\"}\n"; }

  void metadata(std::string_view what, int pid, int tid, std::string_view name) {
    begin();
    out_ << fmt::format(R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"name":{}}}}})", what, pid, tid, quoted(name));
  }
  /// A slice; `args` is the body of its args object.
  void slice(std::string_view name, std::string_view cat, int pid, int tid, double ts, double dur, std::string_view args) {
    begin();
    out_ << fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})", quoted(name), cat, pid, tid, ts, dur,
                        args);
  }
  void counter(std::string_view name, int pid, double ts, std::string_view args) {
    begin();
    out_ << fmt::format(R"({{"ph":"C","name":{},"pid":{},"tid":0,"ts":{},"args":{{{}}}}})", quoted(name), pid, ts, args);
  }

 private:
  void begin() {
    if (!first_) out_ << ',';
    first_ = false;
  }
  static std::string quoted(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

  std::ostream& out_;
  bool first_ = true;
};

double us(std::int64_t ps) { return static_cast<double>(ps) * 1e-6; }

// Per stage a track per stream, and for the backward of F&B steps a second track per communication
// stream (its transfers run beside the forward's); each task a slice, named with its direction
// where the schedule runs two (DualPipe's halves, a V's way back).
void write_stages(EventStream& events, const workload::TaskGraph& g, const Timeline& tl) {
  bool paired = false;
  for (const auto& task : g.tasks) paired |= task.lane != 0;
  for (int s = 0; s < g.stages; ++s) {
    events.metadata("process_name", s, 0, fmt::format("GPU stage {}", s));
    for (int st = 0; st < workload::kStreams * (paired ? 2 : 1); ++st) {
      const auto stream = std::string(workload::stream_name(static_cast<workload::Stream>(st % workload::kStreams)));
      if (st == workload::kStreams) continue;  // compute: one stream, the pair's kernels interleaved on it
      events.metadata("thread_name", s, st, st < workload::kStreams ? stream : stream + " (F&B backward)");
    }
  }
  const bool directions = g.schedule == workload::Schedule::dualpipe || workload::is_v_shaped(g.schedule);
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    const auto& task = g.tasks[t];
    if (tl.finish_ps[t] <= tl.start_ps[t]) continue;
    std::string name = task.kind == TaskKind::compute
                           ? fmt::format("{} {}", workload::block_kind_name(g.blocks[task.block].kind), workload::phase_name(task.phase))
                           : fmt::format("{} {}", workload::comm_dim_name(task.dim), workload::collective_name(task.collective));
    const bool placed = task.microbatch >= 0 && task.chunk >= 0;
    const bool up = placed && g.runs_up(task.chunk, task.microbatch);
    if (directions && placed) name += up ? " (up)" : " (down)";
    const int tid = static_cast<int>(task.stream) + (task.kind == TaskKind::collective && task.lane != 0 ? workload::kStreams : 0);
    std::string args = fmt::format(R"("task":{},"microbatch":{},"chunk":{},"layer":{},"bytes":{})", t, task.microbatch, task.chunk, task.layer, task.bytes);
    if (directions && placed) args += up ? R"(,"direction":"up")" : R"(,"direction":"down")";
    if (task.lane != 0) args += R"(,"fb_pair":"backward")";
    events.slice(name, task.kind == TaskKind::compute ? "compute" : "comm", task.stage, tid, us(tl.start_ps[t]), us(tl.finish_ps[t] - tl.start_ps[t]),
                 args);
  }
}

// Network: one track per directed link that carried a transfer; utilization counters step at each
// transfer's start and end (its usage weight, a load in units of one rank's rate).
void write_links(EventStream& events, const workload::TaskGraph& g, const Timeline& tl, const topology::Cluster& cluster) {
  const int net = g.stages;
  events.metadata("process_name", net, 0, "links");
  std::map<std::size_t, int> track;
  std::map<std::int64_t, std::map<std::size_t, double>> load_changes;
  for (const auto& x : tl.transfers) {
    for (const auto& u : x.usage) {
      auto [it, fresh] = track.emplace(u.resource, static_cast<int>(track.size()) + 1);
      if (fresh) {
        const auto e = cluster.edge(u.resource);
        const auto& gr = cluster.graph();
        events.metadata("thread_name", net, it->second,
                        fmt::format("{} -> {}", cluster.vertex_name(boost::source(e, gr)), cluster.vertex_name(boost::target(e, gr))));
      }
      const auto& task = g.tasks[x.task];
      events.slice(fmt::format("{} {}", workload::comm_dim_name(task.dim), workload::collective_name(task.collective)), "link", net, it->second,
                   us(x.start_ps), us(x.finish_ps - x.start_ps), fmt::format(R"("task":{},"load":{})", x.task, u.weight));
      load_changes[x.start_ps][u.resource] += u.weight;
      load_changes[x.finish_ps][u.resource] -= u.weight;
    }
  }
  std::map<std::size_t, double> load;
  for (const auto& [time, changes] : load_changes) {
    for (const auto& [link, delta] : changes) {
      load[link] += delta;
      events.counter(fmt::format("link {} load", link), net, us(time), fmt::format(R"("load":{})", std::max(0.0, load[link])));
    }
  }
}

}  // namespace

void write_chrome_trace(std::ostream& out, const workload::TaskGraph& g, const Timeline& tl, const topology::Cluster& cluster) {
  EventStream events(out);
  write_stages(events, g, tl);
  write_links(events, g, tl, cluster);
  events.finish();
}

}  // namespace parasim::sim
