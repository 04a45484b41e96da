#include "sim/trace.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "workload/chunk_placement.hpp"

namespace parasim::sim {

using workload::TaskKind;

std::string_view trace_links_name(TraceLinks links) {
  switch (links) {
    case TraceLinks::none: return "none";
    case TraceLinks::busiest: return "busiest";
    case TraceLinks::all: return "all";
  }
  return "";
}

namespace {

// Writes the events one by one as they are formed: a large job's millions of events never sit in
// memory as a document.
class EventStream {
 public:
  explicit EventStream(std::ostream& out) : out_(out) { out_ << "{\"traceEvents\":["; }
  void finish() { out_ << "],\"displayTimeUnit\":\"ms\"}\n"; }
  std::size_t count() const { return count_; }

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
  void counter(std::string_view name, int pid, double ts, double value) {
    begin();
    out_ << fmt::format(R"({{"ph":"C","name":{},"pid":{},"tid":0,"ts":{},"args":{{"load":{}}}}})", quoted(name), pid, ts, value);
  }
  /// A flow arrow's start ("s") or end ("f", bound to the slice that encloses its time).
  void flow(char ph, std::size_t id, int pid, int tid, double ts) {
    begin();
    out_ << fmt::format(R"({{"ph":"{}","id":{},"name":"pp transfer","cat":"pipeline","pid":{},"tid":{},"ts":{}{}}})", ph, id, pid, tid, ts,
                        ph == 'f' ? R"(,"bp":"e")" : "");
  }

 private:
  void begin() {
    if (count_++ > 0) out_ << ',';
  }
  static std::string quoted(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

  std::ostream& out_;
  std::size_t count_ = 0;
};

double us(std::int64_t ps) { return static_cast<double>(ps) * 1e-6; }

bool shown(const Timeline& tl, std::uint32_t t) { return tl.finish_ps[t] > tl.start_ps[t]; }

// A stream's base track: the stream, offset for the backward of F&B steps' communication.
int base_track(const workload::Task& task) {
  return static_cast<int>(task.stream) + (task.kind == TaskKind::collective && task.lane != 0 ? workload::kStreams : 0);
}
constexpr int kBaseTracks = 2 * workload::kStreams;

// Each task's track: its stream's base track, or a further one of the same stream where it would
// overlap in part a slice already there (interval partitioning, earliest start first).
std::vector<int> assign_tracks(const workload::TaskGraph& g, const Timeline& tl, int& most_per_stream) {
  std::vector<int> track(g.tasks.size(), -1);
  std::map<std::pair<int, int>, std::vector<std::uint32_t>> by_stream;  // (stage, base) -> tasks
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    if (shown(tl, t)) by_stream[{g.tasks[t].stage, base_track(g.tasks[t])}].push_back(t);
  }
  most_per_stream = 1;
  for (auto& [key, tasks] : by_stream) {
    std::stable_sort(tasks.begin(), tasks.end(), [&](std::uint32_t a, std::uint32_t b) { return tl.start_ps[a] < tl.start_ps[b]; });
    std::vector<std::int64_t> last_end;
    for (auto t : tasks) {
      std::size_t k = 0;
      while (k < last_end.size() && last_end[k] > tl.start_ps[t]) ++k;
      if (k == last_end.size()) last_end.push_back(0);
      last_end[k] = tl.finish_ps[t];
      track[t] = key.second + kBaseTracks * static_cast<int>(k);
    }
    most_per_stream = std::max(most_per_stream, static_cast<int>(last_end.size()));
  }
  return track;
}

std::string track_name(int tid) {
  const int base = tid % kBaseTracks, extra = tid / kBaseTracks;
  std::string name(workload::stream_name(static_cast<workload::Stream>(base % workload::kStreams)));
  if (base >= workload::kStreams) name += " (F&B backward)";
  if (extra > 0) name += fmt::format(" {}", extra + 1);
  return name;
}

void write_stages(EventStream& events, const workload::TaskGraph& g, const Timeline& tl, const std::vector<int>& track, int most_per_stream) {
  std::vector<std::vector<bool>> used(static_cast<std::size_t>(g.stages), std::vector<bool>(static_cast<std::size_t>(kBaseTracks * most_per_stream), false));
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    if (track[t] >= 0) used[static_cast<std::size_t>(g.tasks[t].stage)][static_cast<std::size_t>(track[t])] = true;
  }
  for (int s = 0; s < g.stages; ++s) {
    events.metadata("process_name", s, 0, fmt::format("GPU stage {}", s));
    for (int tid = 0; tid < kBaseTracks * most_per_stream; ++tid) {
      if (used[static_cast<std::size_t>(s)][static_cast<std::size_t>(tid)]) events.metadata("thread_name", s, tid, track_name(tid));
    }
  }
  const bool directions = g.schedule == workload::Schedule::dualpipe || workload::is_v_shaped(g.schedule);
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    if (track[t] < 0) continue;
    const auto& task = g.tasks[t];
    std::string name = task.kind == TaskKind::compute
                           ? fmt::format("{} {}", workload::block_kind_name(g.blocks[task.block].kind), workload::phase_name(task.phase))
                           : fmt::format("{} {}", workload::comm_dim_name(task.dim), workload::collective_name(task.collective));
    const bool placed = task.microbatch >= 0 && task.chunk >= 0;
    const bool up = placed && g.runs_up(task.chunk, task.microbatch);
    if (directions && placed) name += up ? " (up)" : " (down)";
    std::string args = fmt::format(R"("task":{},"microbatch":{},"chunk":{},"layer":{},"bytes":{})", t, task.microbatch, task.chunk, task.layer, task.bytes);
    if (directions && placed) args += up ? R"(,"direction":"up")" : R"(,"direction":"down")";
    if (task.lane != 0) args += R"(,"fb_pair":"backward")";
    events.slice(name, task.kind == TaskKind::compute ? "compute" : "comm", task.stage, track[t], us(tl.start_ps[t]),
                 us(tl.finish_ps[t] - tl.start_ps[t]), args);
  }
}

