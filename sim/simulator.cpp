#include "sim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <queue>
#include <unordered_set>
#include <stdexcept>

#include "core/error.hpp"
#include "sim/link_classes.hpp"
#include "sim/stage_breakdown.hpp"
#include "sim/steady_state.hpp"
#include "topology/group_bandwidth.hpp"
#include "workload/moe_ops.hpp"

namespace parasim::sim {
namespace {

using workload::Collective;
using workload::Phase;
using workload::Task;
using workload::TaskGraph;
using workload::TaskKind;

constexpr std::int64_t kNever = -1;
constexpr std::uint32_t kNoActivity = UINT32_MAX;

// The clock counts picoseconds in 64 bits: about 106 days. An iteration that would run past 100 days
// comes from absurd input (a bandwidth of 1e-300 Gb/s, a sequence of 2^27 tokens on a 7B model); it is
// an error, never a wrapped clock (which gave MFU above 100%) or a loop that cannot advance.
constexpr double kClockLimitSeconds = 100 * 86400.0;

[[noreturn]] void clock_overflow(double seconds) {
  throw ClockOverflow({}, "simulation",
                   fmt::format("the iteration would run past {} days of simulated time (an activity of {:.3g} s): a bandwidth, a peak or a "
                               "size in the scenario is out of proportion",
                               kClockLimitSeconds / 86400, seconds));
}

// --full simulates each replica group's collective as its own flows, and the flows that share the
// network are solved together: time and memory grow faster than the transfers (every collective
// times its twins). Llama-3 405B's plan: 0.79 M transfers on 4,096 GPUs 4.7 s and 0.3 GB, 1.56 M on
// 8,192 73 s and 1.9 GB, 3.1 M on 16,384 past 23 minutes at 12.6 GB. The symmetric lowering is the
// tool at that size, and --full its check on smaller clusters.
constexpr std::size_t kFullTwinTransferLimit = 2'000'000;

void check_full_size(const workload::TaskGraph& g) {
  std::size_t transfers = 0;
  for (const auto& task : g.tasks) {
    if (task.kind == TaskKind::collective && task.bytes > 0 && g.groups[task.group].size() >= 2) transfers += g.twins[task.group].size();
  }
  if (transfers > kFullTwinTransferLimit) {
    throw InputError({}, "--full",
                     fmt::format("{} collective transfers over every replica group would each be simulated as their own flows (limit {}): "
                                 "that takes tens of minutes and gigabytes; run without --full (replicas folded by symmetry)",
                                 transfers, kFullTwinTransferLimit));
  }
}

std::int64_t to_ps(double seconds) {
  if (!(seconds < kClockLimitSeconds)) clock_overflow(seconds);
  return static_cast<std::int64_t>(std::ceil(seconds * 1e12));
}

// now + dt on the clock, or the error where it would pass the limit.
std::int64_t after(std::int64_t now_ps, double seconds) {
  const std::int64_t dt = std::max<std::int64_t>(0, to_ps(seconds));
  if (static_cast<double>(now_ps) * 1e-12 + seconds >= kClockLimitSeconds) clock_overflow(static_cast<double>(now_ps) * 1e-12 + seconds);
  return now_ps + dt;
}

class Replay {
 public:
  Replay(const SimInput& in, const SimOptions& opt)
      : in_(in),
        opt_(opt),
        g_(*in.graph),
        own_router_(in.router ? nullptr : std::make_unique<topology::Router>(*in.cluster)),
        lowering_(in.router ? *in.router : *own_router_, in.cost->profile()) {
    const std::size_t n = g_.tasks.size();
    waiting_.resize(n);
    start_.assign(n, kNever);
    finish_.assign(n, kNever);
    activity_of_.assign(n, kNoActivity);
    phase_.assign(n, 0);
    lowered_.assign(n, nullptr);
    transfer_start_.assign(n, kNever);
    // Dependents of each task (CSR), in ascending order.
    std::vector<std::uint32_t> count(n + 1, 0);
    for (std::uint32_t t = 0; t < n; ++t) {
      waiting_[t] = static_cast<std::int32_t>(g_.tasks[t].deps_end - g_.tasks[t].deps_begin);
      for (auto d : g_.dependencies(t)) ++count[d + 1];
    }
    for (std::size_t i = 1; i <= n; ++i) count[i] += count[i - 1];
    users_begin_ = count;
    users_.resize(count[n]);
    for (std::uint32_t t = 0; t < n; ++t) {
      for (auto d : g_.dependencies(t)) users_[count[d]++] = t;
    }
    // Compute time and dominant kind per (block, phase).
    block_time_.assign(g_.blocks.size() * 5, -1.0);
    block_kind_.assign(g_.blocks.size() * 5, calibrate::ComputeKind::gemm);
    stages_.resize(static_cast<std::size_t>(g_.stages));
    // Each stage's tasks, in id order, gathered once (a scan per stage is quadratic in long
    // pipelines), and room for their two interval ends each.
    tasks_by_stage_.resize(static_cast<std::size_t>(g_.stages));
    edges_by_stage_.resize(static_cast<std::size_t>(g_.stages));
    for (std::uint32_t t = 0; t < n; ++t) {
      const auto st = g_.tasks[t].stage;
      if (st >= 0 && st < g_.stages) tasks_by_stage_[static_cast<std::size_t>(st)].push_back(t);
    }
    for (std::size_t st = 0; st < tasks_by_stage_.size(); ++st) edges_by_stage_[st].reserve(2 * tasks_by_stage_[st].size());
    bytes_.resize(n);
    for (std::uint32_t t = 0; t < n; ++t) {
      bytes_[t] = g_.tasks[t].bytes * network_share(g_.tasks[t]);
      any_pipelined_ = any_pipelined_ || g_.tasks[t].pipelined;
    }
    // The fluid model's resources: classes of links no pattern tells apart (sim/link_classes.hpp);
    // under --full, where twins are lowered as they start, every directed link.
    if (opt.full) {
      for (std::size_t l = 0; l < in.cluster->link_count(); ++l) fluid_.add_resource(in.cluster->link(l).bandwidth.value());
    } else {
      classes_ = link_classes(*in.cluster, patterns());
      for (double capacity : classes_.capacities) fluid_.add_resource(capacity);
    }
  }

