#include "workload/hf_config.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <fstream>
#include <span>
#include <sstream>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/suggest.hpp"

namespace parasim::workload {
namespace {

using Json = nlohmann::json;

/// Line and column (1-based, counted in bytes) of byte `offset` of `text`.
SourceLocation location_at(const std::string& file, const std::string& text, std::size_t offset) {
  offset = std::min(offset, text.size());
  const auto begin = text.begin();
  const auto end = begin + static_cast<std::ptrdiff_t>(offset);
  const int line = 1 + static_cast<int>(std::count(begin, end, '\n'));
  const std::size_t line_start = offset == 0 ? 0 : text.rfind('\n', offset - 1) + 1;  // npos + 1 == 0
  return {file, line, static_cast<int>(offset - line_start) + 1};
}

std::size_t skip_space(const std::string& text, std::size_t i) {
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
  return i;
}

/// Byte offset of the value of `"key":` in the top-level object of (well-formed) JSON text; npos when
/// the key is not there. Keys of nested objects with the same name are skipped.
std::size_t top_level_value_offset(const std::string& text, std::string_view key) {
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    } else if (c == '"') {
      const std::size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (depth != 1 || i >= text.size() || std::string_view(text).substr(start, i - start) != key) continue;
      const std::size_t colon = skip_space(text, i + 1);
      if (colon < text.size() && text[colon] == ':') return skip_space(text, colon + 1);
    }
  }
  return std::string::npos;
}

/// A value as a message shows it: JSON scalars as written, containers by kind.
std::string describe(const Json& v) {
  if (v.is_array()) return "a list";
  if (v.is_object()) return "an object";
  return v.dump();
}

/// "malformed JSON: syntax error while parsing ..." without nlohmann's "[json.exception...] parse error
/// at line L, column C: " prefix (we give the position ourselves).
std::string parse_error_detail(const Json::parse_error& e) {
  std::string detail = e.what();
  if (const auto p = detail.find("parse error"); p != std::string::npos) {
    if (const auto q = detail.find(": ", p); q != std::string::npos) detail.erase(0, q + 2);
  }
  return detail;
}

/// A parsed config with its text, so that every error can point at the key it is about.
class Config {
 public:
  Config(const Json& json, const std::string& text, const std::string& file) : json_(json), text_(text), file_(file) {}

  const std::string& file() const { return file_; }
  void set_class(std::string_view hf_class) { hf_class_ = hf_class; }