// Flow arrows of the pipeline: from each transfer's producer on the sending stage to its first
// consumer on the receiving stage, each end at the middle of the slice it binds to.
void write_flows(EventStream& events, const workload::TaskGraph& g, const Timeline& tl, const std::vector<int>& track) {
  auto is_transfer = [&](std::uint32_t t) {
    const auto& k = g.tasks[t];
    return k.kind == TaskKind::collective && k.dim == workload::CommDim::pp && k.collective == workload::Collective::send_recv;
  };
  constexpr std::uint32_t kNone = UINT32_MAX;
  std::vector<std::uint32_t> consumer(g.tasks.size(), kNone);
  for (std::uint32_t u = 0; u < g.tasks.size(); ++u) {
    if (track[u] < 0) continue;
    for (auto d : g.dependencies(u)) {
      if (!is_transfer(d) || g.tasks[u].stage != g.tasks[d].stage) continue;
      auto& c = consumer[d];
      if (c == kNone || tl.start_ps[u] < tl.start_ps[c]) c = u;
    }
  }
  auto middle = [&](std::uint32_t t) { return us(tl.start_ps[t]) + us(tl.finish_ps[t] - tl.start_ps[t]) / 2; };
  std::size_t id = 0;
  for (std::uint32_t t = 0; t < g.tasks.size(); ++t) {
    if (!is_transfer(t) || consumer[t] == kNone) continue;
    std::uint32_t producer = kNone;
    for (auto d : g.dependencies(t)) {
      if (track[d] >= 0 && g.tasks[d].stage != g.tasks[t].stage && (producer == kNone || tl.finish_ps[d] > tl.finish_ps[producer])) producer = d;
    }
    if (producer == kNone) continue;
    events.flow('s', id, g.tasks[producer].stage, track[producer], middle(producer));
    events.flow('f', id, g.tasks[consumer[t]].stage, track[consumer[t]], middle(consumer[t]));
    ++id;
  }
}

// The links process: per kept link, its load stepping at each transfer's start and end.
void write_links(EventStream& events, const workload::TaskGraph& g, const Timeline& tl, const topology::Cluster& cluster,
                 const TraceOptions& options, TraceSummary& summary) {
  std::map<std::size_t, double> carried;  // link -> load x time
  for (const auto& x : tl.transfers) {
    for (const auto& u : x.usage) carried[u.resource] += u.weight * static_cast<double>(x.finish_ps - x.start_ps);
  }
  summary.links_busy = carried.size();
  if (options.links == TraceLinks::none || carried.empty()) return;
  std::vector<std::pair<double, std::size_t>> ranked;
  for (const auto& [link, c] : carried) ranked.emplace_back(-c, link);
  std::sort(ranked.begin(), ranked.end());
  if (options.links == TraceLinks::busiest && static_cast<int>(ranked.size()) > options.busiest) ranked.resize(static_cast<std::size_t>(options.busiest));
  std::map<std::size_t, std::string> kept;
  const auto& gr = cluster.graph();
  for (const auto& [c, link] : ranked) {
    const auto e = cluster.edge(link);
    kept[link] = fmt::format("{} -> {}", cluster.vertex_name(boost::source(e, gr)), cluster.vertex_name(boost::target(e, gr)));
  }
  summary.links = kept.size();
  const int net = g.stages;
  events.metadata("process_name", net, 0,
                  options.links == TraceLinks::all ? "links" : fmt::format("links (the {} busiest of {})", kept.size(), carried.size()));
  std::map<std::int64_t, std::map<std::size_t, double>> load_changes;
  for (const auto& x : tl.transfers) {
    for (const auto& u : x.usage) {
      if (!kept.contains(u.resource)) continue;
      load_changes[x.start_ps][u.resource] += u.weight;
      load_changes[x.finish_ps][u.resource] -= u.weight;
    }
  }
  std::map<std::size_t, double> load;
  for (const auto& [time, changes] : load_changes) {
    for (const auto& [link, delta] : changes) {
      load[link] += delta;
      events.counter(kept.at(link), net, us(time), std::max(0.0, load[link]));
    }
  }
}

}  // namespace

TraceSummary write_chrome_trace(std::ostream& out, const workload::TaskGraph& g, const Timeline& tl, const topology::Cluster& cluster,
                                const TraceOptions& options) {
  TraceSummary summary;
  EventStream events(out);
  int most_per_stream = 1;
  const auto track = assign_tracks(g, tl, most_per_stream);
  write_stages(events, g, tl, track, most_per_stream);
  write_flows(events, g, tl, track);
  write_links(events, g, tl, cluster, options, summary);
  events.finish();
  summary.events = events.count();
  return summary;
}

}  // namespace parasim::sim
