#include "planner/search.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <numeric>
#include <thread>

#include "calibrate/cost_model.hpp"
#include "core/error.hpp"
#include "planner/analytic_cost.hpp"
#include "planner/megatron_rules.hpp"
#include "planner/deepspeed_rules.hpp"
#include "planner/torchtitan_rules.hpp"
#include "planner/partition.hpp"
#include "planner/recompute_choice.hpp"
#include "sim/simulator.hpp"
#include "topology/cluster.hpp"
#include "workload/memory.hpp"
#include "workload/chunk_placement.hpp"
#include "workload/pass_times.hpp"
#include "workload/schedule.hpp"
#include "workload/schedule_cache.hpp"
#include "workload/task_graph.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Recompute;
using workload::Schedule;

namespace {

struct Context {
  const workload::ModelSpec& model;
  const workload::TrainingSpec& training;
  const topology::ClusterSpec& cluster;
  AnalyticCost& cost;
  Bytes budget;
  workload::ScheduleCache& schedules;  // the search's built schedules, by shape (shared by its threads)
  ChunkCache& chunks;                  // the thread's balanced layer splits, by layer costs

  const std::vector<std::vector<workload::ScheduleStep>>& schedule(const Plan& p) {
    return schedules.get(workload::planned_shape(model, training, p));
  }
  // The last few reports: fitting the recompute asks again for plans it has just checked (the
  // estimate's plan is the one that fitted; Megatron-LM's forms start where the search's did).
  std::array<std::pair<Plan, workload::MemoryReport>, 4> recent;
  std::size_t recent_count = 0, recent_next = 0;

  // The last few estimates, for the same reason: choosing between recompute forms prices the one
  // kept, which the candidate's score prices again.
  std::array<std::pair<Plan, Estimate>, 2> recent_estimates;
  std::size_t estimates_count = 0, estimates_next = 0;

  const Estimate& estimate(const Plan& p) {
    for (std::size_t i = 0; i < estimates_count; ++i) {
      if (recent_estimates[i].first == p) return recent_estimates[i].second;
    }
    auto& slot = recent_estimates[estimates_next];
    estimates_next = (estimates_next + 1) % recent_estimates.size();
    estimates_count = std::min(recent_estimates.size(), estimates_count + 1);
    slot = {p, cost.estimate(p)};
    return slot.second;
  }

