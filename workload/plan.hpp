#pragma once
// A parallel plan a user can launch: degrees, pipeline schedule, sharding, micro-batching,
// recompute and overlap, and how the dimensions are laid out on the device axis.
#include <optional>
#include <string>
#include <vector>

#include "core/schema.hpp"
#include "workload/model.hpp"
#include "workload/recompute_modules.hpp"
#include "workload/training.hpp"

namespace parasim::workload {

/// Pipeline schedules (workload/schedule.hpp says how each orders a stage's passes):
///   gpipe, 1f1b, interleaved-1f1b: Megatron-LM's; zb-h1, zb-1p, zb-2p: Qi et al.'s zero-bubble
///   family (ICLR 2024), weight gradients split from input gradients; zb-v: their V-shaped schedule,
///   two chunks per stage; dualpipe, dualpipe-v: DeepSeek-V3's bidirectional pipeline and its
///   V-shaped half.
enum class Schedule { gpipe, one_f_one_b, interleaved_1f1b, zb_h1, zb_1p, zb_2p, zb_v, dualpipe, dualpipe_v };
inline constexpr Schedule kAllSchedules[] = {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved_1f1b, Schedule::zb_h1, Schedule::zb_1p,
                                             Schedule::zb_2p, Schedule::zb_v, Schedule::dualpipe, Schedule::dualpipe_v};
enum class Recompute { none, selective, full };
enum class RecomputeMethod {
  uniform,  ///< every layer recomputed; only the input of each group of `recompute_layers` kept
  block,    ///< the first `recompute_layers` layers of each chunk fully recomputed, the rest not
};
/// Dimensions on the device axis. Expert parallelism has none of its own: its groups are carved out
/// of the dp·cp ranks of a stage, as Megatron-LM carves them.
enum class ParallelDim { tp, dp, pp, cp };
/// Context parallelism: ring attention passes key/value chunks around the CP ring while computing
/// (Megatron-LM and Transformer Engine's default, "p2p"); Ulysses (DeepSpeed) exchanges heads for
/// sequence with all-to-alls before and after the attention core.
enum class CpKind { ring, ulysses };

std::string_view schedule_name(Schedule s);
/// The schedule schedule_name() names; nullopt for any other name.
std::optional<Schedule> schedule_from_name(std::string_view name);
std::string_view recompute_name(Recompute r);
struct Plan;
/// The plan's recompute setting in words: "none", "full block 6", "selective", with modules other
/// than Megatron-Core's default "selective (mla_up_proj,mlp)", per layer "7 full, 92 selective".
std::string recompute_text(const Plan& plan);
std::string_view dim_name(ParallelDim d);
std::string_view cp_kind_name(CpKind k);

struct Overlap {
  bool grad_reduce = false;   ///< DP gradient reduction overlapped with backward (bucket by bucket)
  bool param_gather = false;  ///< distributed-optimizer parameter all-gather overlapped with forward
  bool tp_comm = false;       ///< TP collectives pipelined with their GEMMs (Transformer Engine userbuffers)
  /// MoE dispatch and combine all-to-alls of one micro-batch overlapped with another's compute: a
  /// forward and a backward run as one interleaved step (DualPipe's F&B, Megatron-LM's
  /// --overlap-moe-expert-parallel-comm).
  bool ep_comm = false;
  bool operator==(const Overlap&) const = default;
};

/// Recompute for a range of layers, overriding the plan's setting there.
struct RecomputeOverride {
  int first_layer = 0;
  int last_layer = 0;  ///< inclusive
  Recompute recompute = Recompute::none;
  bool operator==(const RecomputeOverride&) const = default;
};

struct Plan {
  int tp = 1;
  bool sp = false;  ///< Megatron sequence parallelism (with tp > 1)
  int pp = 1;
  int vpp = 1;      ///< model chunks per pipeline stage (interleaved 1F1B; 2 for zb-v and dualpipe-v)
  /// Interleaved 1F1B: the micro-batches a chunk runs before the stage moves on to its next chunk
  /// (Megatron-Core's --microbatch-group-size-per-virtual-pipeline-stage); 0 = pp, its default.
  int microbatch_group = 0;
  int dp = 1;
  int cp = 1;  ///< context-parallel degree: each rank holds seq_len / cp tokens of every sample
  CpKind cp_kind = CpKind::ring;
  /// Expert parallelism: each MoE layer's experts spread over ep consecutive data ranks (within
  /// dp·cp, as Megatron-LM carves them); tokens reach them by all-to-all.
  int ep = 1;
  /// Expert tensor parallelism: each expert split over etp of the tp ranks; 0 = tp, Megatron-LM's
  /// default (--expert-tensor-parallel-size unset).
  int etp = 0;
  Schedule schedule = Schedule::one_f_one_b;
  int zero = 0;        ///< 0: replicated; 1: optimizer sharded (distributed optimizer); 2: +gradients; 3: +weights (FSDP)
  int zero_group = 0;  ///< ranks a ZeRO shard spans; 0 = all of dp; smaller = hybrid sharding (HSDP)
  int micro_batch = 1;
  int global_batch = 1;
  Recompute recompute = Recompute::none;
  RecomputeMethod recompute_method = RecomputeMethod::uniform;
  int recompute_layers = 1;  ///< Megatron's --recompute-num-layers
  /// What selective recompute reruns (Megatron-Core's --recompute-modules; workload/recompute_modules.hpp).
  RecomputeModules recompute_modules = RecomputeModules();
  std::vector<RecomputeOverride> recompute_overrides;
  Overlap overlap;
  /// Innermost first; Megatron-LM's default tp, cp, dp, pp. An order without cp gets it right after tp.
  std::vector<ParallelDim> order{ParallelDim::tp, ParallelDim::cp, ParallelDim::dp, ParallelDim::pp};
  std::vector<int> chunk_layers;  ///< layers per model chunk, pp·vpp entries in pipeline order; empty = even
  double bucket_params = 0;       ///< DP gradient bucket in parameters; 0 = Megatron's max(40M, 1M·dp·cp)
  bool operator==(const Plan&) const = default;