  // Every link pattern the collectives will use, lowered now in task order; each collective keeps
  // its lowering for when it starts (lower() keeps them).
  std::vector<const LinkUsage*> patterns() {
    std::vector<const LinkUsage*> out;
    std::unordered_set<const LinkUsage*> seen;
    for (std::uint32_t t = 0; t < g_.tasks.size(); ++t) {
      const Task& task = g_.tasks[t];
      if (task.kind != TaskKind::collective || task.bytes <= 0 || g_.groups[task.group].size() < 2) continue;
      const Lowering& lowering = lower(t);
      lowered_[t] = &lowering;
      for (const auto* p : lowering.phases) {
        if (seen.insert(p).second) out.push_back(p);
      }
    }
    return out;
  }

  const std::vector<FluidModel::Usage>& usage_of(const LinkUsage* p) const { return opt_.full ? p->usage : classes_.usage.at(p); }

  // A dispatcher that sends a token once per destination node (DeepEP) moves a share of the
  // all-to-all's routed copies: priced on the whole exchange, the network part that dominates it
  // (the NVLink forwarding inside the destination node is not priced apart).
  double network_share(const Task& task) {
    if (task.kind != TaskKind::collective || task.dim != workload::CommDim::ep || task.collective != workload::Collective::all_to_all) return 1;
    if (in_.training->moe_dispatcher != workload::MoeDispatcher::deepep) return 1;
    const auto nodes = topology::ranks_by_island(*in_.cluster, g_.twins[task.group].front()).size();
    return workload::dispatch_network_share(*in_.model, *in_.training, static_cast<int>(nodes));
  }

  Result run(Timeline* timeline) {
    std::vector<std::uint32_t> ready;
    for (std::uint32_t t = 0; t < g_.tasks.size(); ++t) {
      if (waiting_[t] == 0) ready.push_back(t);
    }
    start_all(ready);
    std::vector<FluidModel::ActivityId> done;
    while (finished_count_ < g_.tasks.size()) {
      const double dt = fluid_.next_completion();
      std::int64_t next = std::isfinite(dt) ? after(now_, dt) : INT64_MAX;
      if (!timers_.empty()) next = std::min(next, timers_.top().time);
      if (next == INT64_MAX) throw std::logic_error(stall_message());
      done.clear();
      fluid_.advance(static_cast<double>(next - now_) * 1e-12, done, 1e-12);
      now_ = next;
      ++events_;
      ready.clear();
      for (auto a : done) {
        const auto task = owner_[a];
        if (task == UINT32_MAX) continue;  // a twin's shadow traffic in --full: no task waits on it
        activity_of_[task] = kNoActivity;
        on_activity_done(task, ready);
      }
      while (!timers_.empty() && timers_.top().time == now_) {
        const auto task = timers_.top().task;
        timers_.pop();
        begin_transfer(task);
      }
      start_all(ready);
    }
    if (timeline) {
      timeline->start_ps = start_;
      timeline->finish_ps = finish_;
      timeline->transfers = std::move(transfers_);
    }
    return result();
  }

