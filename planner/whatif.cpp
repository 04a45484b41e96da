#include "planner/whatif.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <mutex>
#include <thread>

#include "calibrate/cost_model.hpp"
#include "core/error.hpp"
#include "planner/search.hpp"
#include "sim/error_model.hpp"
#include "sim/simulator.hpp"
#include "sim/software_stack.hpp"
#include "topology/cluster.hpp"

namespace parasim::planner {
namespace {

Outcome describe(const sim::Scenario& s, const workload::Plan& plan, const sim::Result& r, bool scenario_plan) {
  Outcome o;
  o.gpu = s.cluster.node.gpu.name;
  o.gpus = s.cluster.gpus();
  o.plan = plan_name(plan);
  o.tp = plan.tp, o.pp = plan.pp, o.vpp = plan.vpp, o.dp = plan.dp, o.cp = plan.cp, o.ep = plan.ep, o.zero = plan.zero;
  o.micro_batch = plan.micro_batch;
  o.scenario_plan = scenario_plan;
  o.iteration_s = r.iteration.value();
  o.tokens_per_s = r.tokens_per_s;
  o.mfu = r.mfu;
  o.model_tflops_per_gpu = r.model_tflops_per_gpu;
  const double n = static_cast<double>(std::max<std::size_t>(1, r.stages.size()));
  for (const auto& st : r.stages) {
    o.compute_s += st.compute().value() / n;
    o.bubble_s += st.bubble.value() / n;
    for (std::size_t d = 0; d < o.exposed_s.size(); ++d) o.exposed_s[d] += st.exposed[d].value() / n;
  }
  const auto features = sim::error_features(r, s.training->precision);
  o.comm_share = features.comm_share;
  o.bubble_share = features.bubble_share;
  o.fp8 = features.fp8;
  o.peak_memory_bytes = r.memory.peak().value();
  o.capacity_bytes = r.memory.capacity.value();
  o.fits = r.memory.fits();
  return o;
}

void require_peak(const sim::Scenario& s) {
  const auto& gpu = s.cluster.node.gpu;
  if (!gpu.peak_for(s.training->precision)) {
    throw InputError({s.file, 1, 1}, "training.precision", fmt::format("{} has no {} peak in its hardware file", gpu.name, precision_name(s.training->precision)));
  }
}

Outcome simulate_given(const sim::Scenario& s) {
  if (!s.plan) {
    // Loaded leniently and the plan did not suit this variant: with the plan fixed that is an error.
    throw InputError({s.file, 0, 0}, "plan", s.dropped_plan.value_or("missing: --fixed-plan needs a scenario with a plan section"));
  }
  const topology::Cluster cluster(s.cluster);
  const calibrate::CostModel cost(s.cluster.node.gpu, s.effective_profile());
  const auto r = sim::simulate_plan({&cluster, &*s.model, &*s.training, &*s.plan, nullptr, &cost});
  return describe(s, *s.plan, r, true);
}

Outcome replan(const sim::Scenario& s, int simulate_top, int threads, const Constraints& constraints, const Headroom& headroom) {
  const int global_batch = study_global_batch(s);
  SearchOptions options;
  options.headroom = headroom.of(s.cluster.node.gpu.hbm_capacity);
  options.simulate_top = simulate_top;
  options.constraints = constraints;
  options.threads = std::max(1, threads);
  const int gpus = s.cluster.gpus();
  if (s.plan) {
    if (auto given = scenario_candidate(*s.plan, *s.model, *s.training, gpus, global_batch, constraints)) options.include.push_back(*given);
  }
  // Under --framework torchtitan every plan is priced as torchtitan runs it, as plan prices it.
  auto training = *s.training;
  if (constraints.framework == Constraints::Framework::torchtitan) sim::run_as_torchtitan(training);
  const auto report = search(s.cluster, *s.model, training, global_batch, s.effective_profile(), options);
  if (report.ranked.empty() || !report.ranked.front().fits) {
    Outcome o;
    o.gpu = s.cluster.node.gpu.name;
    o.gpus = gpus;
    o.fits = false;
    std::string reasons;
    for (const auto& [why, n] : report.rejected) reasons += fmt::format("{}{}: {}", reasons.empty() ? "" : "; ", why, n);
    o.failure = fmt::format("no plan of the {} considered fits in {} per GPU{}", report.considered, format_bytes(report.budget),
                            reasons.empty() ? "" : " (" + reasons + ")");
    return o;
  }
  const auto& best = report.ranked.front();
  return describe(s, best.plan, best.simulated, best.included);
}

// Runs job(i, threads_each) for i in [0, n) on min(threads, n) workers; results in index order.
template <typename Job>
std::vector<Outcome> parallel_map(std::size_t n, const WhatifOptions& options, Job job) {
  std::vector<Outcome> out(n);
  const int threads = std::max(1, options.threads);
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(threads), std::max<std::size_t>(1, n));
  const int each = std::max(1, threads / static_cast<int>(workers));
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex mutex;
  // Every job runs even when one fails, and the failure of the lowest index is the one reported, so
  // which error a user sees does not depend on timing.
  std::vector<std::exception_ptr> failures(n);
  auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        out[i] = job(i, each);
      } catch (...) {
        failures[i] = std::current_exception();
      }
      std::lock_guard lock(mutex);
      ++done;
      if (options.progress) options.progress(done, n);
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& f : failures) {
    if (f) std::rethrow_exception(f);
  }
  return out;
}

