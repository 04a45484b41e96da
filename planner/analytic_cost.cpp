#include "planner/analytic_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "topology/group_bandwidth.hpp"
#include "workload/chunk_placement.hpp"
#include "workload/layout.hpp"
#include "workload/memory.hpp"
#include "workload/moe_ops.hpp"
#include "workload/schedule.hpp"
#include "workload/zero3.hpp"

namespace parasim::planner {

using workload::Collective;
using workload::Plan;
using workload::Recompute;

namespace {
// Where a plan's groups sit: its order and the degrees of the dimensions outside tp.
int layout_code(const Plan& p) {
  int code = 0;
  for (auto d : workload::full_order(p.order)) code = code * 4 + static_cast<int>(d);
  return code * 1000003 + p.dp * 131 + p.pp;
}
}  // namespace

AnalyticCost::AnalyticCost(const topology::Router& router, const workload::ModelSpec& model, const workload::TrainingSpec& training,
                           const calibrate::CostModel& cost)
    : cluster_(&router.cluster()),
      model_(&model),
      training_(&training),
      cost_(&cost),
      lowering_(std::make_unique<sim::CollectiveLowering>(router, cost.profile())),
      zero3_shares_(workload::zero3_gather_shares(model, training)) {}

std::vector<std::vector<int>> AnalyticCost::twins(const Plan& p, Group g) const {
  const workload::RankLayout layout(p);
  std::vector<std::vector<int>> out;
  const int data = p.data_ranks();
  switch (g) {
    case Group::tp:
      for (int j = 0; j < data; ++j) out.push_back(layout.tp_group(j, 0));
      break;
    case Group::data:
      for (int t = 0; t < p.tp; ++t) out.push_back(layout.dp_group(t, 0));
      break;
    case Group::sharding:
      for (int t = 0; t < p.tp; ++t) {
        for (int j = 0; j < data; j += p.sharding_group()) out.push_back(layout.sharding_group(t, j, 0));
      }
      break;
    case Group::replica:
      for (int t = 0; t < p.tp; ++t) {
        for (int j = 0; j < p.sharding_group(); ++j) out.push_back(layout.replica_group(t, j, 0));
      }
      break;
    case Group::expert_data:
      for (int t = 0; t < p.tp; t += p.tp / p.expert_tp()) {
        for (int j = 0; j < p.ep; ++j) out.push_back(layout.expert_dp_group(t, j, 0, p.ep, p.expert_tp()));
      }
      break;
    case Group::ep:
      for (int t = 0; t < p.tp; ++t) {
        for (int j = 0; j < data; j += p.ep) out.push_back(layout.ep_group(t, j, 0, p.ep));
      }
      break;
    case Group::pp_pair:
      for (int t = 0; t < p.tp; ++t) {
        for (int j = 0; j < data; ++j) out.push_back({layout.rank(t, j, 0), layout.rank(t, j, 1)});
      }
      break;
    case Group::cp_pair:
      for (int t = 0; t < p.tp; ++t) {
        for (int d = 0; d < p.dp; ++d) out.push_back({layout.rank(t, 0, d, 0), layout.rank(t, 1, d, 0)});
      }
      break;
    case Group::cp:
      for (int t = 0; t < p.tp; ++t) {
        for (int d = 0; d < p.dp; ++d) out.push_back(layout.cp_group(t, d, 0));
      }
      break;
  }
  return out;
}

double AnalyticCost::lower(const Plan& p, Collective kind, std::initializer_list<int> signature, double bytes,
                           const std::function<std::vector<std::vector<int>>()>& groups) {
  if (bytes <= 0) return 0;
  GroupKey key;
  key.fill(INT_MIN);
  std::size_t n = 0;
  for (int v : signature) key.at(n++) = v;
  for (auto d : workload::full_order(p.order)) key.at(n++) = static_cast<int>(d);
  auto it = groups_.find(key);
  if (it == groups_.end()) it = groups_.emplace(key, std::pair{groups_.size() + 1, workload::Twins(groups())}).first;
  const auto& [id, all] = it->second;
  if (all.empty() || all.group_size() < 2) return 0;
  return lowering_->lower(kind, id, all, bytes).estimated.value();
}

double AnalyticCost::hop(const Plan& p, int from, int to, double bytes) {
  if (from == to) return 0;
  return lower(p, Collective::send_recv, {-1 - from, -1 - to, p.tp, p.cp, p.dp, p.pp}, bytes, [&] {
    const workload::RankLayout layout(p);
    std::vector<std::vector<int>> pairs;
    for (int t = 0; t < p.tp; ++t) {
      for (int j = 0; j < p.data_ranks(); ++j) pairs.push_back({layout.rank(t, j, from), layout.rank(t, j, to)});
    }
    return pairs;
  });
}

double AnalyticCost::collective(const Plan& p, Collective kind, Group g, double bytes) {
  return lower(p, kind, {static_cast<int>(g), p.tp, p.cp, p.dp, p.pp, p.ep, p.expert_tp(), p.sharding_group()}, bytes,
               [&] { return twins(p, g); });
}

std::vector<double> AnalyticCost::hops(const Plan& p) {
  // Each chunk receives its input and sends its output forward, and the gradients back: with SP or
  // Megatron-LM's scatter-gather every TP rank moves 1/t of the activation.
  const double bytes = training_->element_bytes() * p.micro_batch * training_->seq_len * model_->hidden / (p.cp * p.tp);
  std::vector<double> out;
  for (int s = 0; s < p.pp; ++s) out.push_back(hop(p, s, (s + 1) % p.pp, bytes));
  return out;
}

namespace {

// A layer's blocks under the plan's shape: attention, then the MLP or the router, experts and shared
// experts.
std::vector<workload::Block> layer_blocks(const workload::ModelSpec& m, const workload::TrainingSpec& tr, workload::BlockShape shape, bool moe,
                                          bool local) {
  shape.local = local;
  std::vector<workload::Block> blocks{workload::attention_block(m, tr, shape)};
  shape.local = false;
  if (moe) {
    blocks.push_back(workload::router_block(m, tr, shape));
    blocks.push_back(workload::experts_block(m, tr, shape));
    if (m.shared_experts > 0) blocks.push_back(workload::shared_experts_block(m, tr, shape));
  } else {
    blocks.push_back(workload::mlp_block(m, tr, shape));
  }
  return blocks;
}

}  // namespace

// TP: two blocks per layer (attention and the MLP or the expert part), each reduced in forward and
// backward; SP splits an all-reduce into an all-gather and a reduce-scatter of the same tensor. In
// backward, as the task graph issues them, a block's input-gradient reduction runs under its weight
// gradients; with SP the arriving gradient is gathered first (on the critical path) and the input
// gathered again under the input gradients (hidden). `reruns`: the forward's collectives again in
// backward (1 under full recompute, ½ where selective recompute reruns the MLP part's pair).
void AnalyticCost::add_tp_comm(LayerCost& c, const Plan& p, double activation, const std::array<double, 2>& block_weight, double reruns) {
  const double gather = p.sp ? collective(p, Collective::all_gather, Group::tp, activation) : 0.0;
  const double reduce = p.sp ? collective(p, Collective::reduce_scatter, Group::tp, activation) : collective(p, Collective::all_reduce, Group::tp, activation);
  const double per_direction = p.overlap.tp_comm ? 0.0 : 2 * (gather + reduce);
  double backward = 0.0;
  // Without the asynchronous all-reduce (2021 stacks) the reduction follows the weight gradients.
  const bool hidden = p.sp || training_->async_tp_allreduce;
  if (!p.overlap.tp_comm) {
    for (double weight : block_weight) backward += gather + (hidden ? std::max(0.0, reduce - weight) : reduce);
  }
  c.comm_forward += per_direction;
  c.comm_backward += backward + reruns * per_direction;
  c.tp = c.comm_forward + c.comm_backward;
}

// CP: Ulysses' four all-to-alls each way, or ring attention's cp − 1 steps of two K+V chunks each,
// the first step waiting and the rest hidden behind the attention core.
void AnalyticCost::add_cp_comm(LayerCost& c, const Plan& p, double tokens, double attention_forward, double attention_backward,
                               bool recomputes_forward) {
  const auto& m = *model_;
  const double e = training_->element_bytes();
  double forward = 0, backward = 0;
  if (p.cp_kind == workload::CpKind::ulysses) {
    const double q = e * tokens * m.q_width() / p.tp, kv = e * tokens * m.kv_width() / p.tp;
    const double four = 2 * collective(p, Collective::all_to_all, Group::cp, q) + 2 * collective(p, Collective::all_to_all, Group::cp, kv);
    forward = four;
    backward = four;
  } else {
    const double kv = e * tokens * m.kv_width() / p.tp;
    const double step = collective(p, Collective::send_recv, Group::cp_pair, kv);
    forward = step + std::max(0.0, (p.cp - 2) * step - attention_forward);
    backward = step + std::max(0.0, 2 * (p.cp - 2) * step + step - attention_backward);
  }
  c.comm_forward += forward;
  c.comm_backward += backward + (recomputes_forward ? forward : 0.0);
  c.cp = forward + backward + (recomputes_forward ? forward : 0.0);
}

// EP: a MoE layer's dispatch and combine all-to-alls each way (again where backward reruns them).
void AnalyticCost::add_ep_comm(LayerCost& c, const Plan& p, const workload::BlockShape& shape, bool rerun) {
  const int nodes = static_cast<int>(topology::ranks_by_island(*cluster_, twins(p, Group::ep).front()).size());
  const double bytes = workload::dispatch_bytes(*model_, *training_, shape) * workload::dispatch_network_share(*model_, *training_, nodes);
  const double pair = 2 * collective(p, Collective::all_to_all, Group::ep, bytes);
  c.comm_forward += pair;
  c.comm_backward += pair * (rerun ? 2 : 1);
  c.ep = pair * (rerun ? 3 : 2);
}

const LayerCost& AnalyticCost::layer(const Plan& p, int layer, Recompute r) {
  const bool moe = model_->moe_layer(layer), local = model_->local_attention_layer(layer);
  // Selective recompute differs by the modules it reruns.
  const int recompute_code = static_cast<int>(r) + (r == Recompute::selective ? 4 * p.recompute_modules.bits() : 0);
  const ShapeKey key{p.tp, p.sp, p.cp, static_cast<int>(p.cp_kind), p.ep, p.expert_tp(), p.micro_batch, recompute_code, moe + 2 * local, layout_code(p)};
  auto it = layers_.find(key);
  if (it != layers_.end()) return it->second;

  const auto& m = *model_;
  const auto& tr = *training_;
  const workload::BlockShape shape = workload::block_shape(p, tr.seq_len, p.micro_batch, r);
  const auto blocks = layer_blocks(m, tr, shape, moe, local);
  LayerCost c;
  double attention_forward = 0, attention_backward = 0;
  // Weight-gradient time of the layer's two tensor-parallel blocks (attention; the MLP or the expert part).
  std::array<double, 2> block_weight{0.0, 0.0};
  for (std::size_t i = 0; i < blocks.size(); ++i) block_weight[i == 0 ? 0 : 1] += cost_->ops_time(blocks[i].backward_weight).value();
  for (const auto& b : blocks) {
    c.forward += cost_->ops_time(b.forward).value();
    c.backward_input += cost_->ops_time(b.backward_input).value();
    c.backward_weight += cost_->ops_time(b.backward_weight).value();
    c.recompute += cost_->ops_time(b.recompute).value();
    c.kept_bytes += b.stored_activation_bytes;
    c.working_bytes += b.full_activation_bytes;
    if (b.kind == workload::BlockKind::attention) {
      attention_forward = cost_->ops_time(b.forward).value();
      attention_backward = cost_->ops_time(b.backward_input).value();
    }
  }
  const double tokens = static_cast<double>(p.micro_batch) * tr.seq_len / p.cp;
  const bool recomputes_forward = r == Recompute::full;
  // Selective recompute of a whole MLP part (workload/recompute_modules.hpp) reruns its collectives:
  // the MLP's or shared experts' TP pair, the MoE part's all-to-alls.
  const bool modules = r == Recompute::selective && workload::recomputes_by_module(m, tr);
  const bool moe_rerun = modules && moe && p.recompute_modules.has(workload::RecomputeModule::moe);
  const bool mlp_tp_rerun = modules && (moe ? moe_rerun || (m.shared_experts > 0 && p.recompute_modules.has(workload::RecomputeModule::shared_experts))
                                            : p.recompute_modules.has(workload::RecomputeModule::mlp));
  if (p.tp > 1) add_tp_comm(c, p, tr.element_bytes() * tokens * m.hidden, block_weight, recomputes_forward ? 1.0 : mlp_tp_rerun ? 0.5 : 0.0);
  if (p.cp > 1) add_cp_comm(c, p, tokens, attention_forward, attention_backward, recomputes_forward);
  if (moe && p.ep > 1) add_ep_comm(c, p, shape, recomputes_forward || moe_rerun);
  return layers_.emplace(key, c).first->second;
}

double AnalyticCost::embedding_time(const Plan& p) {
  const ShapeKey key{p.tp, p.sp, p.cp, 0, 0, 0, p.micro_batch, 0, 0, 0};
  auto it = ends_.find(key);
  if (it != ends_.end()) return it->second;
  const auto shape = workload::block_shape(p, training_->seq_len, p.micro_batch, Recompute::none);
  const auto b = workload::embedding_block(*model_, *training_, shape);
  const double t = (cost_->ops_time(b.forward) + cost_->ops_time(b.backward_input) + cost_->ops_time(b.backward_weight)).value();
  return ends_.emplace(key, t).first->second;
}

double AnalyticCost::head_time(const Plan& p) {
  const ShapeKey key{p.tp, p.sp, p.cp, 1, 0, 0, p.micro_batch, 0, 0, 0};
  auto it = ends_.find(key);
  if (it != ends_.end()) return it->second;
  const auto shape = workload::block_shape(p, training_->seq_len, p.micro_batch, Recompute::none);
  const auto b = workload::head_block(*model_, *training_, shape);
  const double t = (cost_->ops_time(b.forward) + cost_->ops_time(b.backward_input) + cost_->ops_time(b.backward_weight)).value();
  return ends_.emplace(key, t).first->second;
}

AnalyticCost::Stage AnalyticCost::stage_time(const Plan& p, int stage, const std::vector<Recompute>& recompute, const std::vector<int>& sizes,
                                             const std::vector<int>& first, const std::vector<double>& hops) {
  Stage s;
  auto add = [&s](const LayerCost& lc) {
    s.forward += lc.forward;
    s.backward += lc.backward_input;
    s.weight += lc.backward_weight;
    s.recompute += lc.recompute;
    s.tp += lc.tp;
    s.cp += lc.cp;
    s.ep += lc.ep;
  };
  for (const int c : workload::stage_chunks(p, stage)) {
    for (int l = first[static_cast<std::size_t>(c)]; l < first[static_cast<std::size_t>(c)] + sizes[static_cast<std::size_t>(c)]; ++l) {
      add(layer(p, l, recompute[static_cast<std::size_t>(l)]));
    }
  }
  s.backward += s.recompute;
  if (workload::holds_embedding(p, stage)) s.forward += embedding_time(p);
  if (workload::holds_head(p, stage)) {
    s.forward += head_time(p) * (1 + model_->mtp_layers);
    // Each multi-token-prediction module: a layer like the last, without recompute (its entry
    // projection is left out: 2h² a token against the layer's).
    for (int k = 0; k < model_->mtp_layers; ++k) add(layer(p, model_->layers - 1, Recompute::none));
  }
  // DualPipe: a micro-batch passes one of the stage's two copies.
  if (p.schedule == workload::Schedule::dualpipe) {
    for (double* x : {&s.forward, &s.backward, &s.weight, &s.recompute, &s.tp, &s.cp, &s.ep}) *x /= 2;
  }
  if (p.pp > 1) {
    s.p2p = std::max(stage > 0 ? hops[static_cast<std::size_t>(stage - 1)] : 0.0, stage + 1 < p.pp ? hops[static_cast<std::size_t>(stage)] : 0.0);
    // In the steady state a transfer runs while the stage computes another chunk: only what a
    // chunk's forward does not cover waits. Under 1F1B and GPipe each send blocks the sender
    // (Plan::blocks_on_p2p): both of a micro-batch's transfers wait in full.
    s.pp = p.blocks_on_p2p() ? 2 * s.p2p : 2 * p.vpp * std::max(0.0, s.p2p - s.forward / p.vpp);
  }
  return s;
}

namespace {

// Filling and draining the pipeline waits for every hop of the chain, stage to stage (v times with
// interleaving) and, between chunks, from the last stage back to the first (v − 1 times).
double pipeline_fill(const Plan& p, const std::vector<double>& hop_times) {
  if (p.pp <= 1) return 0;
  const double chain = std::accumulate(hop_times.begin(), hop_times.end() - 1, 0.0);
  // A V turns on the last stage; DualPipe's micro-batches pass the chain once.
  const double back = workload::is_v_shaped(p.schedule) || p.schedule == workload::Schedule::dualpipe ? 0.0 : hop_times.back();
  const int passes = p.schedule == workload::Schedule::dualpipe ? 1 : p.vpp;
  return 2.0 * (passes * chain + (p.vpp - 1) * back);
}

// With overlapped reduction each chunk's gradients are reduced once its last backward is done, in
// the order the chunks finish (v − 1 first, pp micro-batch backward passes of a chunk apart in the
// cool-down), one collective after another; the last chunk's wait is what shows. With overlapped
// parameter gathers chunk c's parameters are needed by its first forward, c·pp chunk forwards after
// the step. One chunk (v = 1) reduces to max(bucket, reduce − backward) and max(bucket, gather −
// forward).
struct OverlapWindow {
  const Plan& p;
  double chunk_forward, chunk_backward;