 private:
  struct Timer {
    std::int64_t time;
    std::uint64_t seq;
    std::uint32_t task;
    bool operator>(const Timer& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };
  struct StageState {
    std::int64_t compute = -1;               // running compute task
    std::vector<std::uint32_t> comms;        // collectives moving data
  };

  // --- task lifecycle ----------------------------------------------------------------------------
  void start_all(std::vector<std::uint32_t>& ready) {
    std::sort(ready.begin(), ready.end());
    // Starting can finish zero-cost tasks at once, which makes more tasks ready.
    for (std::size_t i = 0; i < ready.size(); ++i) start(ready[i], ready);
  }

  void start(std::uint32_t t, std::vector<std::uint32_t>& ready) {
    const Task& task = g_.tasks[t];
    start_[t] = now_;
    note_edge(task, 1);
    if (task.kind == TaskKind::compute) {
      const double seconds = compute_seconds(task);
      if (seconds <= 0) return finish(t, ready);
      const auto a = fluid_.start(seconds, {}, 1.0);
      bind(a, t);
      stages_[static_cast<std::size_t>(task.stage)].compute = t;
      update_overlap(task.stage);
      // TP collectives pipelined with this GEMM may run alongside it (overlap.tp_comm).
      for (auto i = users_begin_[t]; any_pipelined_ && i < users_begin_[t + 1]; ++i) {
        const auto u = users_[i];
        if (g_.tasks[u].kind == TaskKind::collective && g_.tasks[u].pipelined && --waiting_[u] == 0) ready.push_back(u);
      }
      return;
    }
    const auto& ranks = g_.groups[task.group];
    if (task.bytes <= 0 || ranks.size() < 2) return finish(t, ready);
    if (!lowered_[t]) lowered_[t] = &lower(t);
    phase_[t] = 0;
    wait_latency(t, true);
  }

  const Lowering& lower(std::uint32_t t) {
    const Task& task = g_.tasks[t];
    const auto& twins = g_.twins[task.group];
    if (!opt_.full) return lowering_.lower(task.collective, task.group, twins, bytes_[t]);
    // Every twin as its own transfer: lowered separately, each a phase of its own group key; the
    // collective finishes when the slowest twin does (all run in parallel as extra phases here).
    return lowering_.lower(task.collective, (static_cast<std::uint64_t>(task.group) << 20) | 0, workload::Twins(twins.front()), bytes_[t]);
  }

  void wait_latency(std::uint32_t t, bool first) {
    double latency = lowered_[t]->latencies[phase_[t]].value();
    if (first) latency += in_.cost->profile().collective_launch.value();
    timers_.push({after(now_, latency), timer_seq_++, t});
  }

  void begin_transfer(std::uint32_t t) {
    const Task& task = g_.tasks[t];
    const auto* p = lowered_[t]->phases[phase_[t]];
    const auto a = fluid_.start(bytes_[t] * p->bytes_factor, usage_of(p), FluidModel::kUnlimited, lowered_[t]->rate_scales[phase_[t]]);
    bind(a, t);
    auto& stage = stages_[static_cast<std::size_t>(task.stage)];
    stage.comms.push_back(t);
    transfer_start_[t] = now_;
    update_overlap(task.stage);
    if (opt_.full) start_twins(t);
  }

  // --full: the other twins' traffic as separate activities that load the same links; the
  // collective's own activity still paces it, and each twin finishes on its own.
  void start_twins(std::uint32_t t) {
    const Task& task = g_.tasks[t];
    const auto& twins = g_.twins[task.group];
    for (std::size_t i = 1; i < twins.size(); ++i) {
      const auto low = lowering_.lower(task.collective, (static_cast<std::uint64_t>(task.group) << 20) | i, workload::Twins(twins[i]), bytes_[t]);
      const auto* p = low.phases[std::min<std::size_t>(phase_[t], low.phases.size() - 1)];
      const auto a = fluid_.start(bytes_[t] * p->bytes_factor, p->usage);
      if (owner_.size() <= a) owner_.resize(a + 1, UINT32_MAX);
      owner_[a] = UINT32_MAX;  // shadow: no task waits on it
    }
  }

