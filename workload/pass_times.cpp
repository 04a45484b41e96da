#include "workload/pass_times.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include "workload/moe_ops.hpp"

namespace parasim::workload {

PassTimes flop_pass_times(const ModelSpec& m, const TrainingSpec& tr, const Plan& p) {
  const auto recompute = layer_recompute(p, m);
  // Layers come in few kinds (dense or MoE, local or global attention, recompute): count them.
  std::map<std::tuple<bool, bool, Recompute>, int> kinds;
  for (int l = 0; l < m.layers; ++l) ++kinds[{m.moe_layer(l), m.local_attention_layer(l), recompute[static_cast<std::size_t>(l)]}];
  double forward = 0, backward = 0, weight = 0;
  for (const auto& [kind, count] : kinds) {
    const auto& [moe, local, r] = kind;
    BlockShape shape = block_shape(p, tr.seq_len, p.micro_batch, r);
    shape.local = local;
    auto add = [&, n = count](const Block& b) {
      forward += n * total_flops(b.forward);
      backward += n * (total_flops(b.backward_input) + total_flops(b.recompute));
      weight += n * total_flops(b.backward_weight);
    };
    add(attention_block(m, tr, shape));
    if (moe) {
      add(router_block(m, tr, shape));
      add(experts_block(m, tr, shape));
      if (m.shared_experts > 0) add(shared_experts_block(m, tr, shape));
    } else {
      add(mlp_block(m, tr, shape));
    }
  }
  const double chunks = p.chunks();
  PassTimes t;
  t.forward = forward / chunks;
  t.backward = backward / chunks;
  t.weight = weight / chunks;
  return t;
}

PipelineShape planned_shape(const ModelSpec& model, const TrainingSpec& training, const Plan& plan) {
  const bool timed = plan.schedule == Schedule::zb_1p || plan.schedule == Schedule::zb_2p || plan.schedule == Schedule::zb_v;
  if (!timed) return pipeline_shape(plan);
  // The schedule depends on the passes' ratios only; to 1/32 of a forward they settle it, and plans
  // whose ratios agree that far share one.
  const auto t = flop_pass_times(model, training, plan);
  auto ratio = [&](double x) { return t.forward > 0 ? std::round(32 * x / t.forward) / 32 : 1.0; };
  return pipeline_shape(plan, {1.0, ratio(t.backward), ratio(t.weight), 0.0});
}

}  // namespace parasim::workload
