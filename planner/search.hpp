#pragma once
// planner::search: the fastest plan that fits.
//   1. Global choices: pp (any divisor of the GPUs up to the layer count; powers of two only on
//      request), tp (powers of two within an island), cp (ring and Ulysses, for sequences of 8K
//      tokens and more), ep (divisors of the experts within dp·cp), dp the rest, ZeRO stage 0-3
//      (Galvatron's DP and SDP), which of tp and dp is innermost, micro-batch (powers of two dividing
//      the per-replica batch), schedule and vpp (1F1B, ZB-H1, interleaved with every vpp that gives
//      each chunk a layer). SP always accompanies TP (it moves the same bytes and halves what
//      activations TP leaves replicated), and the distributed optimizer's overlaps are on.
//   2. Megatron-LM's plan checks; stages balanced by cost (planner/partition.hpp).
//   3. Memory first: no recompute if that fits, else selective, else a layer-wise recompute choice
//      by dynamic programming under each stage's budget (planner/recompute_choice.hpp), checked
//      against the workload memory model; what never fits is counted by reason.
//   4. The analytical oracle ranks every candidate that fits, and again every candidate as
//      Megatron-LM runs it (its recompute refitted where Megatron-LM cannot say the one chosen);
//      the best `simulate_top` of each and every plan the user gave are simulated; the final order
//      is by simulated iteration time (ties: less memory, then the analytical order).
// Files: candidates.cpp (step 1 and why pinned values leave no candidate), constraints.cpp (what the
// user pins), search.cpp (steps 2-4), plan_name.cpp (a plan in a line).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/profile.hpp"
#include "planner/cost_oracle.hpp"
#include "sim/result.hpp"
#include "topology/cluster_spec.hpp"
#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"

namespace parasim::planner {

/// What the user pins (`--fix tp=8`, `--max-pp 16`): candidates that disagree are not enumerated.
struct Constraints {
  std::optional<int> tp, pp, dp, cp, ep, vpp, micro_batch, zero;
  std::optional<workload::Schedule> schedule;
  std::optional<workload::CpKind> cp_kind;
  std::optional<bool> ep_comm;  ///< the expert all-to-all overlap, on or off
  int max_pp = 0, max_tp = 0;  ///< 0: no limit
  /// What the plan must launch on: any (the whole space), megatron (Megatron-LM/Megatron-Core as
  /// megatron_rules.hpp says: its schedules and rank orders, ZeRO-2/3 as Megatron-FSDP, recompute
  /// as its arguments say it), deepspeed (Megatron-DeepSpeed: 1F1B without interleaving, ZeRO-1 at
  /// most with a pipeline, context parallelism only as Ulysses), torchtitan (v0.2.2 as
  /// torchtitan_rules.hpp says: FSDP2 or DDP alone, always SP with TP, ring CP, its schedules).
  enum class Framework { any, megatron, deepspeed, torchtitan } framework = Framework::any;