  const workload::MemoryReport& memory(const Plan& p) {
    for (std::size_t i = 0; i < recent_count; ++i) {
      if (recent[i].first == p) return recent[i].second;
    }
    auto& slot = recent[recent_next];
    recent_next = (recent_next + 1) % recent.size();
    recent_count = std::min(recent.size(), recent_count + 1);
    slot = {p, workload::memory_per_stage(model, training, p, budget, schedule(p))};
    return slot.second;
  }
};

// Micro-batch sets a stage holds, per local chunk, at its peak (uniform chunk sizes).
std::vector<int> in_flight_by_chunk(const std::vector<workload::ScheduleStep>& steps, std::size_t local_chunks) {
  std::vector<int> alive(local_chunks, 0), peak(alive);
  int total = 0, best = 0;
  for (const auto& step : steps) {
    auto& a = alive[static_cast<std::size_t>(step.chunk)];
    if (step.pass == workload::Pass::forward) {
      ++a;
      ++total;
    } else if (step.pass == workload::Pass::weight || !step.defers_weight) {
      --a;
      --total;
    }
    if (total > best) {
      best = total;
      peak = alive;
    }
  }
  return peak;
}

std::vector<workload::RecomputeOverride> to_overrides(const std::vector<Recompute>& per_layer) {
  std::vector<workload::RecomputeOverride> out;
  for (int l = 0; l < static_cast<int>(per_layer.size()); ++l) {
    const Recompute r = per_layer[static_cast<std::size_t>(l)];
    if (r == Recompute::none) continue;
    if (!out.empty() && out.back().last_layer == l - 1 && out.back().recompute == r) {
      out.back().last_layer = l;
    } else {
      out.push_back({l, l, r});
    }
  }
  return out;
}

// The options of each layer of stage `s` (none, selective, full: time added over the step, bytes
// kept at the peak) and the activation budget they share.
struct StageOptions {
  std::vector<std::vector<LayerOption>> options;
  std::vector<int> layers;
  double budget = 0;
};

// The plan's layer split and schedule, shared by its stages' options.
struct PlanLayout {
  std::vector<int> sizes, first;
  const std::vector<std::vector<workload::ScheduleStep>>& schedule;
};

StageOptions stage_options(Context& c, const Plan& p, const PlanLayout& layout, int s, const workload::StageMemory& st, double shrink) {
  const auto& sizes = layout.sizes;
  const auto& first = layout.first;
  const int m = p.micro_batches();
  const auto chunks = workload::stage_chunks(p, s);
  const auto flight = in_flight_by_chunk(layout.schedule[static_cast<std::size_t>(s)], chunks.size());
  StageOptions out;
  double largest_working = 0;
  for (std::size_t local = 0; local < chunks.size(); ++local) {
    const int chunk = chunks[local];
    const int k = flight[local];
    for (int l = first[static_cast<std::size_t>(chunk)]; l < first[static_cast<std::size_t>(chunk)] + sizes[static_cast<std::size_t>(chunk)]; ++l) {
      const auto& n = c.cost.layer(p, l, Recompute::none);
      const auto& sel = c.cost.layer(p, l, Recompute::selective);
      const auto& full = c.cost.layer(p, l, Recompute::full);
      largest_working = std::max(largest_working, n.kept_bytes);
      out.options.push_back({{0, k * n.kept_bytes}, {m * (sel.total() - n.total()), k * sel.kept_bytes}, {m * (full.total() - n.total()), k * full.kept_bytes}});
      out.layers.push_back(l);
    }
  }
  // What the stage holds besides its layers' activations: state, buffers, the ends' activations.
  double layer_activations = 0;
  for (const auto& o : out.options) layer_activations += o[0].bytes;
  // Without recompute the stage's working set is the larger of the loss's transients (the last
  // stage's) and a layer's backward gradients; with it, a recomputed layer joins the gradients: the
  // loss and a layer's backward come one after the other, not together.
  const double fixed_activations = std::max(0.0, st.activations.value() - st.recompute_working.value() - layer_activations);
  const double working = std::max(largest_working + st.backward_transient.value(), st.recompute_working.value());
  const double tensors = (c.budget.value() - workload::kFixedAllowanceBytes) / (1 + workload::kFragmentation);
  out.budget = tensors - (st.weights + st.gradients + st.optimizer + st.buffers).value() - fixed_activations - working - shrink;
  return out;
}

// Layer-wise: per stage, each layer's choice under that stage's activation budget, tightened where
// the whole does not fit yet.
std::optional<std::string> fit_layer_wise(Context& c, Plan& p, const workload::MemoryReport& none) {
  p.recompute = Recompute::none;
  const PlanLayout layout{workload::layers_per_chunk(p, c.model), workload::first_layer_of_chunk(p, c.model), c.schedule(p)};
  std::vector<Recompute> choice(static_cast<std::size_t>(c.model.layers), Recompute::none);
  std::vector<double> shrink(static_cast<std::size_t>(p.pp), 0.0);
  for (int attempt = 0; attempt < 4; ++attempt) {
    for (int s = 0; s < p.pp; ++s) {
      const auto stage = stage_options(c, p, layout, s, none.stages[static_cast<std::size_t>(s)], shrink[static_cast<std::size_t>(s)]);
      const auto picked = choose_within_budget(stage.options, stage.budget);
      if (!picked) return "out of memory even with full recompute";
      for (std::size_t i = 0; i < stage.layers.size(); ++i) {
        choice[static_cast<std::size_t>(stage.layers[i])] = static_cast<Recompute>((*picked)[i]);
      }
    }
    const bool uniform = std::all_of(choice.begin(), choice.end(), [&](Recompute r) { return r == choice.front(); });
    p.recompute = uniform ? choice.front() : Recompute::none;
    p.recompute_overrides = uniform ? std::vector<workload::RecomputeOverride>{} : to_overrides(choice);
    const auto check = c.memory(p);
    if (check.fits()) return std::nullopt;
    for (const auto& st : check.stages) {
      const double over = st.total().value() - c.budget.value();
      if (over > 0) shrink[static_cast<std::size_t>(st.stage)] += over * 1.25 + 64.0 * 1048576;
    }
  }
  return "out of memory even with full recompute";
}

// The faster of two recompute forms that fit, by the analytical estimate; nullopt counts as slowest.
void keep_faster(Context& c, Plan& p, const std::optional<Plan>& other) {
  if (other && c.estimate(*other).iteration < c.estimate(p).iteration) p = *other;
}

// Selective recompute by Megatron-Core's modules: the least recomputed rung of the model's ladder
// (workload/recompute_modules.hpp) that fits, or nullopt. The expert all-to-all overlap runs
// without the MoE part recomputed whole (TransformerConfig's checks).
std::optional<Plan> fit_recompute_modules(Context& c, Plan p) {
  if (!workload::recomputes_by_module(c.model, c.training)) return std::nullopt;
  p.recompute = Recompute::selective;
  for (const auto& modules : workload::recompute_module_ladder(c.model)) {
    if (p.overlap.ep_comm && modules.has(workload::RecomputeModule::moe)) continue;
    p.recompute_modules = modules;
    if (c.memory(p).fits()) return p;
  }
  return std::nullopt;
}

// Memory first: the cheapest recompute that fits, or the reason nothing does: none, selective, then
// the faster of the layer-wise choice of none, selective or full and selective by more modules.
std::optional<std::string> fit_recompute(Context& c, Plan& p) {
  p.recompute = Recompute::none;
  const auto none = c.memory(p);
  if (none.fits()) return std::nullopt;
  p.recompute = Recompute::selective;
  if (c.memory(p).fits()) return std::nullopt;
  const Plan selective = p;
  // Where full recompute of every layer does not fit, no lighter module set does.
  if (const auto why = fit_layer_wise(c, p, none)) return why;
  // A dense layer's only module beyond the attention core is its whole MLP, a trade the layer-wise
  // mix of none and full already spans (rerunning 60% of the layers whole frees what rerunning every
  // MLP does, for about the same time); the cheap rungs are MoE's and MLA's.
  if (c.model.is_moe() || c.model.is_mla()) keep_faster(c, p, fit_recompute_modules(c, selective));
  return std::nullopt;
}

// Memory first, in the forms Megatron-LM's arguments take: no recompute, selective (its default
// modules), then the faster of selective by more modules and the first k layers of every chunk in
// full (method block, the smallest k that fits; every layer at most).
std::optional<std::string> fit_megatron_recompute(Context& c, Plan& p) {
  auto fits = [&]() { return c.memory(p).fits(); };
  p.recompute_overrides.clear();
  p.recompute_method = workload::RecomputeMethod::uniform;
  p.recompute_layers = 1;
  p.recompute_modules = workload::RecomputeModules();
  for (auto r : {Recompute::none, Recompute::selective}) {
    p.recompute = r;
    if (fits()) return std::nullopt;
  }
  const Plan selective = p;
  p.recompute = Recompute::full;
  // Where full recompute does not fit, no lighter module set does.
  if (!fits()) return "out of memory even with full recompute";
  const auto by_module = fit_recompute_modules(c, selective);
  const auto sizes = workload::layers_per_chunk(p, c.model);
  p.recompute_method = workload::RecomputeMethod::block;
  int lo = 0, hi = *std::max_element(sizes.begin(), sizes.end());  // block hi = every layer: fits
  while (hi - lo > 1) {
    p.recompute_layers = (lo + hi) / 2;
    (fits() ? hi : lo) = p.recompute_layers;
  }
  p.recompute_layers = hi;
  keep_faster(c, p, by_module);
  return std::nullopt;
}

// Memory first, in the forms torchtitan's activation checkpointing and Megatron-DeepSpeed's
// arguments take alike: none, selective, every layer in full.
std::optional<std::string> fit_uniform_recompute(Context& c, Plan& p) {
  p.recompute_overrides.clear();
  p.recompute_method = workload::RecomputeMethod::uniform;
  p.recompute_layers = 1;
  for (auto r : {Recompute::none, Recompute::selective, Recompute::full}) {
    p.recompute = r;
    if (c.memory(p).fits()) return std::nullopt;
  }
  return "out of memory even with full recompute";
}

struct Scored {
  Plan plan;
  Estimate estimate;
  double memory = 0;
  std::size_t order = 0;
};

// What the scan makes of one candidate.
struct Outcome {
  bool visited = false;
  std::optional<Scored> scored;    ///< the candidate as the search fits it
  std::optional<Scored> megatron;  ///< the candidate as the search restricted to Megatron-LM fits it, if it can
  std::string rejected;
  double footprint = 0;  ///< rejected for memory: the peak with every layer recomputed
};

Scored make_scored(Context& c, const Plan& p, std::size_t order) {
  const auto mem = c.memory(p);
  return Scored{p, c.estimate(p), mem.stages[static_cast<std::size_t>(mem.worst_stage)].total().value(), order};
}

// One candidate: stages balanced by cost, Megatron-LM's plan checks, memory first, the analytical
// estimate. Under framework megatron only what it runs; otherwise also the candidate as Megatron-LM
// runs it, its recompute fitted in the forms its arguments say (the launch is chosen among those).
void scan_candidate(Context& c, Plan p, std::size_t index, int gpus, Constraints::Framework framework, bool megatron_forms, Outcome& out) {
  const bool megatron_only = framework == Constraints::Framework::megatron;
  if (p.pp > 1) {
    std::vector<double> layer_time;
    for (int l = 0; l < c.model.layers; ++l) layer_time.push_back(c.cost.layer(p, l, Recompute::none).total());
    p.chunk_layers = c.chunks.get(layer_time, p.pp, p.vpp, c.cost.embedding_time(p), c.cost.head_time(p));
  }
  if (const auto problem = workload::find_plan_problem(p, c.model, gpus, c.training.seq_len)) {
    out.rejected = fmt::format("invalid plan ({})", problem->key);
    return;
  }
  const Plan balanced = p;
  const auto oom = megatron_only                                      ? fit_megatron_recompute(c, p)
                   : framework != Constraints::Framework::any         ? fit_uniform_recompute(c, p)
                                                                     : fit_recompute(c, p);
  if (oom) {
    out.rejected = *oom;
    Plan full = balanced;
    full.recompute = Recompute::full;
    full.recompute_method = workload::RecomputeMethod::uniform;
    full.recompute_layers = 1;
    full.recompute_overrides.clear();
    out.footprint = c.memory(full).peak().value();
    return;
  }
  const auto why = megatron_plan_problem(p, c.model);
  if (megatron_only && why) {
    out.rejected = "Megatron-LM cannot run it: " + *why;
    return;
  }
  out.scored = make_scored(c, p, index);
  if (megatron_only) {
    out.megatron = out.scored;
    return;
  }
  // As the search restricted to Megatron-LM would fit it, so that both orders agree.
  if (!megatron_forms || megatron_structure_problem(p) || megatron_model_problem(c.model)) return;
  Plan form = balanced;
  if (fit_megatron_recompute(c, form)) return;
  out.megatron = form == p ? out.scored : make_scored(c, form, index);
}

// Whether Megatron-LM runs the fastest simulated plan that fits (false when none fits).
bool fastest_fitting_runs_on_megatron(const std::vector<RankedPlan>& simulated, const workload::ModelSpec& model) {
  const RankedPlan* fastest = nullptr;
  for (const auto& r : simulated) {
    if (r.fits && (!fastest || r.simulated.iteration < fastest->simulated.iteration)) fastest = &r;
  }
  return fastest && !megatron_plan_problem(fastest->plan, model);
}

bool analytically_first(const Scored& a, const Scored& b) {
  if (a.estimate.iteration != b.estimate.iteration) return a.estimate.iteration < b.estimate.iteration;
  if (a.memory != b.memory) return a.memory < b.memory;
  return a.order < b.order;
}

}  // namespace