  double exposed_reduce(double reduce, double buckets) const {
    double done = 0;
    const double end = p.vpp * p.pp * chunk_backward;  // any origin: only done − end matters
    for (int k = 0; k < p.vpp; ++k) {
      const double finish = end - (p.vpp - 1 - k) * p.pp * chunk_backward;
      done = std::max(done, finish - chunk_backward) + reduce / p.vpp;
      done = std::max(done, finish + reduce / buckets);
    }
    return std::max(0.0, done - end);
  }
  double exposed_gather(double gather, double buckets) const {
    double done = 0, stall = gather / buckets;
    for (int c = 0; c < p.vpp; ++c) {
      done += gather / p.vpp;
      stall = std::max(stall, done - (c * p.pp + 1) * chunk_forward);
    }
    return stall;
  }
};

}  // namespace

AnalyticCost::StagePace AnalyticCost::stage_pace(const Plan& p, const Stage& slow, double pace) {
  const int m = p.micro_batches();
  StagePace out{0, pace};
  if (replayed_schedule(p) || (p.overlap.ep_comm && p.pp == 1)) {
    // The schedule replayed with the slowest stage's passes, its communication spread over them.
    const double compute = slow.forward + slow.backward + slow.weight, k = compute > 0 ? pace / compute : 0.0;
    const auto idle = p.pp > 1 ? bubbles_.idle(p, slow.forward * k, slow.backward * k, slow.weight * k) : PipelineIdle{0, 1.0 - 1.0 / m};
    out.bubble = idle.bubble;
    // Paired steps hide each one's expert all-to-alls under the other's compute.
    if (p.overlap.ep_comm) out.pace = pace - idle.paired * std::min(slow.ep, compute);
  } else if (p.pp > 1) {
    const double chunk = pace / p.vpp;
    if (workload::defers_weights(p.schedule)) {
      const double f = slow.forward, b = slow.backward, w = slow.weight, all = slow.total();
      out.bubble = (p.pp - 1) * chunk * std::max(0.0, (f + b - w) / std::max(all, 1e-30));
    } else {
      out.bubble = (p.pp - 1) * chunk;
    }
  }
  return out;
}

std::pair<double, double> AnalyticCost::bucketed(const Plan& p, Collective kind, Group g, double parameters, double bytes_per_param) {
  const double buckets = std::max(1.0, std::ceil(parameters / p.gradient_bucket_params()));
  return std::pair{buckets * collective(p, kind, g, parameters * bytes_per_param / buckets), buckets};
}

double AnalyticCost::dense_data_parallel(const Plan& p, double dense, const Stage& st) {
  const int m = p.micro_batches();
  const double grad_bytes = training_->gradient_bytes(), weight_bytes = training_->weight_bytes();
  const double chunk_backward = (st.backward + st.weight) / p.vpp, chunk_forward = st.forward / p.vpp;
  const OverlapWindow window{p, chunk_forward, chunk_backward};
  double dp = 0;
  const auto kind = workload::gradient_reduction(p.zero, *training_);
  const auto [reduce, buckets] = bucketed(p, kind, p.zero >= 1 ? Group::sharding : Group::data, dense, grad_bytes);
  if (p.zero == 2) {
    // Every micro-batch's gradients are reduced chunk by chunk as its backward finishes; each
    // chunk's share hides behind the stage's next chunk of work (a forward and a backward).
    dp += (m - 1) * p.vpp * std::max(0.0, reduce / p.vpp - chunk_forward - chunk_backward) + window.exposed_reduce(reduce, buckets);
  } else if (p.overlap.grad_reduce) {
    dp += window.exposed_reduce(reduce, buckets);
  } else {
    dp += reduce;
  }
  if (p.zero >= 1) {
    const auto [gather, gbuckets] = bucketed(p, Collective::all_gather, Group::sharding, dense, weight_bytes);
    dp += p.overlap.param_gather ? window.exposed_gather(gather, gbuckets) : gather;
  }
  return dp;
}

double AnalyticCost::zero3_data_parallel(const Plan& p, int s, double dense, const Stage& st, const std::vector<Recompute>& recompute,
                                         const std::vector<int>& sizes, const std::vector<int>& first) {
  // Per micro-batch every layer is gathered for forward and again for backward, its gradients
  // reduce-scattered, all on one stream (as the task graph issues them): forward gathers run
  // ahead of the compute, hidden where they are shorter; in backward, without prefetch, a
  // layer's gather queues behind the previous layer's reduce-scatter, which waits for that
  // layer's backward, so both sit between consecutive layers' backward passes. FSDP's
  // BACKWARD_POST queues the gather first (the reduce-scatter runs under the next layer);
  // BACKWARD_PRE issues it as the previous layer starts, so both run under that layer.
  // DeepSpeed gathers a fully recomputed layer twice in backward (its recompute releases it).
  const int m = p.micro_batches();
  const double grad_bytes = training_->gradient_bytes(), weight_bytes = training_->weight_bytes();
  const bool deepspeed = training_->zero3_engine == workload::Zero3Engine::deepspeed;
  int n = 0, regathered = 0;
  for (const int c : workload::stage_chunks(p, s)) {
    const auto chunk = static_cast<std::size_t>(c);
    n += sizes[chunk];
    for (int l = first[chunk]; deepspeed && l < first[chunk] + sizes[chunk]; ++l) regathered += recompute[static_cast<std::size_t>(l)] == Recompute::full;
  }
  n = std::max(1, n);
  const double per_layer = dense / n;
  // The engine's split of a layer's collectives, as the task graph issues them (workload/zero3.hpp).
  double gather = 0;
  for (double share : zero3_shares_) gather += collective(p, Collective::all_gather, Group::sharding, per_layer * share * weight_bytes);
  const int pieces = workload::zero3_reduce_scatters(*training_, per_layer);
  const double scatter = pieces * collective(p, Collective::reduce_scatter, Group::sharding, per_layer / pieces * grad_bytes);
  const double layer_backward = (st.backward + st.weight) / n;
  double between_layers = gather + scatter;
  if (!deepspeed && training_->zero3_backward_prefetch == workload::Zero3Prefetch::post) {
    between_layers = gather + std::max(0.0, scatter - layer_backward);
  } else if (!deepspeed && training_->zero3_backward_prefetch == workload::Zero3Prefetch::pre) {
    between_layers = std::max(0.0, gather + scatter - layer_backward);
  }
  if (workload::zero3_holds_stage(p, *training_)) {
    // Held for the step (workload/zero3.hpp): gathered by the first micro-batch's forward, every
    // layer's gradient reduce-scattered after the last backward, exposed until the step ends.
    return gather + std::max(0.0, n * gather - st.forward) + n * scatter;
  }
  return m * (gather + std::max(0.0, n * gather - st.forward) + n * between_layers + regathered * gather);
}

double AnalyticCost::expert_data_parallel(const Plan& p, double expert, const Stage& st) {
  const double grad_bytes = training_->gradient_bytes(), weight_bytes = training_->weight_bytes();
  const OverlapWindow window{p, st.forward / p.vpp, (st.backward + st.weight) / p.vpp};
  const auto kind = workload::gradient_reduction(p.zero, *training_);
  const auto [reduce, buckets] = bucketed(p, kind, Group::expert_data, expert, grad_bytes);
  double dp = p.overlap.grad_reduce ? window.exposed_reduce(reduce, buckets) : reduce;
  if (p.zero >= 1) dp += collective(p, Collective::all_gather, Group::expert_data, expert * weight_bytes);
  return dp;
}

Estimate AnalyticCost::estimate(const Plan& p) {
  const auto sizes = workload::layers_per_chunk(p, *model_);
  const auto first = workload::first_layer_of_chunk(p, *model_);
  const auto recompute = workload::layer_recompute(p, *model_);
  const int m = p.micro_batches();
  const double grad_bytes = training_->gradient_bytes();

  Estimate best;
  // The slowest stage sets the pipeline's pace; data-parallel work after it differs by stage.
  std::vector<Stage> stages;
  double pace = 0;
  const auto hop_times = p.pp > 1 ? hops(p) : std::vector<double>{};
  for (int s = 0; s < p.pp; ++s) {
    stages.push_back(stage_time(p, s, recompute, sizes, first, hop_times));
    pace = std::max(pace, stages.back().total());
  }
  const double fill = pipeline_fill(p, hop_times);
  for (int s = 0; s < p.pp; ++s) {
    const Stage& st = stages[static_cast<std::size_t>(s)];
    const Stage& slow = *std::max_element(stages.begin(), stages.end(), [](const Stage& a, const Stage& b) { return a.total() < b.total(); });
    const auto [bubble, pace_here] = stage_pace(p, slow, pace);
    const double pipeline = m * pace_here + bubble + fill;

    const double params = workload::stage_parameters(*model_, p, s);
    const double expert = workload::stage_expert_parameters(*model_, p, s);
    const double dense = params - expert;
    const int zg = p.sharding_group();
    double dp = 0;
    if (p.data_ranks() > 1 && p.zero < 3) dp += dense_data_parallel(p, dense, st);
    if (p.data_ranks() > 1 && p.zero == 3) dp += zero3_data_parallel(p, s, dense, st, recompute, sizes, first);
    if (p.data_ranks() > 1 && p.zero_group > 0 && p.zero_group < p.data_ranks()) {
      dp += collective(p, Collective::all_reduce, Group::replica, dense / zg * grad_bytes);
    }
    if (expert > 0 && p.expert_data_ranks() > 1) dp += expert_data_parallel(p, expert, st);
    const double held = p.zero >= 1 ? dense / zg + expert / p.expert_data_ranks() : params;
    const double optimizer = cost_->ops_time(workload::optimizer_block(held, *training_).forward).value();

    const double total = pipeline + dp + optimizer;
    if (total > best.iteration.value()) {
      best.iteration = Seconds(total);
      best.compute = Seconds(m * (slow.forward + slow.backward + slow.weight));
      best.recompute = Seconds(m * slow.recompute);
      best.tp = Seconds(m * slow.tp);
      best.cp = Seconds(m * slow.cp);
      best.ep = Seconds(m * slow.ep);
      best.pp = Seconds(m * slow.pp + fill);
      best.bubble = Seconds(bubble);
      best.dp = Seconds(dp);
      best.optimizer = Seconds(optimizer);
    }
  }
  return best;
}

}  // namespace parasim::planner
