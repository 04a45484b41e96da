// The global choices a search enumerates, and why pinned values leave none (planner/search.hpp).
#include "planner/search.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <functional>

#include "workload/microbatch_group.hpp"
#include "workload/plan.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Schedule;

std::optional<Plan> scenario_candidate(Plan given, const workload::ModelSpec& model, const workload::TrainingSpec& training, int gpus,
                                       int global_batch, const Constraints& constraints) {
  given.global_batch = global_batch;
  if (workload::find_plan_problem(given, model, gpus, training.seq_len) || !constraints.allows(given)) return std::nullopt;
  return given;
}

namespace {

// A pipeline schedule a candidate may run: the schedule, its chunks a stage, the expert all-to-all
// overlap.
struct ScheduleChoice {
  Schedule schedule;
  int vpp;
  bool ep_overlap;
  int microbatch_group = 0;
};

// What a candidate of pp stages and `micro` micro-batches a replica may run: 1F1B; with a pipeline
// Qi et al.'s ZB-1P and ZB-2P (ZB-1P is planned under ZB-H1's memory and never idles longer than its
// hand-made order, so ZB-H1 is left to plans given), interleaved 1F1B at every chunk count that splits
// the layers (micro-batches that pp does not divide in Megatron-Core's smallest group that takes
// them), the V-shaped ZB-V and DualPipe-V, and DualPipe (pp even); each schedule that pairs forwards
// with backwards (1F1B without a pipeline, interleaved, the DualPipes) once more with the expert
// all-to-all overlap when there is expert parallelism.
std::vector<ScheduleChoice> schedule_choices(int pp, int micro, int ep, const workload::ModelSpec& model, std::optional<Schedule> pinned) {
  const bool overlap = ep > 1;
  std::vector<ScheduleChoice> out{{Schedule::one_f_one_b, 1, false}};
  // What is searched only when asked for by name (--fix schedule=...).
  if (pinned == Schedule::gpipe || (pinned == Schedule::zb_h1 && pp > 1)) out.push_back({*pinned, 1, false});
  auto both = [&](Schedule s, int vpp, int group = 0) {
    out.push_back({s, vpp, false, group});
    if (overlap) out.push_back({s, vpp, true, group});
  };
  if (pp == 1) {
    if (overlap) out.push_back({Schedule::one_f_one_b, 1, true});
    return out;
  }
  for (auto s : {Schedule::zb_1p, Schedule::zb_2p}) out.push_back({s, 1, false});
  // v chunks a stage split the layers evenly, or the stages are uneven anyway (layers % pp != 0).
  auto splits = [&](int v) { return v * pp <= model.layers && (model.layers % (pp * v) == 0 || model.layers % pp != 0); };
  for (int v = 2; v * pp <= model.layers && v <= 16; ++v) {
    if (splits(v) && micro >= pp) both(Schedule::interleaved_1f1b, v, micro % pp == 0 ? 0 : workload::smallest_microbatch_group(micro, pp));
  }
  if (splits(2) && micro >= pp) out.push_back({Schedule::zb_v, 2, false});
  if (splits(2) && micro >= 2 * pp) both(Schedule::dualpipe_v, 2);
  if (pp % 2 == 0 && micro % 2 == 0 && micro >= 2 * pp) both(Schedule::dualpipe, 1);
  return out;
}

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}
bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

std::vector<Plan> global_candidates(const topology::ClusterSpec& spec, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                                    int global_batch, const SearchOptions& options) {
  const int gpus = spec.gpus();
  const int island = std::min(spec.node.gpus, gpus);
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
                const auto schedules = schedule_choices(pp, micro, ep, model, options.constraints.schedule);
                for (const auto& [schedule, vpp, ep_overlap, group] : schedules) {
                  Plan p;
                  p.tp = tp;
                  p.sp = tp > 1;
                  p.pp = pp;
                  p.vpp = vpp;
                  p.microbatch_group = group;
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
                  p.overlap.ep_comm = ep_overlap;
                  if (dp_inner) p.order = {workload::ParallelDim::dp, workload::ParallelDim::tp, workload::ParallelDim::cp, workload::ParallelDim::pp};
                  if (options.constraints.allows(p)) global.push_back(std::move(p));
                }
              }
            }
          }
        }
      }
    }
  }
  return global;
}