  void bind(FluidModel::ActivityId a, std::uint32_t t) {
    if (owner_.size() <= a) owner_.resize(a + 1, UINT32_MAX);
    owner_[a] = t;
    activity_of_[t] = a;
    ++activities_;
  }

  void on_activity_done(std::uint32_t t, std::vector<std::uint32_t>& ready) {
    const Task& task = g_.tasks[t];
    auto& stage = stages_[static_cast<std::size_t>(task.stage)];
    if (task.kind == TaskKind::compute) {
      stage.compute = -1;
      update_overlap(task.stage);
      return finish(t, ready);
    }
    stage.comms.erase(std::find(stage.comms.begin(), stage.comms.end(), t));
    update_overlap(task.stage);
    if (opt_.keep_timeline) {
      const auto* p = lowered_[t]->phases[phase_[t]];
      transfers_.push_back({t, transfer_start_[t], now_, p->usage});
    }
    if (++phase_[t] < lowered_[t]->phases.size()) return wait_latency(t, false);
    finish(t, ready);
  }

  // Edges are noted as the clock reaches them, so each stage's list is in time order without a sort
  // (edges at one instant bound no time, so their order there changes no sum).
  void note_edge(const Task& task, int delta) {
    if (task.stage < 0 || task.stage >= g_.stages) return;
    edges_by_stage_[static_cast<std::size_t>(task.stage)].push_back({now_, delta, task.kind == TaskKind::compute ? 0 : 1 + static_cast<int>(task.dim)});
  }

  void finish(std::uint32_t t, std::vector<std::uint32_t>& ready) {
    finish_[t] = now_;
    note_edge(g_.tasks[t], -1);
    ++finished_count_;
    const bool compute = any_pipelined_ && g_.tasks[t].kind == TaskKind::compute;
    for (auto i = users_begin_[t]; i < users_begin_[t + 1]; ++i) {
      const auto u = users_[i];
      if (compute && g_.tasks[u].kind == TaskKind::collective && g_.tasks[u].pipelined) continue;  // released at start
      if (--waiting_[u] == 0) ready.push_back(u);
    }
  }

  // --- overlap slowdown --------------------------------------------------------------------------
  // While a stage computes and moves data at once, the compute runs 1/(1 + σ(kind, fabric)) as
  // fast (the worst of the fabrics in flight) and each transfer 1/(1 + σ_comm(fabric)).
  void update_overlap(int stage_index) {
    const auto& profile = in_.cost->profile();
    auto& stage = stages_[static_cast<std::size_t>(stage_index)];
    const bool computing = stage.compute >= 0;
    double slowdown = 0;
    for (auto c : stage.comms) {
      const auto* p = lowered_[c]->phases[phase_[c]];
      if (activity_of_[c] != kNoActivity) {
        const double scale = lowered_[c]->rate_scales[phase_[c]];
        fluid_.set_efficiency(activity_of_[c], scale * (computing ? 1.0 / (1.0 + profile.comm_slowdown[static_cast<std::size_t>(p->fabric)]) : 1.0));
      }
      if (computing) slowdown = std::max(slowdown, profile.compute_slowdown_for(kind_of(g_.tasks[static_cast<std::size_t>(stage.compute)]), p->fabric));
    }
    if (computing) fluid_.set_cap(activity_of_[static_cast<std::size_t>(stage.compute)], 1.0 / (1.0 + slowdown));
  }

  std::size_t block_slot(const Task& t) const { return t.block * 5 + static_cast<std::size_t>(t.phase); }
  double compute_seconds(const Task& t) {
    auto& cached = block_time_[block_slot(t)];
    if (cached < 0) {
      const auto& ops = g_.ops(t);
      cached = in_.cost->ops_time(ops).value();
      block_kind_[block_slot(t)] = ops.empty() ? calibrate::ComputeKind::gemm : in_.cost->dominant_kind(ops);
    }
    return cached;
  }
  calibrate::ComputeKind kind_of(const Task& t) {
    compute_seconds(t);
    return block_kind_[block_slot(t)];
  }