namespace {

using Clock = std::chrono::steady_clock;

// What the phases of one search share: the cluster and its one router (every thread's oracle and
// every simulation reuse its routes), the cost model, the clock, and the lock progress reports take.
class SearchRun {
 public:
  SearchRun(const topology::ClusterSpec& spec, const workload::ModelSpec& model, const workload::TrainingSpec& training,
            const calibrate::Profile& profile, const SearchOptions& options, SearchReport& report)
      : spec_(spec),
        model_(model),
        training_(training),
        options_(options),
        report_(report),
        started_(Clock::now()),
        cluster_(spec),
        cost_(spec.node.gpu, profile),
        router_(cluster_),
        analytic_(router_, model, training, cost_),
        threads_(std::max(1, options.threads)),
        deadline_(after(options.time_limit)),
        scan_deadline_(after(options.time_limit / 2)),
        megatron_only_(options.constraints.framework == Constraints::Framework::megatron),
        // The launch under torchtitan or Megatron-DeepSpeed is theirs: no Megatron-LM variants to rank.
        other_launch_(options.constraints.framework == Constraints::Framework::torchtitan ||
                      options.constraints.framework == Constraints::Framework::deepspeed) {}

  double seconds() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }
  bool cut() const { return cut_; }

  std::vector<Outcome> scan(const std::vector<Plan>& global);
  /// The analytical best K and every plan given, for the simulator.
  std::vector<RankedPlan> to_simulate(const std::vector<Scored>& scored);
  /// Simulates a batch on every thread; the plans the time limit left out are dropped.
  std::vector<RankedPlan> simulate(std::vector<RankedPlan> batch);
  /// The launch is the fastest plan Megatron-LM runs: when the fastest simulated plan that fits is not
  /// one, the best K as Megatron-LM runs them (what --framework megatron would simulate), else none.
  std::vector<RankedPlan> megatron_variants(const std::vector<Scored>& runnable, const std::vector<RankedPlan>& chosen) const;