namespace {

// Why a pinned value has no candidate of its own, as the enumeration and the plan checks say.
std::string pinned_reason(const std::string& name, int value, const topology::ClusterSpec& spec, const workload::ModelSpec& model,
                          const workload::TrainingSpec& training, int global_batch) {
  const int gpus = spec.gpus(), island = std::min(spec.node.gpus, gpus);
  std::vector<std::string> reasons;
  if (name == "tp" && value > island) reasons.push_back(fmt::format("tp {} is beyond a node's {} GPUs (tensor parallelism stays on the node's NVLink)", value, island));
  if ((name == "tp" || name == "pp" || name == "cp" || name == "dp") && gpus % value != 0) reasons.push_back(fmt::format("{} {} does not divide the {} GPUs", name, value, gpus));
  if (name == "tp" && !power_of_two(value)) reasons.push_back(fmt::format("tp {} is not a power of two", value));
  if (name == "pp" && value > model.layers) reasons.push_back(fmt::format("pp {} is more stages than the {} layers", value, model.layers));
  if (name == "cp" && value > 1 && (training.seq_len < 8192 || training.seq_len / value < 1024)) {
    reasons.push_back(fmt::format("context parallelism is searched from 8K tokens with at least 1K a rank; the sequence is {}", training.seq_len));
  }
  if (name == "ep" && value > 1 && (!model.is_moe() || model.experts % value != 0)) reasons.push_back(fmt::format("ep {} does not divide the {} experts", value, model.experts));
  if (name == "dp" && global_batch % value != 0) reasons.push_back(fmt::format("the global batch {} does not divide over dp {}", global_batch, value));
  // The plan checks Megatron-LM applies, on the simplest plan with the value (the node left aside).
  Plan probe;
  probe.global_batch = global_batch;
  if (name == "tp") probe.tp = value, probe.sp = value > 1;
  if (name == "pp") probe.pp = value;
  if (name == "cp") probe.cp = value;
  const int parallel = probe.tp * probe.pp * probe.cp;
  if (value > 0 && gpus % parallel == 0) {
    probe.dp = gpus / parallel;
    if (const auto problem = workload::find_plan_problem(probe, model, gpus, training.seq_len)) reasons.push_back(problem->message);
  }
  return fmt::format("{}", fmt::join(reasons, "; "));
}

}  // namespace

std::string why_no_candidate(const topology::ClusterSpec& spec, const workload::ModelSpec& model, const workload::TrainingSpec& training, int global_batch,
                             const SearchOptions& options) {
  struct Pin {
    std::string name;
    std::optional<int> value;
    std::function<void(Constraints&)> release;
  };
  const auto& c = options.constraints;
  const std::vector<Pin> pins{
      {"tp", c.tp, [](Constraints& k) { k.tp.reset(); }},
      {"pp", c.pp, [](Constraints& k) { k.pp.reset(); }},
      {"dp", c.dp, [](Constraints& k) { k.dp.reset(); }},
      {"cp", c.cp, [](Constraints& k) { k.cp.reset(); }},
      {"ep", c.ep, [](Constraints& k) { k.ep.reset(); }},
      {"vpp", c.vpp, [](Constraints& k) { k.vpp.reset(); }},
      {"mb", c.micro_batch, [](Constraints& k) { k.micro_batch.reset(); }},
      {"zero", c.zero, [](Constraints& k) { k.zero.reset(); }},
      {"schedule", c.schedule ? std::optional<int>(0) : std::nullopt, [](Constraints& k) { k.schedule.reset(); }},
      {"cp_kind", c.cp_kind ? std::optional<int>(0) : std::nullopt, [](Constraints& k) { k.cp_kind.reset(); }},
      {"ep_comm", c.ep_comm ? std::optional<int>(0) : std::nullopt, [](Constraints& k) { k.ep_comm.reset(); }},
      {"--max-pp", c.max_pp ? std::optional<int>(c.max_pp) : std::nullopt, [](Constraints& k) { k.max_pp = 0; }},
      {"--max-tp", c.max_tp ? std::optional<int>(c.max_tp) : std::nullopt, [](Constraints& k) { k.max_tp = 0; }},
      {"--framework", c.framework != Constraints::Framework::any ? std::optional<int>(0) : std::nullopt,
       [](Constraints& k) { k.framework = Constraints::Framework::any; }},
  };
  std::vector<std::string> culprits;
  for (const auto& pin : pins) {
    if (!pin.value) continue;
    SearchOptions released = options;
    pin.release(released.constraints);
    if (global_candidates(spec, model, training, global_batch, released).empty()) continue;
    const bool numeric = pin.name == "tp" || pin.name == "pp" || pin.name == "dp" || pin.name == "cp" || pin.name == "ep";
    const auto reason = numeric ? pinned_reason(pin.name, *pin.value, spec, model, training, global_batch) : "";
    const std::string what = pin.name.starts_with("--") ? pin.name
                             : numeric                   ? fmt::format("--fix {}={}", pin.name, *pin.value)
                                                         : fmt::format("--fix {}", pin.name);
    culprits.push_back(reason.empty() ? fmt::format("{} removes the last candidate", what) : fmt::format("{} removes the last candidate: {}", what, reason));
  }
  if (culprits.empty()) return "the constraints (--fix, --max-pp, --max-tp, --framework) together leave no candidate on this cluster and model; none of them alone does";
  return fmt::format("{}", fmt::join(culprits, "; "));
}

}  // namespace parasim::planner
