#pragma once
// A decoder-only Transformer as its config describes it: shapes, attention (MHA or GQA), MLP (GELU
// or SwiGLU) or mixture of experts, norms, embeddings, dropout. Parameter counts follow from the
// shapes.
//
// Mixture of experts (experts > 0): MoE layers replace the MLP by a router (a linear layer of
// hidden x experts, no bias, replicated), `experts` routed experts of width expert_ffn_hidden (the
// MLP's activation and biases), of which each token goes to top_k, and `shared_experts` experts
// every token goes through (DeepSeekMoE's shared-expert isolation; Qwen2-MoE scales their output by
// a sigmoid gate of hidden weights). Layer i is a MoE layer when i >= first_dense_layers and
// (i − first_dense_layers) is a multiple of moe_layer_frequency (Megatron-LM's --moe-layer-freq;
// DeepSeek's first_k_dense_replace); the others keep the dense MLP of ffn_hidden.
//
// Encoders (BERT): bidirectional attention (causal false), segment (token type) embeddings, post-LN
// (a LayerNorm after each residual add and one on the embeddings, none before the head) and the
// masked-LM head: a dense layer with GELU and LayerNorm before the decoder (tied to the word
// embedding) and a bias over the vocabulary. A loss on every position, as Megatron-LM's BERT and
// Transformers' BertForMaskedLM compute the logits.
#include <array>
#include <optional>
#include <string>

#include "core/schema.hpp"

namespace parasim::workload {

/// Upper bounds of a model's integer keys (YAML, validation rows): far beyond any model trained
/// (widths ≤ 2^20, heads ≤ 2^14, head widths ≤ 2^14 so that heads x head_dim stays within 2^28,
/// vocabularies ≤ 2^24, sequences and windows ≤ 2^27 tokens), so that products of them formed in int
/// cannot wrap.
inline constexpr double kMaxLayers = 65536, kMaxWidth = 1 << 20, kMaxHeads = 16384, kMaxHeadDim = 16384, kMaxVocab = 1 << 24, kMaxTokens = 1 << 27;

enum class Activation { gelu, swiglu };

/// Multi-head latent attention (DeepSeek-V2/V3): queries from a low-rank latent (q_lora_rank; 0:
/// projected directly from the hidden state), keys and values from one shared latent of kv_lora_rank
/// plus a rotary key of qk_rope_head_dim shared by every head; each head's query and key are
/// qk_nope_head_dim + qk_rope_head_dim wide, its value v_head_dim. The latents are normed (RMSNorm).
struct LatentAttention {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;  ///< 0: not latent attention
  int qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  int qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool operator==(const LatentAttention&) const = default;
};
enum class Norm { layernorm, rmsnorm };
enum class PositionEmbedding { learned, rope, alibi };

struct ModelSpec {
  std::string name;
  std::string architecture;  ///< family as written or imported: gpt, llama, mistral, qwen2, gpt-neox, mixtral, qwen2-moe
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;   ///< = heads for MHA, fewer for GQA
  int head_dim = 0;   ///< usually hidden / heads
  int ffn_hidden = 0;
  int vocab = 0;      ///< as configured, before any padding for tensor parallelism
  int max_position = 0;  ///< learned position embeddings only
  Activation activation = Activation::gelu;
  Norm norm = Norm::layernorm;
  PositionEmbedding position = PositionEmbedding::learned;
  bool bias = true;      ///< biases on every linear layer (GPT-2/3, GPT-NeoX)
  bool qkv_bias = false; ///< biases on the QKV projection only (Qwen2); implied by bias
  bool tied_embeddings = false;
  double dropout = 0.0;  ///< attention and hidden dropout probability; > 0 keeps dropout masks
  // Mixture of experts (see above); experts = 0 is a dense model.
  int experts = 0;
  int top_k = 0;
  /// Tokens an expert takes, as a multiple of its balanced share, beyond which tokens are dropped
  /// (GShard, Switch); 0 = dropless (Megatron-LM's default).
  double capacity_factor = 0;
  int shared_experts = 0;
  int expert_ffn_hidden = 0;         ///< width of a routed expert's MLP
  int shared_expert_ffn_hidden = 0;  ///< width of each shared expert; usually expert_ffn_hidden
  bool shared_expert_gate = false;   ///< Qwen2-MoE's sigmoid gate (hidden weights) on the shared experts
  int moe_layer_frequency = 1;
  int first_dense_layers = 0;
  /// Group-limited routing (DeepSeek-V2/V3's n_group / topk_group; Megatron-LM's
  /// --moe-router-num-groups / --moe-router-group-topk): the experts form routing_groups equal groups
  /// and a token's top_k experts come from at most routing_groups_per_token of them. Laid out one
  /// group per node (node-limited routing) it bounds the nodes a token is sent to; 0 = no limit.
  int routing_groups = 0;
  int routing_groups_per_token = 0;
  /// Tokens the busiest expert gets over its balanced share: the load imbalance the router leaves.
  /// 1 = balanced, as auxiliary-loss training approaches and as NVIDIA's MoE benchmarks force.
  double expert_load_imbalance = 1.0;
  // Attention variants.
  LatentAttention mla;     ///< kv_lora_rank > 0: multi-head latent attention in every layer
  bool qk_norm = false;    ///< an RMSNorm over each query and key head (Qwen3, Gemma-3, OLMo-2)
  /// Local attention: a query attends at most the `sliding_window` keys before it (Mistral, Gemma-2/3,
  /// gpt-oss), or the keys of its own `attention_chunk` (Llama-4); 0 = none. With global_every = n
  /// every n-th layer (layers n-1, 2n-1, …) attends globally, the others locally; 0: every layer local.
  int sliding_window = 0;
  int attention_chunk = 0;
  int global_every = 0;
  /// DeepSeek-V3's multi-token prediction: modules after the last layer, each a norm pair, a
  /// 2h x h projection, one Transformer layer (dense or MoE as the last layer) sharing the embedding
  /// and the head. Trained with the model, counted apart from it.
  int mtp_layers = 0;
  // Encoders (see above).
  bool causal = true;
  int token_types = 0;
  bool post_norm = false;
  bool mlm_head = false;
  bool operator==(const ModelSpec&) const = default;