  std::string stall_message() const {
    std::size_t stuck = 0;
    std::int64_t example = -1;
    for (std::uint32_t t = 0; t < g_.tasks.size(); ++t) {
      if (finish_[t] == kNever && start_[t] == kNever) {
        ++stuck;
        if (example < 0) example = t;
      }
    }
    // Name what the first stuck task waits for: a dependency that started and never finished points
    // at an activity without a rate, one that never started at a cycle.
    std::string waits;
    if (example >= 0) {
      const auto& task = g_.tasks[static_cast<std::size_t>(example)];
      waits = fmt::format(" ({} stage {} mb {} layer {})", task.kind == TaskKind::compute ? "compute" : "collective", task.stage, task.microbatch, task.layer);
      // Follow the first unfinished dependency to where the chain ends: a started task, or a cycle.
      std::vector<std::uint32_t> chain{static_cast<std::uint32_t>(example)};
      while (chain.size() < 5000) {
        std::int64_t next = -1;
        for (auto d : g_.dependencies(chain.back())) {
          if (finish_[d] == kNever) {
            next = d;
            break;
          }
        }
        if (next < 0) break;
        const bool seen = std::find(chain.begin(), chain.end(), static_cast<std::uint32_t>(next)) != chain.end();
        chain.push_back(static_cast<std::uint32_t>(next));
        if (seen) break;
      }
      const auto end = chain.back();
      const auto& dep = g_.tasks[end];
      waits += fmt::format("; through {} unfinished tasks it waits on task {} ({} stage {} stream {} mb {} chunk {} layer {}, {})", chain.size() - 1, end,
                           dep.kind == TaskKind::compute ? "compute" : "collective", dep.stage, static_cast<int>(dep.stream), dep.microbatch, dep.chunk,
                           dep.layer, start_[end] != kNever ? "started" : std::count(chain.begin(), chain.end(), end) > 1 ? "a cycle" : "never started");
    }
    return fmt::format("simulation stalled at {} ps: {} tasks never became ready (first: task {}{})", now_, stuck, example, waits);
  }

  // --- results -----------------------------------------------------------------------------------
  Result result() const;

