#include "planner/search.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <mutex>
#include <numeric>
#include <thread>

#include "calibrate/cost_model.hpp"
#include "planner/analytic_cost.hpp"
#include "planner/partition.hpp"
#include "planner/recompute_choice.hpp"
#include "sim/simulator.hpp"
#include "topology/cluster.hpp"
#include "workload/memory.hpp"
#include "workload/schedule.hpp"
#include "workload/task_graph.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Recompute;
using workload::Schedule;

std::string plan_name(const Plan& p) {
  std::string out = fmt::format("tp{}{}", p.tp, p.sp ? " sp" : "");
  if (p.cp > 1) out += fmt::format(" · cp{} {}", p.cp, workload::cp_kind_name(p.cp_kind));
  out += fmt::format(" · pp{}", p.pp);
  if (p.pp > 1) out += fmt::format("{} {}", p.vpp > 1 ? fmt::format(" vpp{}", p.vpp) : "", workload::schedule_name(p.schedule));
  if (!p.chunk_layers.empty()) {
    std::string split;
    for (int n : p.chunk_layers) split += fmt::format("{}{}", split.empty() ? "" : ",", n);
    out += fmt::format(" [{}]", split);
  }
  out += fmt::format(" · dp{}", p.dp);
  if (p.ep > 1) out += fmt::format(" ep{}", p.ep);
  if (p.zero > 0) out += fmt::format(" zero{}", p.zero);
  if (p.zero_group > 0) out += fmt::format("/{}", p.zero_group);
  const auto order = workload::full_order(p.order);
  if (p.tp > 1 && p.dp > 1 && order.front() == workload::ParallelDim::dp) out += " (dp inner)";
  out += fmt::format(" · mb{}", p.micro_batch);
  if (!p.recompute_overrides.empty()) {
    int full = 0, selective = 0;
    for (const auto& o : p.recompute_overrides) {
      (o.recompute == Recompute::full ? full : selective) += o.last_layer - o.first_layer + 1;
    }
    out += fmt::format(" · recompute {} full, {} selective", full, selective);
  } else if (p.recompute != Recompute::none) {
    out += fmt::format(" · recompute {}", workload::recompute_name(p.recompute));
    if (p.recompute == Recompute::full && p.recompute_method == workload::RecomputeMethod::block) out += fmt::format(" block {}", p.recompute_layers);
  }
  return out;
}

namespace {

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}
bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

struct Context {
  const workload::ModelSpec& model;
  const workload::TrainingSpec& training;
  const topology::ClusterSpec& cluster;
  AnalyticCost& cost;
  Bytes budget;
};