  bool is_mla() const { return mla.kv_lora_rank > 0; }
  /// Width of the queries (and keys) of all heads; with MLA each head's query is qk_head_dim wide.
  int q_width() const { return heads * (is_mla() ? mla.qk_head_dim() : head_dim); }
  /// Width of one of the keys and values of all key/value heads (MLA: their mean, (qk + v) / 2 per head,
  /// so that keys and values together are 2·kv_width, as for every other attention).
  int kv_width() const { return is_mla() ? heads * (mla.qk_head_dim() + mla.v_head_dim) / 2 : kv_heads * head_dim; }
  /// Width of the attention output (the output projection's input): heads x the value head width.
  int v_width() const { return heads * (is_mla() ? mla.v_head_dim : head_dim); }
  /// Whether layer `l` attends locally (sliding window or chunk) rather than to every earlier key.
  bool local_attention_layer(int l) const {
    return (sliding_window > 0 || attention_chunk > 0) && (global_every == 0 || (l + 1) % global_every != 0);
  }
  /// Keys a query of layer `l` attends on average over a causal sequence of `seq_len` tokens, as the
  /// "s" of the 12·s·h attention FLOPs convention (full attention: s): the window (capped at s) or the
  /// chunk (capped at s) on local layers.
  double attended_keys(int l, int seq_len) const;
  bool is_moe() const { return experts > 0; }
  bool moe_layer(int layer) const {
    return experts > 0 && layer >= first_dense_layers && (layer - first_dense_layers) % moe_layer_frequency == 0;
  }
  int moe_layers() const;
};

/// Parameters by where they sit. Every count is exact for the configured (unpadded) vocabulary.
struct ParameterCount {
  double embedding = 0;      ///< token embedding
  double position = 0;       ///< learned position embedding
  double attention = 0;      ///< per layer: QKV and output projections with biases
  double mlp = 0;            ///< per dense layer
  double layer_norms = 0;    ///< per layer: both norms (and q/k head norms)
  double final_norm = 0;     ///< 0 with post-LN, which norms the embeddings instead
  double lm_head = 0;        ///< 0 when tied to the embedding
  double token_type = 0;     ///< segment embeddings (BERT)
  double embedding_norm = 0; ///< post-LN's LayerNorm on the embeddings
  double head_transform = 0; ///< masked-LM head: dense h x h with bias, LayerNorm, vocabulary bias
  int layers = 0;
  // Mixture of experts, per MoE layer (in place of mlp).
  int moe_layers = 0;
  double router = 0;          ///< hidden x experts
  double expert = 0;          ///< one routed expert
  int experts = 0, top_k = 0;
  double shared = 0;          ///< all shared experts and their gate
  /// Multi-token-prediction modules (DeepSeek-V3), not in total() or active(): a checkpoint stores
  /// them apart and inference drops them.
  double mtp = 0;