  /// Reads "any", "megatron", "deepspeed" or "torchtitan"; false for anything else.
  bool set_framework(const std::string& name);
  /// Reads "key=value" (tp, pp, dp, cp, ep, vpp, mb, zero, schedule, cp_kind, ep_comm on/off); nullopt when it can,
  /// else a message naming what is wrong.
  std::optional<std::string> set(const std::string& assignment);
  bool allows(const workload::Plan& p) const;
};

/// Memory a search keeps free on every GPU: a fixed amount plus a share of the GPU's memory (`plan
/// --headroom auto` is the memory model's median error as a share).
struct Headroom {
  Bytes fixed{0.0};
  double share = 0;
  Bytes of(Bytes capacity) const { return Bytes(fixed.value() + share * capacity.value()); }
};

struct SearchOptions {
  Bytes headroom{0.0};        ///< kept free on every GPU beyond the memory model's own allowance
  int simulate_top = 32;      ///< candidates the simulator scores after the analytical ranking
  bool power_of_two = false;  ///< pp and dp powers of two only (Galvatron's default)
  std::vector<int> micro_batches;  ///< empty: powers of two up to 16
  std::vector<workload::Plan> include;  ///< always simulated and ranked with the rest
  Constraints constraints;
  /// Wall-clock budget for the whole search in seconds (0: none). The analytical scan visits the
  /// candidates in a spread order and stops at half of it; the simulator then scores the best it
  /// has in the time left (the plans given are always scored). Results then depend on the machine.
  double time_limit = 0;
  /// Also rank every candidate as Megatron-LM runs it (recompute refitted in the forms its arguments
  /// say where the search chose a per-layer mix) and simulate the best `simulate_top` of those too:
  /// the launch files are for the fastest plan Megatron-LM runs. Moot under framework megatron.
  bool megatron_variants = true;
  int threads = 1;  ///< both phases; the result is the same for any count
  /// Called as work advances: phase ("analytical", "simulated"), done, total.
  std::function<void(const char* phase, std::size_t done, std::size_t total)> progress;
};

struct RankedPlan {
  workload::Plan plan;
  Estimate estimate;  ///< analytical
  sim::Result simulated;
  bool included = false;  ///< given by the user (or the scenario), not found by the search
  bool fits = true;       ///< under capacity less headroom
  int analytical_rank = -1;  ///< among the searched candidates (0 = analytically best); -1 for included plans and variants
  int megatron_rank = -1;    ///< among the candidates as Megatron-LM runs them, when simulated for that order alone
};

struct SearchReport {
  std::vector<RankedPlan> ranked;  ///< simulated, best first; plans that do not fit last
  std::size_t considered = 0;      ///< global choices enumerated
  std::size_t scored = 0;          ///< candidates that fit and were estimated
  std::size_t visited = 0;         ///< global choices the analytical scan reached (< considered: time limit)
  bool time_limited = false;       ///< the time limit cut a phase short
  std::map<std::string, std::size_t> rejected;  ///< reason → candidates
  /// Of the candidates rejected for memory, the least any needs per GPU with every layer recomputed.
  std::optional<Bytes> smallest_footprint;
  /// Pairs of simulated search candidates the analytical model orders differently than the simulator.
  std::size_t pairs = 0, discordant = 0;
  /// The same over the pairs whose simulated times differ by more than 2% (near-ties left out).
  std::size_t distinct_pairs = 0, distinct_discordant = 0;
  double analytical_seconds = 0, simulated_seconds = 0;  ///< wall time of each phase
  Bytes capacity, budget;
  /// Included plans that could not be simulated, with the reason.
  std::vector<std::pair<workload::Plan, std::string>> unusable;
};

/// The global choices the search enumerates (tp within a node and a power of two, pp up to the layers,
/// cp from 8K tokens, ep dividing the experts, ZeRO, micro-batches, schedules), as the constraints allow.
std::vector<workload::Plan> global_candidates(const topology::ClusterSpec& cluster, const workload::ModelSpec& model,
                                              const workload::TrainingSpec& training, int global_batch, const SearchOptions& options);

/// Where the constraints leave no candidate: which pinned value removes the last one, and why.
std::string why_no_candidate(const topology::ClusterSpec& cluster, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                             int global_batch, const SearchOptions& options);

SearchReport search(const topology::ClusterSpec& cluster, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                    int global_batch, const calibrate::Profile& profile, const SearchOptions& options);

/// A scenario's own plan as a candidate like the others, at the searched global batch: when it is a
/// valid plan for the model and GPUs and obeys the constraints (--fix and the bounds), else nullopt.
std::optional<workload::Plan> scenario_candidate(workload::Plan given, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                                                 int gpus, int global_batch, const Constraints& constraints);

/// The plan in a line: "tp8 sp · pp8 vpp3 interleaved-1f1b · dp16 zero1 · mb1 · recompute selective".
std::string plan_name(const workload::Plan& plan, bool fold_split = false);
/// Layers per chunk as "[2,3,3,2]", or with runs folded ("[2,3*2,2]") for a line that must stay short.
std::string layer_split(const std::vector<int>& chunk_layers, bool folded);

}  // namespace parasim::planner