  /// Where the value of a top-level key stands; the opening brace when the key is absent.
  SourceLocation where(std::string_view key) const {
    const std::size_t at = top_level_value_offset(text_, key);
    return location_at(file_, text_, at != std::string::npos ? at : object_start());
  }
  SourceLocation where_text(std::size_t offset) const { return location_at(file_, text_, offset); }
  std::size_t value_offset(std::string_view key) const { return top_level_value_offset(text_, key); }

  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    throw InputError(where(key), std::string(key), message);
  }
  [[noreturn]] void missing(std::string_view key) const {
    throw InputError(location_at(file_, text_, object_start()), {},
                     fmt::format("missing required key '{}' (needed for {})", key, hf_class_));
  }

  /// Present and not null (Transformers writes null for "use the default").
  bool has(std::string_view key) const {
    const auto it = json_.find(key);
    return it != json_.end() && !it->is_null();
  }
  const Json& at(std::string_view key) const { return *json_.find(key); }

  /// A required positive integer that fits an int.
  int count(std::string_view key) const {
    if (!has(key)) missing(key);
    const Json& v = at(key);
    if (!v.is_number_integer()) fail(key, fmt::format("expected a positive integer, found {}", describe(v)));
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT_MAX)) fail(key, fmt::format("{} is out of range: must be <= {}", u, INT_MAX));
      if (u < 1) fail(key, fmt::format("{} is out of range: must be >= 1", u));
      return static_cast<int>(u);
    }
    const auto s = v.get<std::int64_t>();
    if (s < 1) fail(key, fmt::format("{} is out of range: must be >= 1", s));
    if (s > INT_MAX) fail(key, fmt::format("{} is out of range: must be <= {}", s, INT_MAX));
    return static_cast<int>(s);
  }
  int count_or(std::string_view key, int fallback) const { return has(key) ? count(key) : fallback; }

  bool flag_or(std::string_view key, bool fallback) const {
    if (!has(key)) return fallback;
    const Json& v = at(key);
    if (!v.is_boolean()) fail(key, fmt::format("expected true or false, found {}", describe(v)));
    return v.get<bool>();
  }

  double probability_or(std::string_view key, double fallback) const {
    if (!has(key)) return fallback;
    const Json& v = at(key);
    if (!v.is_number()) fail(key, fmt::format("expected a probability, found {}", describe(v)));
    const double p = v.get<double>();
    if (!(p >= 0 && p <= 1)) fail(key, fmt::format("{} is out of range: must be between 0 and 1", v.dump()));
    return p;
  }

  /// A string key that must be one of `accepted` (the activation names that mean what the mapping assumes).
  void expect_one_of(std::string_view key, std::string_view fallback, std::span<const std::string> accepted) const {
    std::string value(fallback);
    if (has(key)) {
      const Json& v = at(key);
      if (!v.is_string()) fail(key, fmt::format("expected a string, found {}", describe(v)));
      value = v.get<std::string>();
    }
    if (std::find(accepted.begin(), accepted.end(), value) == accepted.end()) {
      fail(key, fmt::format("'{}' is not supported for {}{}; supported: {}", value, hf_class_, did_you_mean(value, accepted),
                            join_names(accepted)));
    }
  }

 private:
  std::size_t object_start() const { return std::min(text_.find('{'), text_.size()); }

  const Json& json_;
  const std::string& text_;
  const std::string& file_;
  std::string_view hf_class_;
};

const std::vector<std::string> kSiluNames = {"silu", "swish"};
const std::vector<std::string> kGeluNames = {"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "gelu_python",
                                             "gelu_accurate", "quick_gelu"};

/// Attention shapes shared by every mapping: heads divide the width unless head_dim is given, key/value
/// heads divide heads. Checked here so that errors name the config's keys, not ours.
void read_heads(const Config& c, ModelSpec& m, std::string_view hidden_key, std::string_view heads_key,
                std::string_view kv_heads_key) {
  m.hidden = c.count(hidden_key);
  m.heads = c.count(heads_key);
  m.kv_heads = kv_heads_key.empty() ? m.heads : c.count_or(kv_heads_key, m.heads);
  if (c.has("head_dim")) {
    m.head_dim = c.count("head_dim");
  } else {
    if (m.hidden % m.heads != 0) {
      c.fail(heads_key, fmt::format("{} heads do not divide {} {}; a config that means this gives head_dim", m.heads,
                                    hidden_key, m.hidden));
    }
    m.head_dim = m.hidden / m.heads;
  }
  if (m.heads % m.kv_heads != 0) {
    c.fail(kv_heads_key, fmt::format("{} key/value heads do not divide {} attention heads", m.kv_heads, m.heads));
  }
}

/// LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM: pre-norm RMSNorm, RoPE, SwiGLU MLP, no biases.
/// Ignored keys change neither shapes nor costs we model (rope_theta, rms_norm_eps, rope_scaling, ...),
/// except Mistral's `sliding_window`, which ModelSpec cannot state (full attention is assumed).
void read_llama_family(const Config& c, ModelSpec& m, bool bias_keys) {
  read_heads(c, m, "hidden_size", "num_attention_heads", "num_key_value_heads");
  m.layers = c.count("num_hidden_layers");
  m.ffn_hidden = c.count("intermediate_size");
  m.vocab = c.count("vocab_size");
  m.max_position = c.count_or("max_position_embeddings", 0);  // the context length; RoPE has no table
  c.expect_one_of("hidden_act", "silu", kSiluNames);
  m.activation = Activation::swiglu;
  m.norm = Norm::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.tied_embeddings = c.flag_or("tie_word_embeddings", false);
  // Llama's attention_bias puts biases on q, k, v and o, mlp_bias on the three MLP matrices; ModelSpec
  // has one switch for all linear layers, so either turns it on.
  m.bias = bias_keys && (c.flag_or("attention_bias", false) || c.flag_or("mlp_bias", false));
  m.dropout = c.probability_or("attention_dropout", 0.0);
}