  const SimInput& in_;
  const SimOptions& opt_;
  const TaskGraph& g_;
  std::unique_ptr<topology::Router> own_router_;
  CollectiveLowering lowering_;
  LinkClasses classes_;
  FluidModel fluid_;
  std::vector<std::int32_t> waiting_;
  std::vector<std::int64_t> start_, finish_;
  std::vector<std::uint32_t> activity_of_;
  std::vector<std::uint32_t> phase_;
  std::vector<const Lowering*> lowered_;  ///< kept by lowering_
  std::vector<double> bytes_;  ///< what each collective moves (its bytes, less what its dispatcher saves)
  std::vector<std::int64_t> transfer_start_;
  std::vector<std::uint32_t> users_begin_, users_;
  std::vector<std::uint32_t> owner_;
  std::vector<double> block_time_;
  std::vector<calibrate::ComputeKind> block_kind_;
  std::vector<StageState> stages_;
  bool any_pipelined_ = false;  ///< a collective runs pipelined with its GEMM (overlap.tp_comm)
  std::vector<std::vector<std::uint32_t>> tasks_by_stage_;  ///< per stage: its tasks, in id order
  std::vector<std::vector<StageEdge>> edges_by_stage_;      ///< per stage: its tasks' ends, in time order
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t timer_seq_ = 0;
  std::int64_t now_ = 0;
  std::size_t finished_count_ = 0;
  std::size_t events_ = 0;
  std::size_t activities_ = 0;
  std::vector<Timeline::Transfer> transfers_;
};

Result Replay::result() const {
  Result r;
  std::int64_t end = 0;
  for (auto f : finish_) end = std::max(end, f);
  r.iteration = Seconds(static_cast<double>(end) * 1e-12);
  const auto& plan = *in_.plan;
  const auto& tr = *in_.training;
  r.gpus = in_.cluster->gpu_count();
  r.hardware_flops = g_.total_flops();
  derive_rates(r, *in_.model, tr, plan, *in_.cost);
  for (int s = 0; s < g_.stages; ++s) {
    const auto i = static_cast<std::size_t>(s);
    r.stages.push_back(stage_breakdown(s, tasks_by_stage_[i], g_, TaskTimes{start_, finish_}, edges_by_stage_[i], end));
  }
  r.memory = workload::memory_per_stage(*in_.model, tr, plan, in_.cluster->spec().node.gpu.hbm_capacity);

  // Critical path: from the last task back through the dependency that finished last, summed by
  // what a task is (a block's phase, a dimension's collective), named once at the end.
  std::map<std::pair<int, int>, double> by_what;  // (block kind, phase) of compute; (-1 - dim, collective)
  std::int64_t t = static_cast<std::int64_t>(std::max_element(finish_.begin(), finish_.end()) - finish_.begin());
  while (t >= 0) {
    const Task& task = g_.tasks[static_cast<std::size_t>(t)];
    const auto what = task.kind == TaskKind::compute ? std::pair{static_cast<int>(g_.blocks[task.block].kind), static_cast<int>(task.phase)}
                                                     : std::pair{-1 - static_cast<int>(task.dim), static_cast<int>(task.collective)};
    by_what[what] += static_cast<double>(finish_[static_cast<std::size_t>(t)] - start_[static_cast<std::size_t>(t)]) * 1e-12;
    std::int64_t best = -1;
    for (auto d : g_.dependencies(static_cast<std::uint32_t>(t))) {
      if (best < 0 || finish_[d] > finish_[static_cast<std::size_t>(best)]) best = d;
    }
    t = best;
  }
  std::map<std::string, double> path;
  for (const auto& [what, seconds] : by_what) {
    const auto [a, b] = what;
    const std::string name = a >= 0 ? fmt::format("{} {}", workload::block_kind_name(static_cast<workload::BlockKind>(a)), workload::phase_name(static_cast<Phase>(b)))
                                    : fmt::format("{} {}", workload::comm_dim_name(static_cast<workload::CommDim>(-1 - a)),
                                                  workload::collective_name(static_cast<Collective>(b)));
    path[name] = seconds;
  }
  for (const auto& [what, seconds] : path) r.critical_path.push_back({what, Seconds(seconds)});
  std::stable_sort(r.critical_path.begin(), r.critical_path.end(), [](const CriticalItem& a, const CriticalItem& b) { return a.time > b.time; });
  r.tasks = g_.tasks.size();
  r.events = events_;
  r.activities = activities_;
  return r;
}

}  // namespace

void derive_rates(Result& r, const workload::ModelSpec& model, const workload::TrainingSpec& tr, const workload::Plan& plan,
                  const calibrate::CostModel& cost) {
  const double tokens = static_cast<double>(plan.global_batch) * tr.seq_len;
  r.samples_per_s = plan.global_batch / r.iteration.value();
  r.tokens_per_s = tokens / r.iteration.value();
  r.model_flops = workload::training_flops_per_token(model, tr.seq_len, plan.tp) * tokens;
  r.model_tflops_per_gpu = r.model_flops / r.iteration.value() / r.gpus / 1e12;
  const double peak = cost.peak(tr.precision).value();
  r.mfu = r.model_flops / r.iteration.value() / r.gpus / peak;
  r.hfu = r.hardware_flops / r.iteration.value() / r.gpus / peak;
}

Result simulate(const SimInput& input, const SimOptions& options, Timeline* timeline) {
  if (options.full) check_full_size(*input.graph);
  Replay replay(input, options);
  return replay.run(timeline);
}

Result simulate_plan(const SimInput& input, const SimOptions& options) {
  const auto& plan = *input.plan;
  // The replays walk the same routes: one router for them all unless the caller shares one.
  std::unique_ptr<topology::Router> own_router;
  if (!input.router) own_router = std::make_unique<topology::Router>(*input.cluster);
  auto replay = [&](const workload::Plan& p) {
    const auto graph = workload::build_tasks(*input.model, *input.training, p);
    SimInput in = input;
    if (own_router) in.router = own_router.get();
    in.plan = &p;
    in.graph = &graph;
    return simulate(in, options);
  };
  if (options.full || options.keep_timeline || options.full_replay) return replay(plan);
  for (const int warm_rounds : {2, 6}) {
    const auto runs = steady_runs(plan, warm_rounds);
    if (!runs) break;
    std::array<Result, 3> replays;
    try {
      for (std::size_t i = 0; i < replays.size(); ++i) {
        workload::Plan shorter = plan;
        shorter.global_batch = runs->micro_batches[i] * plan.micro_batch * plan.dp;
        replays[i] = replay(shorter);
      }
    } catch (const std::exception&) {
      break;  // a schedule that cannot run that few micro-batches (an odd count under DualPipe): whole
    }
    auto whole = extrapolate(replays, *runs);
    if (!whole) continue;
    derive_rates(*whole, *input.model, *input.training, plan, *input.cost);
    whole->memory = workload::memory_per_stage(*input.model, *input.training, plan, input.cluster->spec().node.gpu.hbm_capacity);
    return *whole;
  }
  return replay(plan);
}

}  // namespace parasim::sim