// A re-planned variant where nothing fits has moved infinitely far; the fixed plan's time does not
// depend on whether it fits (the table marks it), so there only the time counts.
double relative_change(const Outcome& base, const Outcome& moved) {
  if (base.failure || moved.failure) return std::numeric_limits<double>::infinity();
  return std::fabs(moved.iteration_s - base.iteration_s) / base.iteration_s;
}

}  // namespace

int study_global_batch(const sim::Scenario& s) {
  const int batch = s.plan ? s.plan->global_batch : s.dropped_plan_global_batch;
  if (batch <= 0) throw InputError({s.file, 1, 1}, "plan.global_batch", "missing: a what-if study keeps the scenario plan's global batch");
  return batch;
}

Outcome evaluate(const sim::Scenario& s, bool fixed_plan, int simulate_top, int threads, const Constraints& constraints, const Headroom& headroom) {
  for (auto [present, key] : {std::pair{s.model.has_value(), "model"}, {s.training.has_value(), "training"}}) {
    if (!present) throw InputError({s.file, 1, 1}, key, "missing: parasim whatif needs a scenario with model, training and plan sections");
  }
  require_peak(s);
  return fixed_plan ? simulate_given(s) : replan(s, simulate_top, threads, constraints, headroom);
}

std::vector<Outcome> evaluate_jobs(const std::vector<Job>& jobs, const WhatifOptions& options) {
  return parallel_map(jobs.size(), options, [&](std::size_t i, int threads) {
    const auto& s = jobs[i].scenario;
    try {
      return evaluate(s, jobs[i].fixed_plan, options.simulate_top, threads, options.constraints, options.headroom);
    } catch (const sim::ClockOverflow& e) {
      // A variant whose values run the iteration past the simulator's clock is that variant's answer.
      Outcome o;
      o.gpu = s.cluster.node.gpu.name;
      o.gpus = s.cluster.gpus();
      o.fits = false;
      o.failure = e.message();
      return o;
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      // One variant's fault must not lose the others' answers; the row says what went wrong.
      Outcome o;
      o.gpu = s.cluster.node.gpu.name;
      o.gpus = s.cluster.gpus();
      o.fits = false;
      o.failure = fmt::format("internal error: {}", e.what());
      o.internal_error = true;
      return o;
    }
  });
}

std::vector<Job> study_jobs(std::vector<sim::Scenario> variants, bool fixed_plan) {
  std::vector<Job> jobs;
  for (auto& s : variants) jobs.push_back({std::move(s), fixed_plan});
  return jobs;
}

SensitivityJobs sensitivity_jobs(const sim::Scenario& base, double fraction, bool fixed_plan) {
  base.require_workload();
  SensitivityJobs out;
  out.fraction = fraction;
  out.fixed_plan = fixed_plan;
  for (const auto& k : hardware_knobs()) {
    if (k.applies(base)) out.knobs.push_back(&k);
  }
  auto add = [&](const sim::Scenario& s) {
    out.jobs.push_back({s, true});
    if (!fixed_plan) out.jobs.push_back({s, false});
  };
  add(base);
  for (const auto* k : out.knobs) {
    for (const double f : {1 - fraction, 1 + fraction}) {
      auto s = base;
      k->scale(s, f);
      add(s);
    }
  }
  return out;
}

SensitivityReport rank_sensitivity(const SensitivityJobs& jobs, const std::vector<Outcome>& outcomes) {
  const std::size_t modes = jobs.fixed_plan ? 1 : 2;
  auto at = [&](std::size_t scenario, std::size_t mode) -> const Outcome& { return outcomes.at(scenario * modes + mode); };
  SensitivityReport report;
  report.fraction = jobs.fraction;
  report.fixed_plan = jobs.fixed_plan;
  report.fixed_base = at(0, 0);
  if (!jobs.fixed_plan) report.replan_base = at(0, 1);
  for (std::size_t i = 0; i < jobs.knobs.size(); ++i) {
    Sensitivity s;
    s.knob = jobs.knobs[i];
    s.fixed_minus = at(1 + 2 * i, 0);
    s.fixed_plus = at(2 + 2 * i, 0);
    if (!jobs.fixed_plan) {
      s.replan_minus = at(1 + 2 * i, 1);
      s.replan_plus = at(2 + 2 * i, 1);
      s.swing = std::max(relative_change(report.replan_base, s.replan_minus), relative_change(report.replan_base, s.replan_plus));
    } else {
      s.swing = std::max(relative_change(report.fixed_base, s.fixed_minus), relative_change(report.fixed_base, s.fixed_plus));
    }
    report.knobs.push_back(std::move(s));
  }
  std::stable_sort(report.knobs.begin(), report.knobs.end(), [](const Sensitivity& a, const Sensitivity& b) { return a.swing > b.swing; });
  return report;
}

SensitivityReport sensitivity(const sim::Scenario& base, double fraction, const WhatifOptions& options) {
  const auto jobs = sensitivity_jobs(base, fraction, options.fixed_plan);
  return rank_sensitivity(jobs, evaluate_jobs(jobs.jobs, options));
}

}  // namespace parasim::planner
