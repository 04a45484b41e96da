#include "workload/model.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <utility>

namespace parasim::workload {
namespace {

using yaml::Field;
using yaml::FieldType;

constexpr std::string_view kActivations[] = {"gelu", "swiglu"};
constexpr std::string_view kNorms[] = {"layernorm", "rmsnorm"};
constexpr std::string_view kPositions[] = {"learned", "rope", "alibi"};

constexpr Field kLatentAttentionFields[] = {
    {.name = "q_lora_rank", .type = FieldType::integer, .description = "rank of the query latent; 0: queries projected directly", .default_text = "0", .min = 0, .max = kMaxWidth},
    {.name = "kv_lora_rank", .type = FieldType::integer, .description = "rank of the shared key/value latent", .required = true, .min = 1, .max = kMaxWidth},
    {.name = "qk_nope_head_dim", .type = FieldType::integer, .description = "query/key width per head without RoPE", .required = true, .min = 1, .max = kMaxHeadDim},
    {.name = "qk_rope_head_dim", .type = FieldType::integer, .description = "query/key width per head with RoPE (the key's shared by all heads)", .required = true, .min = 1, .max = kMaxHeadDim},
    {.name = "v_head_dim", .type = FieldType::integer, .description = "value width per head", .required = true, .min = 1, .max = kMaxHeadDim},
};
constexpr yaml::Schema kLatentAttentionSchema{"mla", "Multi-head latent attention (DeepSeek-V2/V3).", kLatentAttentionFields};

constexpr Field kModelFields[] = {
    {.name = "name", .type = FieldType::string, .description = "model name", .required = true},
    {.name = "description", .type = FieldType::string, .description = "free text"},
    {.name = "architecture", .type = FieldType::string, .description = "family: gpt, llama, mistral, qwen2, gpt-neox, mixtral, qwen2-moe, bert", .default_text = "gpt"},
    {.name = "layers", .type = FieldType::integer, .description = "Transformer blocks", .required = true, .min = 1, .max = kMaxLayers},
    {.name = "hidden", .type = FieldType::integer, .description = "model width h", .required = true, .min = 1, .max = kMaxWidth},
    {.name = "heads", .type = FieldType::integer, .description = "attention (query) heads a", .required = true, .min = 1, .max = kMaxHeads},
    {.name = "kv_heads", .type = FieldType::integer, .description = "key/value heads (GQA); default: heads", .min = 1, .max = kMaxHeads},
    {.name = "head_dim", .type = FieldType::integer, .description = "width of a head; default: hidden / heads", .min = 1, .max = kMaxHeadDim},
    {.name = "ffn_hidden", .type = FieldType::integer, .description = "MLP inner width; default 4 x hidden (gelu), required for swiglu", .min = 1, .max = kMaxWidth},
    {.name = "vocab", .type = FieldType::integer, .description = "vocabulary size, unpadded", .required = true, .min = 1, .max = kMaxVocab},
    {.name = "max_position", .type = FieldType::integer, .description = "positions of a learned position embedding", .min = 1, .max = kMaxTokens},
    {.name = "activation", .type = FieldType::choice, .description = "MLP: gelu (two matrices) or swiglu (three)", .default_text = "gelu", .choices = kActivations},
    {.name = "norm", .type = FieldType::choice, .description = "layernorm (weight and bias) or rmsnorm (weight)", .default_text = "layernorm", .choices = kNorms},
    {.name = "position", .type = FieldType::choice, .description = "position encoding", .default_text = "learned", .choices = kPositions},
    {.name = "bias", .type = FieldType::boolean, .description = "biases on every linear layer", .default_text = "true"},
    {.name = "qkv_bias", .type = FieldType::boolean, .description = "biases on the QKV projection only (Qwen2)", .default_text = "false"},
    {.name = "tied_embeddings", .type = FieldType::boolean, .description = "the LM head reuses the token embedding", .default_text = "false"},
    {.name = "dropout", .type = FieldType::number, .description = "attention and hidden dropout probability", .default_text = "0", .min = 0, .max = 1},
    {.name = "experts", .type = FieldType::integer, .description = "routed experts per MoE layer; 0 = a dense model", .default_text = "0", .min = 0, .max = kMaxHeads},
    {.name = "top_k", .type = FieldType::integer, .description = "routed experts each token goes to (required with experts)", .min = 1, .max = kMaxHeads},
    {.name = "capacity_factor", .type = FieldType::number, .description = "tokens an expert takes as a multiple of its balanced share, the rest dropped; 0 = dropless", .default_text = "0", .min = 0},
    {.name = "shared_experts", .type = FieldType::integer, .description = "experts every token goes through (DeepSeekMoE, Qwen2-MoE)", .default_text = "0", .min = 0, .max = kMaxHeads},
    {.name = "expert_ffn_hidden", .type = FieldType::integer, .description = "MLP width of a routed expert; default ffn_hidden", .min = 1, .max = kMaxWidth},
    {.name = "shared_expert_ffn_hidden", .type = FieldType::integer, .description = "MLP width of each shared expert; default expert_ffn_hidden", .min = 1, .max = kMaxWidth},
    {.name = "shared_expert_gate", .type = FieldType::boolean, .description = "a sigmoid gate of hidden weights scales the shared experts (Qwen2-MoE)", .default_text = "false"},
    {.name = "moe_layer_frequency", .type = FieldType::integer, .description = "every n-th layer (after first_dense_layers) is a MoE layer (Megatron-LM's --moe-layer-freq)", .default_text = "1", .min = 1, .max = kMaxLayers},
    {.name = "routing_groups", .type = FieldType::integer, .description = "group-limited routing: the experts in this many equal groups (DeepSeek's n_group); 0 = none", .default_text = "0", .min = 0, .max = kMaxHeads},
    {.name = "routing_groups_per_token", .type = FieldType::integer, .description = "group-limited routing: a token's experts from at most this many groups (DeepSeek's topk_group)", .default_text = "0", .min = 0, .max = kMaxHeads},
    {.name = "first_dense_layers", .type = FieldType::integer, .description = "leading layers that keep the dense MLP (DeepSeek's first_k_dense_replace)", .default_text = "0", .min = 0, .max = kMaxLayers},
    {.name = "mla", .type = FieldType::section, .description = "multi-head latent attention (DeepSeek-V2/V3) in place of the QKV projection", .schema = &kLatentAttentionSchema},
    {.name = "qk_norm", .type = FieldType::boolean, .description = "RMSNorm over each query and key head (Qwen3, Gemma-3, OLMo-2)", .default_text = "false"},
    {.name = "sliding_window", .type = FieldType::integer, .description = "local layers attend at most this many earlier keys (Mistral, Gemma-2/3, gpt-oss); 0 = none", .default_text = "0", .min = 0, .max = kMaxTokens},
    {.name = "attention_chunk", .type = FieldType::integer, .description = "local layers attend within chunks of this many tokens (Llama-4); 0 = none", .default_text = "0", .min = 0, .max = kMaxTokens},
    {.name = "global_every", .type = FieldType::integer, .description = "with a window or chunk, every n-th layer attends globally (Gemma-2: 2, Gemma-3: 6, Llama-4: 4); 0 = every layer local", .default_text = "0", .min = 0, .max = kMaxLayers},
    {.name = "mtp_layers", .type = FieldType::integer, .description = "multi-token-prediction modules after the last layer (DeepSeek-V3: 1), counted apart", .default_text = "0", .min = 0, .max = kMaxLayers},
    {.name = "causal", .type = FieldType::boolean, .description = "causal (decoder) attention; false: bidirectional (encoder, BERT)", .default_text = "true"},
    {.name = "token_types", .type = FieldType::integer, .description = "segment (token type) embeddings (BERT: 2)", .default_text = "0", .min = 0, .max = kMaxHeads},
    {.name = "post_norm", .type = FieldType::boolean, .description = "post-LN (BERT): a norm after each residual add and on the embeddings, none before the head", .default_text = "false"},
    {.name = "mlm_head", .type = FieldType::boolean, .description = "BERT's masked-LM head: dense + GELU + LayerNorm before the decoder, and a vocabulary bias", .default_text = "false"},
    {.name = "expert_load_imbalance", .type = FieldType::number, .description = "tokens of the busiest expert over its balanced share; 1 = balanced", .default_text = "1", .min = 1},
};

// Keys that only mean something for a mixture of experts.
constexpr std::string_view kMoeKeys[] = {"top_k", "capacity_factor", "shared_experts", "expert_ffn_hidden", "shared_expert_ffn_hidden",
                                         "shared_expert_gate", "moe_layer_frequency", "first_dense_layers", "expert_load_imbalance",
                                         "routing_groups", "routing_groups_per_token"};

}  // namespace

const yaml::Schema kModelSchema{"model", "A decoder-only Transformer, dense or mixture of experts.", kModelFields};

double ModelSpec::attended_keys(int l, int seq_len) const {
  const double s = seq_len;
  if (!local_attention_layer(l)) return s;
  return std::min(s, static_cast<double>(sliding_window > 0 ? sliding_window : attention_chunk));
}

int ModelSpec::moe_layers() const {
  int n = 0;
  for (int l = 0; l < layers; ++l) n += moe_layer(l);
  return n;
}

namespace {

// An MLP of inner width `width`: its up projection (gate and up for SwiGLU) and its down projection,
// biases with their matrices. GELU: h x f up, f x h down; SwiGLU: gate and up h x f, down f x h.
std::pair<double, double> mlp_matrices(const ModelSpec& m, double width) {
  const double h = m.hidden, gates = m.activation == Activation::swiglu ? 2.0 : 1.0;
  return {gates * h * width + (m.bias ? gates * width : 0.0), width * h + (m.bias ? h : 0.0)};
}

}  // namespace

ParameterCount count_parameters(const ModelSpec& m) {
  ParameterCount p;
  const double h = m.hidden;
  p.layers = m.layers;
  p.embedding = static_cast<double>(m.vocab) * h;
  p.position = m.position == PositionEmbedding::learned ? static_cast<double>(m.max_position) * h : 0.0;
  const auto [norm1, qkv, proj, norm2, up, down] = dense_layer_modules(m);
  p.attention = qkv + proj;
  p.mlp = up + down;
  p.layer_norms = norm1 + norm2;
  auto mlp = [&](double width) {
    const auto [u, d] = mlp_matrices(m, width);
    return u + d;
  };
  if (m.is_moe()) {
    p.moe_layers = m.moe_layers();
    p.experts = m.experts;
    p.top_k = m.top_k;
    p.router = h * m.experts;
    p.expert = mlp(m.expert_ffn_hidden);
    p.shared = m.shared_experts * mlp(m.shared_expert_ffn_hidden) + (m.shared_expert_gate ? h : 0.0);
  }
  const double per_norm = norm1;
  p.final_norm = m.post_norm ? 0.0 : per_norm;
  p.embedding_norm = m.post_norm ? per_norm : 0.0;
  p.token_type = static_cast<double>(m.token_types) * h;
  p.head_transform = m.mlm_head ? h * h + h + per_norm + m.vocab : 0.0;
  p.lm_head = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * h;
  if (m.mtp_layers > 0) {
    // Each module: the norms of the embedding and of the hidden state, their 2h x h projection, one
    // layer like the model's last, and the shared head's norm (embedding and head are the model's).
    const bool moe = m.moe_layer(m.layers - 1);
    const double layer = p.attention + p.layer_norms + (moe ? p.moe_mlp() : p.mlp);
    p.mtp = m.mtp_layers * (3 * per_norm + 2 * h * h + layer);
  }
  return p;
}

double latent_attention_matmul_weights(const ModelSpec& m) {
  return latent_attention_projections(m) - m.mla.q_lora_rank - m.mla.kv_lora_rank;
}

double latent_attention_projections(const ModelSpec& m) {
  const auto& a = m.mla;
  const double h = m.hidden, n = m.heads;
  // Queries: h x q_lora, its norm, q_lora x n·(nope + rope); or h x n·(nope + rope) directly.
  const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * n * a.qk_head_dim() : h * n * a.qk_head_dim();
  // Keys and values: h x (kv_lora + rope), the latent's norm, kv_lora x n·(nope + v).
  const double kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank + a.kv_lora_rank * n * (a.qk_nope_head_dim + a.v_head_dim);
  return q + kv;
}

std::array<double, 6> dense_layer_modules(const ModelSpec& m) {
  const double h = m.hidden, q = m.q_width(), kv = m.kv_width();
  const double norm = m.norm == Norm::layernorm ? 2 * h : h;
  // QKV: h x (q + 2 kv), or the latent projections; the per-head q/k norms; output projection: v x h.
  double qkv = m.is_mla() ? latent_attention_projections(m) : h * (q + 2 * kv) + (m.bias || m.qkv_bias ? q + 2 * kv : 0.0);
  if (m.qk_norm) qkv += 2.0 * (m.is_mla() ? m.mla.qk_head_dim() : m.head_dim);
  const double proj = static_cast<double>(m.v_width()) * h + (m.bias ? h : 0.0);
  const auto [up, down] = mlp_matrices(m, m.ffn_hidden);
  return {norm, qkv, proj, norm, up, down};
}

std::optional<ModelLimitProblem> model_limit_problem(const ModelSpec& m) {
  const std::pair<const char*, std::pair<double, double>> values[] = {
      {"layers", {m.layers, kMaxLayers}},
      {"hidden", {m.hidden, kMaxWidth}},
      {"heads", {m.heads, kMaxHeads}},
      {"kv_heads", {m.kv_heads, kMaxHeads}},
      {"head_dim", {m.head_dim, kMaxHeadDim}},
      {"ffn_hidden", {m.ffn_hidden, kMaxWidth}},
      {"vocab", {m.vocab, kMaxVocab}},
      {"max_position", {m.max_position, kMaxTokens}},
      {"experts", {m.experts, kMaxHeads}},
      {"top_k", {m.top_k, kMaxHeads}},
      {"shared_experts", {m.shared_experts, kMaxHeads}},
      {"expert_ffn_hidden", {m.expert_ffn_hidden, kMaxWidth}},
      {"shared_expert_ffn_hidden", {m.shared_expert_ffn_hidden, kMaxWidth}},
      {"moe_layer_frequency", {m.moe_layer_frequency, kMaxLayers}},
      {"first_dense_layers", {m.first_dense_layers, kMaxLayers}},
      {"sliding_window", {m.sliding_window, kMaxTokens}},
      {"attention_chunk", {m.attention_chunk, kMaxTokens}},
      {"global_every", {m.global_every, kMaxLayers}},
      {"mtp_layers", {m.mtp_layers, kMaxLayers}},
      {"mla.q_lora_rank", {m.mla.q_lora_rank, kMaxWidth}},
      {"mla.kv_lora_rank", {m.mla.kv_lora_rank, kMaxWidth}},
      {"mla.qk_nope_head_dim", {m.mla.qk_nope_head_dim, kMaxHeadDim}},
      {"mla.qk_rope_head_dim", {m.mla.qk_rope_head_dim, kMaxHeadDim}},
      {"mla.v_head_dim", {m.mla.v_head_dim, kMaxHeadDim}},
  };
  for (const auto& [field, v] : values) {
    if (v.first > v.second) return ModelLimitProblem{field, v.first, v.second};
  }
  return std::nullopt;
}

void check_model(const ModelSpec& m, const SourceLocation& where, const std::string& path) {
  auto fail = [&](const std::string& key, const std::string& message) {
    throw InputError(where, path.empty() ? key : path + "." + key, message);
  };
  if (m.heads % m.kv_heads != 0) {
    fail("kv_heads", fmt::format("{} key/value heads do not divide {} query heads", m.kv_heads, m.heads));
  }
  if (m.position == PositionEmbedding::learned && m.max_position <= 0) {
    fail("max_position", "a learned position embedding needs max_position");
  }
  if (m.is_moe()) {
    if (m.top_k < 1) fail("top_k", fmt::format("missing: a mixture of {} experts needs top_k", m.experts));
    if (m.top_k > m.experts) fail("top_k", fmt::format("top_k {} exceeds the {} experts", m.top_k, m.experts));
    if (m.first_dense_layers >= m.layers) {
      fail("first_dense_layers", fmt::format("{} dense layers leave no MoE layer among {}", m.first_dense_layers, m.layers));
    }
  }
}

namespace {

// Heads, key/value heads and the head width; a head_dim absent is hidden / heads, which must divide.
void read_attention_shape(const yaml::Record& r, ModelSpec& m) {
  m.heads = static_cast<int>(r.integer("heads"));
  m.kv_heads = r.has("kv_heads") ? static_cast<int>(r.integer("kv_heads")) : m.heads;
  if (r.has("head_dim")) {
    m.head_dim = static_cast<int>(r.integer("head_dim"));
  } else {
    if (m.hidden % m.heads != 0) r.fail("heads", fmt::format("{} heads do not divide hidden {}; give head_dim", m.heads, m.hidden));
    m.head_dim = m.hidden / m.heads;
  }
}

// The MLP: GELU's ffn_hidden defaults to 4 x hidden; SwiGLU has no convention, so it must be given.
void read_mlp(const yaml::Record& r, ModelSpec& m) {
  m.activation = r.string("activation") == "swiglu" ? Activation::swiglu : Activation::gelu;
  if (r.has("ffn_hidden")) {
    m.ffn_hidden = static_cast<int>(r.integer("ffn_hidden"));
  } else if (m.activation == Activation::gelu) {
    m.ffn_hidden = 4 * m.hidden;
  } else {
    r.fail("ffn_hidden", "missing: a swiglu MLP needs ffn_hidden (there is no conventional default)");
  }
}

void read_group_routing(const yaml::Record& r, ModelSpec& m) {
  m.routing_groups = static_cast<int>(r.integer("routing_groups"));
  m.routing_groups_per_token = static_cast<int>(r.integer("routing_groups_per_token"));
  if (m.routing_groups > 0 && m.experts % m.routing_groups != 0) {
    r.fail("routing_groups", fmt::format("{} groups do not divide the {} experts", m.routing_groups, m.experts));
  }
  if ((m.routing_groups > 0) != (m.routing_groups_per_token > 0)) {
    r.fail(m.routing_groups > 0 ? "routing_groups_per_token" : "routing_groups", "group-limited routing needs both routing_groups and routing_groups_per_token");
  }
  if (m.routing_groups_per_token > m.routing_groups) {
    r.fail("routing_groups_per_token", fmt::format("{} exceeds the {} groups", m.routing_groups_per_token, m.routing_groups));
  }
}

// A mixture of experts; without experts, any MoE key written is a mistake, not a default.
void read_experts(const yaml::Record& r, ModelSpec& m) {
  m.experts = static_cast<int>(r.integer("experts"));
  if (m.experts == 0) {
    for (auto key : kMoeKeys) {
      if (r.node().raw()[std::string(key)]) {  // written (or set), not defaulted
        r.fail(key, "only a mixture of experts takes this (set experts)");
      }
    }
    return;
  }
  if (!r.has("top_k")) r.fail("experts", fmt::format("a mixture of {} experts needs top_k", m.experts));
  m.top_k = static_cast<int>(r.integer("top_k"));
  m.capacity_factor = r.number("capacity_factor");
  m.shared_experts = static_cast<int>(r.integer("shared_experts"));
  m.expert_ffn_hidden = r.has("expert_ffn_hidden") ? static_cast<int>(r.integer("expert_ffn_hidden")) : m.ffn_hidden;
  m.shared_expert_ffn_hidden = r.has("shared_expert_ffn_hidden") ? static_cast<int>(r.integer("shared_expert_ffn_hidden")) : m.expert_ffn_hidden;
  m.shared_expert_gate = r.boolean("shared_expert_gate");
  if (m.shared_expert_gate && m.shared_experts == 0) r.fail("shared_expert_gate", "a gate needs shared_experts");
  m.moe_layer_frequency = static_cast<int>(r.integer("moe_layer_frequency"));
  m.first_dense_layers = static_cast<int>(r.integer("first_dense_layers"));
  m.expert_load_imbalance = r.number("expert_load_imbalance");
  read_group_routing(r, m);
}

// Multi-head latent attention expands keys and values for every head: kv_heads is the head count.
void read_latent_attention(const yaml::Record& r, ModelSpec& m) {
  if (!r.has("mla")) return;
  const auto& a = r.section("mla");
  m.mla = {static_cast<int>(a.integer("q_lora_rank")), static_cast<int>(a.integer("kv_lora_rank")), static_cast<int>(a.integer("qk_nope_head_dim")),
           static_cast<int>(a.integer("qk_rope_head_dim")), static_cast<int>(a.integer("v_head_dim"))};
  if (r.has("kv_heads") && m.kv_heads != m.heads) r.fail("kv_heads", "latent attention expands keys and values for every head; leave kv_heads out");
  m.kv_heads = m.heads;
}

// Local attention: a sliding window or chunks (not both), with every global_every-th layer global.
void read_local_attention(const yaml::Record& r, ModelSpec& m) {
  m.sliding_window = static_cast<int>(r.integer("sliding_window"));
  m.attention_chunk = static_cast<int>(r.integer("attention_chunk"));
  m.global_every = static_cast<int>(r.integer("global_every"));
  if (m.sliding_window > 0 && m.attention_chunk > 0) r.fail("attention_chunk", "a layer attends in a sliding window or in chunks, not both");
  if (m.global_every > 0 && m.sliding_window == 0 && m.attention_chunk == 0) r.fail("global_every", "global layers need local ones: set sliding_window or attention_chunk");
}

// What only the whole model can violate, named at the key a reader would change.
void check_read_model(const yaml::Record& r, const ModelSpec& m) {
  if (m.kv_heads > m.heads) r.fail("kv_heads", fmt::format("{} key/value heads exceed {} query heads", m.kv_heads, m.heads));
  if (m.position == PositionEmbedding::learned && m.max_position <= 0) {
    r.fail("max_position", "missing: a learned position embedding needs max_position (or set position: rope)");
  }
  if (m.is_moe() && m.top_k > m.experts) r.fail("top_k", fmt::format("top_k {} exceeds the {} experts", m.top_k, m.experts));
  if (m.is_moe() && m.first_dense_layers >= m.layers) {
    r.fail("first_dense_layers", fmt::format("{} dense layers leave no MoE layer among {}", m.first_dense_layers, m.layers));
  }
  check_model(m, r.location("kv_heads"), r.node().key_path());
}

}  // namespace

ModelSpec parse_model(const yaml::Record& r) {
  ModelSpec m;
  m.name = r.string("name");
  m.architecture = r.string("architecture");
  m.layers = static_cast<int>(r.integer("layers"));
  m.hidden = static_cast<int>(r.integer("hidden"));
  read_attention_shape(r, m);
  read_mlp(r, m);
  m.vocab = static_cast<int>(r.integer("vocab"));
  m.max_position = r.has("max_position") ? static_cast<int>(r.integer("max_position")) : 0;
  m.norm = r.string("norm") == "rmsnorm" ? Norm::rmsnorm : Norm::layernorm;
  const auto& pos = r.string("position");
  m.position = pos == "rope" ? PositionEmbedding::rope : pos == "alibi" ? PositionEmbedding::alibi : PositionEmbedding::learned;
  m.bias = r.boolean("bias");
  m.qkv_bias = r.boolean("qkv_bias");
  m.tied_embeddings = r.boolean("tied_embeddings");
  m.dropout = r.number("dropout");
  m.causal = r.boolean("causal");
  m.token_types = static_cast<int>(r.integer("token_types"));
  m.post_norm = r.boolean("post_norm");
  m.mlm_head = r.boolean("mlm_head");
  read_experts(r, m);
  read_latent_attention(r, m);
  m.qk_norm = r.boolean("qk_norm");
  read_local_attention(r, m);
  m.mtp_layers = static_cast<int>(r.integer("mtp_layers"));
  check_read_model(r, m);
  return m;
}

}  // namespace parasim::workload