void read_llama(const Config& c, ModelSpec& m) { read_llama_family(c, m, true); }
void read_mistral(const Config& c, ModelSpec& m) { read_llama_family(c, m, false); }
void read_qwen2(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, false);
  m.qkv_bias = true;  // Qwen2 always has biases on q, k and v (and none on o or the MLP)
}

/// MixtralForCausalLM: Mistral's shapes with every MLP a mixture of num_local_experts experts of
/// intermediate_size, num_experts_per_tok of them per token. router_aux_loss_coef,
/// router_jitter_noise and output_router_logits change no cost we model.
void read_mixtral(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, false);
  m.experts = c.count("num_local_experts");
  m.top_k = c.count("num_experts_per_tok");
  m.expert_ffn_hidden = m.ffn_hidden;
  if (m.top_k > m.experts) c.fail("num_experts_per_tok", fmt::format("{} experts per token exceed the {} experts", m.top_k, m.experts));
}

/// Qwen2MoeForCausalLM: Qwen2's attention (biases on q, k, v); MoE layers of num_experts experts of
/// moe_intermediate_size, num_experts_per_tok per token, and one shared expert of
/// shared_expert_intermediate_size behind a sigmoid gate (shared_expert_gate, hidden weights).
/// decoder_sparse_step n makes layers i with (i + 1) % n == 0 MoE layers: first_dense_layers n − 1,
/// moe_layer_frequency n. Layers in mlp_only_layers keep the dense MLP of intermediate_size, which
/// ModelSpec cannot place at arbitrary layers: a non-empty list is an error. norm_topk_prob and the
/// router's auxiliary loss change no cost we model.
void read_qwen2_moe(const Config& c, ModelSpec& m) {
  read_qwen2(c, m);
  m.experts = c.count("num_experts");
  m.top_k = c.count("num_experts_per_tok");
  m.expert_ffn_hidden = c.count("moe_intermediate_size");
  m.shared_experts = 1;
  m.shared_expert_ffn_hidden = c.count("shared_expert_intermediate_size");
  m.shared_expert_gate = true;
  const int step = c.count_or("decoder_sparse_step", 1);
  m.moe_layer_frequency = step;
  m.first_dense_layers = step - 1;
  if (m.first_dense_layers >= m.layers) {
    c.fail("decoder_sparse_step", fmt::format("{} leaves no MoE layer among {} layers", step, m.layers));
  }
  if (c.has("mlp_only_layers")) {
    const Json& v = c.at("mlp_only_layers");
    if (!v.is_array()) c.fail("mlp_only_layers", fmt::format("expected a list of layer indices, found {}", describe(v)));
    if (!v.empty()) {
      c.fail("mlp_only_layers", "dense layers at chosen positions are not supported (parasim places dense layers by first_dense_layers and "
                                "moe_layer_frequency); write a model YAML instead");
    }
  }
  if (m.top_k > m.experts) c.fail("num_experts_per_tok", fmt::format("{} experts per token exceed the {} experts", m.top_k, m.experts));
}

/// GPT2LMHeadModel: learned positions, LayerNorm, GELU MLP of n_inner (null: 4 x n_embd), biases
/// everywhere, LM head tied to the token embedding.
void read_gpt2(const Config& c, ModelSpec& m) {
  read_heads(c, m, "n_embd", "n_head", {});
  m.layers = c.count("n_layer");
  m.ffn_hidden = c.count_or("n_inner", 4 * m.hidden);
  m.vocab = c.count("vocab_size");
  m.max_position = c.count("n_positions");
  c.expect_one_of("activation_function", "gelu_new", kGeluNames);
  m.activation = Activation::gelu;
  m.norm = Norm::layernorm;
  m.position = PositionEmbedding::learned;
  m.bias = true;
  m.tied_embeddings = c.flag_or("tie_word_embeddings", true);
  m.dropout = c.probability_or("resid_pdrop", 0.1);  // GPT2Config's default; attn_pdrop is the same in released models
}

