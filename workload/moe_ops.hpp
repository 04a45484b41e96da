#pragma once
// What one mixture-of-experts layer does on one GPU for one micro-batch, in place of the MLP, as
// Megatron-LM's MoE layer with the all-to-all token dispatcher runs it:
//
//   router    norm, router GEMM (tokens x hidden -> experts), scores and top-k, permutation of the
//             token copies by expert;
//   dispatch  all-to-all over the EP group (task graph), then with etp > 1 an all-gather of the
//             received tokens over the etp ranks that split each expert;
//   experts   the local experts' GEMMs, grouped (one kernel over experts / ep experts), their
//             activation, and after the combine the unpermutation and the residual add;
//   combine   with etp > 1 a reduce-scatter, then the all-to-all back;
//   shared    the shared experts, a tensor-parallel MLP every token goes through (with SP its input
//             is all-gathered and its output reduce-scattered like a dense MLP's).
//
// Tokens: a rank routes Tr = b·s/(cp·t) tokens (Megatron-LM requires sequence parallelism with MoE
// and TP) and sends Tr·top_k token copies. Balanced, it receives as many; etp ranks gather theirs, so
// an expert rank computes etp·Tr·top_k tokens over expert_ffn_hidden/etp columns, the same FLOPs
// for every etp.
//
// Load imbalance: ranks wait for the busiest, so the expert GEMMs of the rank that stands for all
// are priced for the busiest expert's tokens, expert_load_imbalance times the balanced share, capped
// by the capacity factor when tokens are dropped (capacity_factor > 0). Task FLOPs then count that
// busiest rank's work on every rank (hardware FLOPs of the slowest rank), model FLOPs do not.
#include "workload/ops.hpp"

namespace parasim::workload {

Block router_block(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);
Block experts_block(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);
Block shared_experts_block(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);

/// Token copies a rank routes in one micro-batch: Tr·top_k.
double routed_tokens(const ModelSpec& model, const BlockShape& shape);
/// Bytes of the dispatch (and of the combine) all-to-all buffer of a rank: its routed token copies,
/// tokens x top_k x hidden x bytes per element. Pairwise, (ep − 1)/ep of it leaves the rank.
double dispatch_bytes(const ModelSpec& model, const TrainingSpec& training, const BlockShape& shape);
/// The busiest expert's tokens over its balanced share (see above).
double busiest_expert_factor(const ModelSpec& model);

/// Weights of one layer that take part in matrix multiplies, counting for a MoE layer what one token
/// uses (router, top_k experts, shared experts and their gate): the N_active of a layer.
double layer_active_matmul_weights(const ModelSpec& model, int layer);
/// Nodes a token's routed copies reach, on average, over an EP group spanning `nodes` nodes with
/// the experts spread evenly: top_k experts drawn across the nodes, or with node-limited routing
/// (routing groups laid out whole on nodes) its routing_groups_per_token groups.
double nodes_per_token(const ModelSpec& model, int nodes);
/// The share of a dispatch's network bytes that remains when the dispatcher sends a token once per
/// destination node (deepep) instead of once per routed copy: nodes_per_token / top_k. 1 for the
/// alltoall dispatcher or an EP group inside one node.
double dispatch_network_share(const ModelSpec& model, const TrainingSpec& training, int nodes);

}  // namespace parasim::workload