  int gpus() const { return tp * pp * dp * cp; }
  /// Ranks that hold the same weights and reduce their gradients together: the data-parallel ranks
  /// and, within each, the context-parallel ones (Megatron-LM reduces over dp·cp).
  int data_ranks() const { return dp * cp; }
  int sharding_group() const { return zero_group > 0 ? zero_group : data_ranks(); }
  int expert_tp() const { return etp > 0 ? etp : tp; }
  /// Ranks that hold the same expert shard and reduce its gradients together (Megatron-LM's expert
  /// data-parallel group): the data ranks outside the EP group, times the TP ranks etp leaves out.
  int expert_data_ranks() const { return tp / expert_tp() * data_ranks() / ep; }
  /// Micro-batches per iteration per data-parallel replica (the last one may be smaller for FSDP).
  int micro_batches() const {
    const long long per_step = 1LL * micro_batch * dp;
    return static_cast<int>((global_batch + per_step - 1) / per_step);
  }
  /// Samples in the last micro-batch of a replica.
  int last_micro_batch() const { return global_batch / dp - (micro_batches() - 1) * micro_batch; }
  /// Model chunks: pp·vpp. DualPipe holds two of them on each stage (chunk s and its mirror's), as
  /// copies: see workload/chunk_placement.hpp.
  int chunks() const { return pp * vpp; }
  int microbatch_group_size() const { return microbatch_group > 0 ? microbatch_group : pp; }
  /// Whether each pipeline transfer blocks: under 1F1B and GPipe a send meets its receive and the
  /// sender's next kernel waits for it (Megatron-LM's p2p outside the interleaved schedule,
  /// DeepSpeed's pipeline engine). The interleaved schedule overlaps them with the chunks' compute
  /// (Megatron-LM's default since 2023), and ZB-H1's runtime issues them ahead of their use.
  /// The zero-bubble and DualPipe runtimes post their transfers ahead of use too.
  bool blocks_on_p2p() const { return schedule == Schedule::one_f_one_b || schedule == Schedule::gpipe; }
  double gradient_bucket_params() const;
  /// Whether any layer recomputes selectively (the plan's setting or an override): where
  /// recompute_modules apply.
  bool recomputes_selectively() const;
};

/// The plan's schedule as reports print it: its name, and interleaved 1F1B's micro-batch group when
/// it is not pp ("interleaved-1f1b in groups of 6").
std::string schedule_text(const Plan& p);

/// What is wrong with a plan, as a value: the key it concerns and why.
struct PlanProblem {
  std::string key;
  std::string message;
};

/// The checks Megatron-LM and FSDP apply: degrees multiply to the GPUs, tp divides heads, kv_heads
/// and ffn_hidden, pp·vpp divides the layers unless a split is given, the global batch divides into
/// micro-batches (FSDP plans may end with a smaller one), Ulysses' degree divides the heads of a TP
/// rank, ring attention's causal load balancing splits the sequence into 2·cp chunks (checked when
/// seq_len > 0), ... nullopt when the plan can run.
/// The most layer passes (micro-batches of a replica x layers) a plan may ask the task graph for:
/// 2^20, 70 times the largest bundled job's (DeepSeek-V3: 120 x 62).
inline constexpr double kMaxLayerPasses = 1 << 20;
std::optional<PlanProblem> find_plan_problem(const Plan& plan, const ModelSpec& model, int gpus, int seq_len = 0);

/// The plan's order with every dimension in it: cp goes right after tp when the order leaves it out.
std::vector<ParallelDim> full_order(const std::vector<ParallelDim>& order);

/// Vocabulary padded as Megatron-LM pads it: to a multiple of 128 · tp.
int padded_vocab(const ModelSpec& model, int tp);
/// A vocabulary padded as Megatron-LM and NeMo pad it: to a multiple of `divisible` × tp.
int padded_vocab(int vocab, int divisible, int tp);

/// Layers of each model chunk in pipeline order (chunk c runs on stage c % pp).
std::vector<int> layers_per_chunk(const Plan& plan, const ModelSpec& model);
/// First layer of each chunk.
std::vector<int> first_layer_of_chunk(const Plan& plan, const ModelSpec& model);
/// What each layer recomputes, after methods and overrides.
std::vector<Recompute> layer_recompute(const Plan& plan, const ModelSpec& model);

extern const yaml::Schema kPlanSchema;
/// Reads a plan and checks it against the model, the GPU count and (when > 0) the sequence length;
/// a problem fails at its key.
Plan parse_plan(const yaml::Record& record, const ModelSpec& model, int gpus, int seq_len = 0);

}  // namespace parasim::workload