/// GPTNeoXForCausalLM: RoPE (on rotary_pct of each head), LayerNorm, GELU MLP, biases everywhere, untied
/// head. `use_parallel_residual` (attention and MLP side by side) changes no shape or count.
void read_gpt_neox(const Config& c, ModelSpec& m) {
  read_heads(c, m, "hidden_size", "num_attention_heads", {});
  m.layers = c.count("num_hidden_layers");
  m.ffn_hidden = c.count("intermediate_size");
  m.vocab = c.count("vocab_size");
  m.max_position = c.count_or("max_position_embeddings", 0);
  c.expect_one_of("hidden_act", "gelu", kGeluNames);
  m.activation = Activation::gelu;
  m.norm = Norm::layernorm;
  m.position = PositionEmbedding::rope;
  m.bias = true;
  m.tied_embeddings = c.flag_or("tie_word_embeddings", false);
  m.dropout = std::max(c.probability_or("attention_dropout", 0.0), c.probability_or("hidden_dropout", 0.0));
}

/// BertForMaskedLM: an encoder (bidirectional attention), learned absolute positions, segment
/// embeddings (type_vocab_size), post-LN LayerNorms, GELU MLP, biases everywhere, and the
/// masked-LM head (dense + GELU + LayerNorm, decoder tied to the word embedding, vocabulary bias).
/// Relative position embeddings (position_embedding_type other than "absolute") are not modelled.
void read_bert(const Config& c, ModelSpec& m) {
  read_heads(c, m, "hidden_size", "num_attention_heads", {});
  m.layers = c.count("num_hidden_layers");
  m.ffn_hidden = c.count("intermediate_size");
  m.vocab = c.count("vocab_size");
  m.max_position = c.count("max_position_embeddings");
  m.token_types = c.count_or("type_vocab_size", 2);
  c.expect_one_of("hidden_act", "gelu", kGeluNames);
  static const std::vector<std::string> absolute = {"absolute"};
  c.expect_one_of("position_embedding_type", "absolute", absolute);
  m.activation = Activation::gelu;
  m.norm = Norm::layernorm;
  m.position = PositionEmbedding::learned;
  m.bias = true;
  m.tied_embeddings = c.flag_or("tie_word_embeddings", true);
  m.dropout = std::max(c.probability_or("hidden_dropout_prob", 0.1), c.probability_or("attention_probs_dropout_prob", 0.1));
  m.causal = false;
  m.post_norm = true;
  m.mlm_head = true;
}

struct Mapping {
  std::string_view hf_class;      ///< Transformers class name, as in `architectures`
  std::string_view architecture;  ///< ModelSpec::architecture
  void (*read)(const Config&, ModelSpec&);
};

constexpr Mapping kMappings[] = {
    {"LlamaForCausalLM", "llama", read_llama},
    {"MistralForCausalLM", "mistral", read_mistral},
    {"Qwen2ForCausalLM", "qwen2", read_qwen2},
    {"GPT2LMHeadModel", "gpt2", read_gpt2},
    {"GPTNeoXForCausalLM", "gpt-neox", read_gpt_neox},
    {"MixtralForCausalLM", "mixtral", read_mixtral},
    {"Qwen2MoeForCausalLM", "qwen2-moe", read_qwen2_moe},
    {"BertForMaskedLM", "bert", read_bert},
};

/// Classes we know and cannot model, with what is missing.
struct Unsupported {
  std::string_view hf_class;
  std::string_view why;
};

constexpr std::string_view kEncoderDecoder =
    "is an encoder-decoder model: parasim models one stack of self-attention layers (decoder-only or encoder-only); the decoder's "
    "cross-attention over the encoder output and the second stack are not modelled";

