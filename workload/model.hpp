#pragma once
// A dense decoder-only Transformer as its config describes it: shapes, attention (MHA or GQA),
// MLP (GELU or SwiGLU), norms, embeddings, dropout. Parameter counts follow from the shapes.
#include <string>

#include "core/schema.hpp"

namespace parasim::workload {

enum class Activation { gelu, swiglu };
enum class Norm { layernorm, rmsnorm };
enum class PositionEmbedding { learned, rope, alibi };

struct ModelSpec {
  std::string name;
  std::string architecture;  ///< family as written or imported: gpt, llama, mistral, qwen2, gpt-neox
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
  bool operator==(const ModelSpec&) const = default;

  int q_width() const { return heads * head_dim; }
  int kv_width() const { return kv_heads * head_dim; }
};

/// Parameters by where they sit. Every count is exact for the configured (unpadded) vocabulary.
struct ParameterCount {
  double embedding = 0;      ///< token embedding
  double position = 0;       ///< learned position embedding
  double attention = 0;      ///< per layer: QKV and output projections with biases
  double mlp = 0;            ///< per layer
  double layer_norms = 0;    ///< per layer: both norms
  double final_norm = 0;
  double lm_head = 0;        ///< 0 when tied to the embedding
  int layers = 0;

  double per_layer() const { return attention + mlp + layer_norms; }
  double total() const { return embedding + position + per_layer() * layers + final_norm + lm_head; }
  /// Parameters that take part in matrix multiplies: all but the embedding lookups (a tied
  /// embedding is counted once, as the LM head). The N of 6·N FLOPs per token.
  double in_matmuls() const { return per_layer() * layers + final_norm + (lm_head > 0 ? lm_head : embedding); }
};

ParameterCount count_parameters(const ModelSpec& model);

extern const yaml::Schema kModelSchema;
/// Reads a model section (YAML) and checks it: heads divide the width, kv_heads divide heads, ...
ModelSpec parse_model(const yaml::Record& record);
/// Checks that hold for every model however it was made; throws InputError at `where`.
void check_model(const ModelSpec& model, const SourceLocation& where, const std::string& key_path);

}  // namespace parasim::workload