 private:
  Clock::time_point after(double seconds) const {
    return started_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  }
  bool past(Clock::time_point t) const { return options_.time_limit > 0 && Clock::now() > t; }
  void scan_on(AnalyticCost& oracle, const std::vector<Plan>& global, std::size_t stride, std::vector<Outcome>& outcomes);
  void report_progress(const char* phase, std::size_t& done, std::size_t total, bool every);

  const topology::ClusterSpec& spec_;
  const workload::ModelSpec& model_;
  const workload::TrainingSpec& training_;
  const SearchOptions& options_;
  SearchReport& report_;
  const Clock::time_point started_;
  const topology::Cluster cluster_;
  const calibrate::CostModel cost_;
  const topology::Router router_;
  AnalyticCost analytic_;
  const int threads_;
  const Clock::time_point deadline_, scan_deadline_;
  const bool megatron_only_, other_launch_;
  workload::ScheduleCache schedules_;
  std::atomic<std::size_t> next_visit_{0};
  std::size_t visited_ = 0;  // under progress_mutex_
  std::atomic<bool> cut_{false};
  std::mutex progress_mutex_;
};

// Counted under the lock that reports it, so the reports rise and the last says all are done
// whichever thread finishes last; `every` reports each item, else every 64th and the last.
void SearchRun::report_progress(const char* phase, std::size_t& done, std::size_t total, bool every) {
  if (!options_.progress) return;
  std::lock_guard lock(progress_mutex_);
  const std::size_t d = ++done;
  if (every || d % 64 == 0 || d == total) options_.progress(phase, d, total);
}