constexpr Unsupported kUnsupported[] = {
    {"T5ForConditionalGeneration", kEncoderDecoder},
    {"MT5ForConditionalGeneration", kEncoderDecoder},
    {"UMT5ForConditionalGeneration", kEncoderDecoder},
    {"BartForConditionalGeneration", kEncoderDecoder},
};

std::vector<std::string> supported_classes() {
  std::vector<std::string> names;
  for (const auto& mapping : kMappings) names.emplace_back(mapping.hf_class);
  return names;
}

/// "llama-2-7b" for "models/llama-2-7b/config.json"; empty when the file has no named directory.
std::string directory_name(const std::string& display_name) {
  const std::string dir = std::filesystem::path(display_name).lexically_normal().parent_path().filename().string();
  return dir == "." || dir == ".." ? std::string() : dir;
}

}  // namespace

ModelSpec import_hf_config_text(const std::string& text, const std::string& display_name) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte counts the bytes read, the offending one included (1-based).
    const std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    throw InputError(location_at(display_name, text, offset), {}, "malformed JSON: " + parse_error_detail(e));
  }
  Config config(json, text, display_name);
  if (!json.is_object()) {
    throw InputError(location_at(display_name, text, 0), {},
                     fmt::format("expected a Hugging Face config (a JSON object), found {}", describe(json)));
  }

  const auto supported = supported_classes();
  if (!config.has("architectures")) {
    throw InputError(config.where("architectures"), {},
                     fmt::format("missing required key 'architectures' (the model class; supported: {})", join_names(supported)));
  }
  const Json& classes = config.at("architectures");
  if (!classes.is_array() || classes.empty() || !classes[0].is_string()) {
    config.fail("architectures", fmt::format("expected a list that starts with the model class such as [\"LlamaForCausalLM\"], found {}",
                                             classes.is_array() && !classes.empty() ? describe(classes[0]) : describe(classes)));
  }
  const auto hf_class = classes[0].get<std::string>();
  const auto* unsupported =
      std::find_if(std::begin(kUnsupported), std::end(kUnsupported), [&](const Unsupported& u) { return u.hf_class == hf_class; });
  if (unsupported != std::end(kUnsupported)) {
    const std::size_t list = config.value_offset("architectures");
    const std::size_t name = list == std::string::npos ? list : text.find('"', list);
    throw InputError(name == std::string::npos ? config.where("architectures") : config.where_text(name), "architectures",
                     fmt::format("'{}' {}", hf_class, unsupported->why));
  }
  const auto* mapping = std::find_if(std::begin(kMappings), std::end(kMappings), [&](const Mapping& m) { return m.hf_class == hf_class; });
  if (mapping == std::end(kMappings)) {
    // Point at the class name itself: the first string inside the list.
    const std::size_t list = config.value_offset("architectures");
    const std::size_t name = list == std::string::npos ? list : text.find('"', list);
    throw InputError(name == std::string::npos ? config.where("architectures") : config.where_text(name), "architectures",
                     fmt::format("'{}' is not supported{}; supported: {}", hf_class, did_you_mean(hf_class, supported),
                                 join_names(supported)));
  }
  config.set_class(mapping->hf_class);

  ModelSpec m;
  m.architecture = std::string(mapping->architecture);
  mapping->read(config, m);
  m.name = directory_name(display_name);
  if (m.name.empty()) m.name = hf_class;
  check_model(m, {display_name, 0, 0}, {});
  return m;
}

ModelSpec import_hf_config(const std::filesystem::path& file) {
  const std::string display = file.string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    const bool exists = std::filesystem::exists(file, ec);
    throw InputError({display, 0, 0}, {}, fmt::format("cannot open file: {}", exists ? "is not a regular file" : "no such file"));
  }
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) throw InputError({display, 0, 0}, {}, "cannot read file");
  return import_hf_config_text(text.str(), display);
}

}  // namespace parasim::workload