  double per_layer() const { return attention + mlp + layer_norms; }  ///< a dense layer
  double moe_mlp() const { return router + expert * experts + shared; }
  /// What one token goes through in a MoE layer: the router, top_k experts and the shared ones.
  double moe_mlp_active() const { return router + expert * top_k + shared; }
  double total() const { return blocks(moe_mlp()) + outside_blocks(); }
  /// Parameters one token uses: all but the experts it is not routed to.
  double active() const { return blocks(moe_mlp_active()) + outside_blocks(); }
  /// Parameters that take part in matrix multiplies: all but the embedding lookups (a tied
  /// embedding is counted once, as the LM head). The N of 6·N FLOPs per token.
  double in_matmuls() const { return blocks(moe_mlp()) + head(); }
  /// The same for the parameters a token uses: N_active of 6·N_active FLOPs per token.
  double active_in_matmuls() const { return blocks(moe_mlp_active()) + head(); }

 private:
  double blocks(double moe_mlp_params) const {
    return per_layer() * (layers - moe_layers) + (attention + layer_norms + moe_mlp_params) * moe_layers;
  }
  double outside_blocks() const { return embedding + position + token_type + embedding_norm + final_norm + head_transform + lm_head; }
  double head() const { return final_norm + head_transform + (lm_head > 0 ? lm_head : embedding); }
};

ParameterCount count_parameters(const ModelSpec& model);

/// A model value past its upper bound (kMaxLayers, …), for models made other than from a model YAML
/// (whose schema holds the bounds): the field's name, its value and the bound.
struct ModelLimitProblem {
  std::string field;
  double value = 0, max = 0;
};
std::optional<ModelLimitProblem> model_limit_problem(const ModelSpec& model);
/// A dense layer's parameters by module, in forward order: input norm, QKV, output projection,
/// post-attention norm, MLP up (gate and up for SwiGLU), MLP down; biases with their matrices.
/// They sum to the layer's parameters; what an engine that fetches a module at a time gathers.
std::array<double, 6> dense_layer_modules(const ModelSpec& model);
/// MLA's query and key/value projections with their latent norms (the QKV module of a latent layer).
double latent_attention_projections(const ModelSpec& model);
/// The same without the norms: the weights a token's GEMMs meet.
double latent_attention_matmul_weights(const ModelSpec& model);

extern const yaml::Schema kModelSchema;
/// Reads a model section (YAML) and checks it: heads divide the width, kv_heads divide heads, ...
ModelSpec parse_model(const yaml::Record& record);
/// Checks that hold for every model however it was made; throws InputError at `where`.
void check_model(const ModelSpec& model, const SourceLocation& where, const std::string& key_path);

}  // namespace parasim::workload