// Micro-batch sets a stage holds, per local chunk, at its peak (uniform chunk sizes).
std::vector<int> in_flight_by_chunk(const Plan& p, int stage) {
  std::vector<int> alive(static_cast<std::size_t>(p.vpp), 0), peak(alive);
  int total = 0, best = 0;
  const auto frees = workload::defers_weights(p.schedule) ? workload::Pass::weight : workload::Pass::backward;
  for (const auto& step : workload::stage_schedule(p.schedule, p.pp, p.vpp, stage, p.micro_batches())) {
    auto& a = alive[static_cast<std::size_t>(step.chunk)];
    if (step.pass == workload::Pass::forward) {
      ++a;
      ++total;
    } else if (step.pass == frees) {
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

// Memory first: the cheapest recompute that fits, or the reason nothing does.
std::optional<std::string> fit_recompute(Context& c, Plan& p) {
  auto report = [&](const Plan& q) { return workload::memory_per_stage(c.model, c.training, q, c.budget); };
  p.recompute = Recompute::none;
  auto none = report(p);
  if (none.fits()) return std::nullopt;
  p.recompute = Recompute::selective;
  if (report(p).fits()) return std::nullopt;

  // Layer-wise: per stage, each layer's choice under that stage's activation budget.
  p.recompute = Recompute::none;
  const auto sizes = workload::layers_per_chunk(p, c.model);
  const auto first = workload::first_layer_of_chunk(p, c.model);
  const int m = p.micro_batches();
  std::vector<Recompute> choice(static_cast<std::size_t>(c.model.layers), Recompute::none);
  std::vector<double> shrink(static_cast<std::size_t>(p.pp), 0.0);
  for (int attempt = 0; attempt < 4; ++attempt) {
    for (int s = 0; s < p.pp; ++s) {
      const auto& st = none.stages[static_cast<std::size_t>(s)];
      const auto flight = in_flight_by_chunk(p, s);
      std::vector<std::vector<LayerOption>> options;
      std::vector<int> layers;
      double largest_working = 0, fixed_activations = 0;
      for (int local = 0; local < p.vpp; ++local) {
        const int chunk = local * p.pp + s;
        const int k = flight[static_cast<std::size_t>(local)];
        for (int l = first[static_cast<std::size_t>(chunk)]; l < first[static_cast<std::size_t>(chunk)] + sizes[static_cast<std::size_t>(chunk)]; ++l) {
          const auto& n = c.cost.layer(p, l, Recompute::none);
          const auto& sel = c.cost.layer(p, l, Recompute::selective);
          const auto& full = c.cost.layer(p, l, Recompute::full);
          largest_working = std::max(largest_working, n.kept_bytes);
          options.push_back({{0, k * n.kept_bytes}, {m * (sel.total() - n.total()), k * sel.kept_bytes}, {m * (full.total() - n.total()), k * full.kept_bytes}});
          layers.push_back(l);
        }
      }
      // What the stage holds besides its layers' activations: state, buffers, the ends' activations.
      double layer_activations = 0;
      for (const auto& o : options) layer_activations += o[0].bytes;
      fixed_activations = std::max(0.0, st.activations.value() - layer_activations);
      const double tensors = (c.budget.value() - workload::kFixedAllowanceBytes) / (1 + workload::kFragmentation);
      const double budget = tensors - (st.weights + st.gradients + st.optimizer + st.buffers).value() - fixed_activations - largest_working -
                            shrink[static_cast<std::size_t>(s)];
      const auto picked = choose_within_budget(options, budget);
      if (!picked) return "out of memory even with full recompute";
      for (std::size_t i = 0; i < layers.size(); ++i) {
        choice[static_cast<std::size_t>(layers[i])] = static_cast<Recompute>((*picked)[i]);
      }
    }
    const bool uniform = std::all_of(choice.begin(), choice.end(), [&](Recompute r) { return r == choice.front(); });
    p.recompute = uniform ? choice.front() : Recompute::none;
    p.recompute_overrides = uniform ? std::vector<workload::RecomputeOverride>{} : to_overrides(choice);
    const auto check = report(p);
    if (check.fits()) return std::nullopt;
    for (const auto& st : check.stages) {
      const double over = st.total().value() - c.budget.value();
      if (over > 0) shrink[static_cast<std::size_t>(st.stage)] += over * 1.25 + 64.0 * 1048576;
    }
  }
  return "out of memory even with full recompute";
}

struct Scored {
  Plan plan;
  Estimate estimate;
  double memory = 0;
  std::size_t order = 0;
};

}  // namespace

SearchReport search(const topology::ClusterSpec& spec, const workload::ModelSpec& model, const workload::TrainingSpec& training, int global_batch,
                    const calibrate::Profile& profile, const SearchOptions& options) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  SearchReport report;
  const int gpus = spec.gpus();
  const int island = std::min(spec.node.gpus, gpus);
  report.capacity = spec.node.gpu.hbm_capacity;
  report.budget = Bytes(std::max(0.0, (report.capacity - options.headroom).value()));

  const topology::Cluster cluster(spec);
  const calibrate::CostModel cost(spec.node.gpu, profile);
  AnalyticCost analytic(cluster, model, training, cost);
  Context ctx{model, training, spec, analytic, report.budget};

  // Global choices.
  std::vector<Plan> global;
  for (int pp : divisors(gpus)) {
    if (pp > model.layers || (options.power_of_two && !power_of_two(pp))) continue;
    for (int tp = 1; tp <= island && gpus % (pp * tp) == 0; tp *= 2) {
      std::vector<std::pair<int, workload::CpKind>> cps{{1, workload::CpKind::ring}};
      if (training.seq_len >= 8192) {
        for (int cp = 2; cp <= gpus / (pp * tp) && training.seq_len / cp >= 1024; cp *= 2) {
          if (gpus % (pp * tp * cp) != 0) continue;
          cps.push_back({cp, workload::CpKind::ring});
          cps.push_back({cp, workload::CpKind::ulysses});
        }
      }
      for (const auto& [cp, kind] : cps) {
        const int dp = gpus / (pp * tp * cp);
        if (options.power_of_two && !power_of_two(dp)) continue;
        std::vector<int> eps{1};
        if (model.is_moe()) {
          for (int ep : divisors(model.experts)) {
            if (ep > 1 && (dp * cp) % ep == 0) eps.push_back(ep);
          }
        }
        const int per_replica = global_batch % dp == 0 ? global_batch / dp : 0;
        std::vector<int> mbs = options.micro_batches;
        if (mbs.empty()) {
          for (int mb = 1; mb <= 16; mb *= 2) mbs.push_back(mb);
        }
        for (int ep : eps) {
          for (int zero = 0; zero <= (dp * cp > 1 ? 3 : 0); ++zero) {
            for (bool dp_inner : {false, true}) {
              if (dp_inner && (tp == 1 || dp == 1)) continue;
              for (int mb : mbs) {
                if (per_replica == 0 || per_replica % mb != 0) continue;
                const int micro = per_replica / mb;
                std::vector<std::pair<Schedule, int>> schedules{{Schedule::one_f_one_b, 1}};
                if (pp > 1) {
                  schedules.push_back({Schedule::zb_h1, 1});
                  for (int v = 2; v * pp <= model.layers && v <= 16; ++v) {
                    if (model.layers % (pp * v) != 0 && model.layers % pp == 0) continue;
                    if (micro % pp != 0) continue;
                    schedules.push_back({Schedule::interleaved_1f1b, v});
                  }
                }
                for (const auto& [schedule, vpp] : schedules) {
                  Plan p;
                  p.tp = tp;
                  p.sp = tp > 1;
                  p.pp = pp;
                  p.vpp = vpp;
                  p.dp = dp;
                  p.cp = cp;
                  p.cp_kind = kind;
                  p.ep = ep;
                  p.schedule = schedule;
                  p.zero = zero;
                  p.micro_batch = mb;
                  p.global_batch = global_batch;
                  p.overlap.grad_reduce = true;
                  p.overlap.param_gather = true;
                  if (dp_inner) p.order = {workload::ParallelDim::dp, workload::ParallelDim::tp, workload::ParallelDim::cp, workload::ParallelDim::pp};
                  global.push_back(std::move(p));
                }
              }
            }
          }
        }
      }
    }
  }
  report.considered = global.size();

  std::vector<Scored> scored;
  for (std::size_t i = 0; i < global.size(); ++i) {
    if (options.progress && (i % 64 == 0 || i + 1 == global.size())) options.progress("analytical", i + 1, global.size());
    Plan p = global[i];
    // Stages balanced by cost (the layers' time without recompute).
    if (p.pp > 1) {
      std::vector<double> layer_time;
      for (int l = 0; l < model.layers; ++l) layer_time.push_back(analytic.layer(p, l, Recompute::none).total());
      p.chunk_layers = balanced_chunks(layer_time, p.pp, p.vpp, analytic.embedding_time(p), analytic.head_time(p));
    }
    if (const auto problem = workload::find_plan_problem(p, model, gpus, training.seq_len)) {
      ++report.rejected[fmt::format("invalid plan ({})", problem->key)];
      continue;
    }
    if (const auto oom = fit_recompute(ctx, p)) {
      ++report.rejected[*oom];
      continue;
    }
    const auto mem = workload::memory_per_stage(model, training, p, report.budget);
    scored.push_back({p, analytic.estimate(p), mem.stages[static_cast<std::size_t>(mem.worst_stage)].total().value(), i});
  }
  report.scored = scored.size();
  std::stable_sort(scored.begin(), scored.end(), [](const Scored& a, const Scored& b) {
    if (a.estimate.iteration != b.estimate.iteration) return a.estimate.iteration < b.estimate.iteration;
    if (a.memory != b.memory) return a.memory < b.memory;
    return a.order < b.order;
  });
  report.analytical_seconds = std::chrono::duration<double>(clock::now() - started).count();

  // The simulator's turn: the analytical best K and every plan given.
  std::vector<RankedPlan> chosen;
  for (std::size_t i = 0; i < scored.size() && static_cast<int>(i) < options.simulate_top; ++i) {
    RankedPlan r;
    r.plan = scored[i].plan;
    r.estimate = scored[i].estimate;
    r.analytical_rank = static_cast<int>(i);
    chosen.push_back(std::move(r));
  }
  for (const auto& given : options.include) {
    if (const auto problem = workload::find_plan_problem(given, model, gpus, training.seq_len)) {
      report.unusable.push_back({given, fmt::format("{}: {}", problem->key, problem->message)});
      continue;
    }
    const auto same = std::find_if(chosen.begin(), chosen.end(), [&](const RankedPlan& r) { return r.plan == given; });
    if (same != chosen.end()) {
      same->included = true;
      continue;
    }
    RankedPlan r;
    r.plan = given;
    r.estimate = analytic.estimate(given);
    r.included = true;
    chosen.push_back(std::move(r));
  }

  const auto sim_started = clock::now();
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex progress_mutex;
  auto worker = [&]() {
    for (std::size_t i = next++; i < chosen.size(); i = next++) {
      auto& r = chosen[i];
      const auto graph = workload::build_tasks(model, training, r.plan);
      const sim::SimInput in{&cluster, &model, &training, &r.plan, &graph, &cost};
      r.simulated = sim::simulate(in);
      const auto mem = workload::memory_per_stage(model, training, r.plan, report.budget);
      r.fits = mem.fits();
      const std::size_t d = ++done;
      if (options.progress) {
        std::lock_guard lock(progress_mutex);
        options.progress("simulated", d, chosen.size());
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, options.threads); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  report.simulated_seconds = std::chrono::duration<double>(clock::now() - sim_started).count();

  auto peak = [](const RankedPlan& r) {
    double worst = 0;
    for (const auto& s : r.simulated.memory.stages) worst = std::max(worst, s.total().value());
    return worst;
  };
  std::stable_sort(chosen.begin(), chosen.end(), [&](const RankedPlan& a, const RankedPlan& b) {
    if (a.fits != b.fits) return a.fits;
    if (a.simulated.iteration != b.simulated.iteration) return a.simulated.iteration < b.simulated.iteration;
    if (peak(a) != peak(b)) return peak(a) < peak(b);
    return a.analytical_rank < b.analytical_rank;
  });
  // How often the analytical order disagrees with the simulator's, over the searched candidates.
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    for (std::size_t j = i + 1; j < chosen.size(); ++j) {
      const auto& a = chosen[i];
      const auto& b = chosen[j];
      if (a.analytical_rank < 0 || b.analytical_rank < 0 || !a.fits || !b.fits) continue;
      if (a.simulated.iteration == b.simulated.iteration) continue;
      ++report.pairs;
      if (a.analytical_rank > b.analytical_rank) ++report.discordant;
    }
  }
  report.ranked = std::move(chosen);
  return report;
}

}  // namespace parasim::planner