void SearchRun::scan_on(AnalyticCost& oracle, const std::vector<Plan>& global, std::size_t stride, std::vector<Outcome>& outcomes) {
  ChunkCache chunks;
  Context c{model_, training_, spec_, oracle, report_.budget, schedules_, chunks, {}, 0, 0, {}, 0, 0};
  const bool megatron_forms = options_.megatron_variants && !other_launch_;
  for (std::size_t k = next_visit_++; k < global.size(); k = next_visit_++) {
    if (past(scan_deadline_)) {
      cut_ = true;
      break;
    }
    const std::size_t i = (k * stride) % global.size();
    auto& out = outcomes[i];
    out.visited = true;
    scan_candidate(c, global[i], i, spec_.gpus(), options_.constraints.framework, megatron_forms, out);
    report_progress("analytical", visited_, global.size(), false);
  }
}

// The analytical scan, on every thread, each with its own oracle (its caches are not shared). The
// candidates are visited in a spread order (a stride coprime with their count) so that a scan cut
// short by the time limit has seen every region of the space; each outcome is kept at its index,
// so the merged result does not depend on the thread count.
std::vector<Outcome> SearchRun::scan(const std::vector<Plan>& global) {
  std::size_t stride = 1;
  if (global.size() > 2) {
    stride = static_cast<std::size_t>(static_cast<double>(global.size()) * 0.6180339887);
    while (std::gcd(stride, global.size()) != 1) ++stride;
  }
  std::vector<Outcome> outcomes(global.size());
  std::vector<std::unique_ptr<AnalyticCost>> oracles;
  for (int t = 1; t < threads_; ++t) oracles.push_back(std::make_unique<AnalyticCost>(router_, model_, training_, cost_));
  std::vector<std::exception_ptr> failed(static_cast<std::size_t>(threads_));
  auto run = [&](int t) {
    try {
      scan_on(t == 0 ? analytic_ : *oracles[static_cast<std::size_t>(t - 1)], global, stride, outcomes);
    } catch (...) {
      failed[static_cast<std::size_t>(t)] = std::current_exception();
      next_visit_ = global.size();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads_; ++t) pool.emplace_back(run, t);
  run(0);
  for (auto& t : pool) t.join();
  for (const auto& f : failed) {
    if (f) std::rethrow_exception(f);
  }
  return outcomes;
}

std::vector<RankedPlan> SearchRun::to_simulate(const std::vector<Scored>& scored) {
  std::vector<RankedPlan> chosen;
  for (std::size_t i = 0; i < scored.size() && static_cast<int>(i) < options_.simulate_top; ++i) {
    RankedPlan r;
    r.plan = scored[i].plan;
    r.estimate = scored[i].estimate;
    r.analytical_rank = static_cast<int>(i);
    chosen.push_back(std::move(r));
  }
  for (const auto& given : options_.include) {
    if (const auto problem = workload::find_plan_problem(given, model_, spec_.gpus(), training_.seq_len)) {
      report_.unusable.push_back({given, fmt::format("{}: {}", problem->key, problem->message)});
      continue;
    }
    const auto same = std::find_if(chosen.begin(), chosen.end(), [&](const RankedPlan& r) { return r.plan == given; });
    if (same != chosen.end()) {
      same->included = true;
      continue;
    }
    RankedPlan r;
    r.plan = given;
    r.estimate = analytic_.estimate(given);
    r.included = true;
    chosen.push_back(std::move(r));
  }
  return chosen;
}

// An exception must not leave a worker thread (std::terminate): each is kept with its plan, and
// after the join a given plan that cannot be simulated is reported unusable, while a searched
// one (a bug) is rethrown on this thread, the first by rank so that the message is deterministic.
std::vector<RankedPlan> SearchRun::simulate(std::vector<RankedPlan> batch) {
  if (batch.empty()) return batch;
  const auto sim_started = Clock::now();
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;  // under progress_mutex_
  std::vector<std::exception_ptr> failure(batch.size());
  std::vector<char> skipped(batch.size(), 0);
  auto worker = [&]() {
    for (std::size_t i = next++; i < batch.size(); i = next++) {
      auto& r = batch[i];
      if (!r.included && past(deadline_)) {
        cut_ = true;
        skipped[i] = 1;
        continue;
      }
      try {
        const sim::SimInput in{&cluster_, &model_, &training_, &r.plan, nullptr, &cost_, &router_};
        r.simulated = sim::simulate_plan(in);
        r.fits = workload::memory_per_stage(model_, training_, r.plan, report_.budget).fits();
      } catch (...) {
        failure[i] = std::current_exception();
      }
      report_progress("simulated", done, batch.size(), true);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads_; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  report_.simulated_seconds += std::chrono::duration<double>(Clock::now() - sim_started).count();
  std::vector<RankedPlan> simulated;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (skipped[i]) continue;
    if (!failure[i]) {
      simulated.push_back(std::move(batch[i]));
      continue;
    }
    try {
      std::rethrow_exception(failure[i]);
    } catch (const InputError&) {
      throw;  // the scenario's values (an iteration past the clock), not a fault of the search
    } catch (const std::exception& e) {
      if (!batch[i].included || batch[i].analytical_rank >= 0) throw std::runtime_error(fmt::format("simulating {}: {}", plan_name(batch[i].plan), e.what()));
      report_.unusable.push_back({batch[i].plan, e.what()});
    }
  }
  return simulated;
}

std::vector<RankedPlan> SearchRun::megatron_variants(const std::vector<Scored>& runnable, const std::vector<RankedPlan>& chosen) const {
  std::vector<RankedPlan> batch;
  if (!options_.megatron_variants || megatron_only_ || other_launch_ || fastest_fitting_runs_on_megatron(chosen, model_)) return batch;
  for (std::size_t j = 0; j < runnable.size() && static_cast<int>(j) < options_.simulate_top; ++j) {
    if (std::any_of(chosen.begin(), chosen.end(), [&](const RankedPlan& r) { return r.plan == runnable[j].plan; })) continue;
    RankedPlan r;
    r.plan = runnable[j].plan;
    r.estimate = runnable[j].estimate;
    r.megatron_rank = static_cast<int>(j);
    batch.push_back(std::move(r));
  }
  return batch;
}

// The scan's outcomes in two orders of the same candidates: as the search fits them (`scored`), and
// as Megatron-LM runs them (`runnable`), each analytically best first; the rejections counted.
void tally(std::vector<Outcome>& outcomes, SearchReport& report, std::vector<Scored>& scored, std::vector<Scored>& runnable) {
  for (auto& out : outcomes) {
    if (!out.visited) continue;
    ++report.visited;
    if (!out.scored) {
      ++report.rejected[out.rejected];
      if (out.footprint > 0 && (!report.smallest_footprint || out.footprint < report.smallest_footprint->value())) {
        report.smallest_footprint = Bytes(out.footprint);
      }
      continue;
    }
    if (out.megatron) runnable.push_back(std::move(*out.megatron));
    scored.push_back(std::move(*out.scored));
  }
  report.scored = scored.size();
  std::stable_sort(scored.begin(), scored.end(), analytically_first);
  std::stable_sort(runnable.begin(), runnable.end(), analytically_first);
}

// Plans that fit first, then by simulated time, peak memory and analytical rank.
void rank_simulated(std::vector<RankedPlan>& chosen) {
  auto peak = [](const RankedPlan& r) { return r.simulated.memory.peak().value(); };
  std::stable_sort(chosen.begin(), chosen.end(), [&](const RankedPlan& a, const RankedPlan& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.simulated.iteration != b.simulated.iteration) return a.simulated.iteration < b.simulated.iteration;
    if (peak(a) != peak(b)) return peak(a) < peak(b);
    return a.analytical_rank < b.analytical_rank;
  });
}

// How often the analytical order disagrees with the simulator's, over the searched candidates.
void count_discordance(const std::vector<RankedPlan>& ranked, SearchReport& report) {
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    for (std::size_t j = i + 1; j < ranked.size(); ++j) {
      const auto& a = ranked[i];
      const auto& b = ranked[j];
      if (a.analytical_rank < 0 || b.analytical_rank < 0 || !a.fits || !b.fits) continue;
      if (a.simulated.iteration == b.simulated.iteration) continue;
      ++report.pairs;
      const bool discordant = a.analytical_rank > b.analytical_rank;
      if (discordant) ++report.discordant;
      if (b.simulated.iteration.value() > 1.02 * a.simulated.iteration.value()) {
        ++report.distinct_pairs;
        if (discordant) ++report.distinct_discordant;
      }
    }
  }
}

}  // namespace

SearchReport search(const topology::ClusterSpec& spec, const workload::ModelSpec& model, const workload::TrainingSpec& training, int global_batch,
                    const calibrate::Profile& profile, const SearchOptions& options) {
  SearchReport report;
  report.capacity = spec.node.gpu.hbm_capacity;
  report.budget = Bytes(std::max(0.0, (report.capacity - options.headroom).value()));
  SearchRun run(spec, model, training, profile, options, report);

  const auto global = global_candidates(spec, model, training, global_batch, options);
  report.considered = global.size();
  auto outcomes = run.scan(global);
  std::vector<Scored> scored, runnable;
  tally(outcomes, report, scored, runnable);
  report.analytical_seconds = run.seconds();

  auto chosen = run.simulate(run.to_simulate(scored));
  for (auto& r : run.simulate(run.megatron_variants(runnable, chosen))) chosen.push_back(std::move(r));
  report.time_limited = run.cut();
  rank_simulated(chosen);
  count_discordance(chosen, report);
  report.ranked = std::move(chosen);
  return report;
}

}  // namespace parasim::planner
