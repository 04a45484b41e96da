#include "workload/hf_config.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <span>
#include <sstream>
#include <string_view>
#include <utility>
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

/// Byte offset of the value of `"key":` in the object that opens at byte `object` of (well-formed) JSON
/// text; npos when the key is not there. Keys of nested objects with the same name are skipped.
std::size_t member_value_offset(const std::string& text, std::size_t object, std::string_view key) {
  int depth = 0;
  for (std::size_t i = object; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) break;  // the end of this object
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

/// The first number literal of JSON text that overflows a double, and where it starts (strings are
/// skipped); the text's start when there is none.
std::pair<std::size_t, std::string> overflowing_number(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    if (text[i] != '-' && (text[i] < '0' || text[i] > '9')) continue;
    std::size_t end = i + 1;
    while (end < text.size() && std::string_view("0123456789.eE+-").find(text[end]) != std::string_view::npos) ++end;
    const std::string number = text.substr(i, end - i);
    if (!std::isfinite(std::strtod(number.c_str(), nullptr))) return {i, number};
    i = end - 1;
  }
  return {0, "a number"};
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

const Json kEmptyObject = Json::object();

/// A parsed config with its text, so that every error can point at the key it is about. A Config
/// may stand for a nested object (Gemma-3's and Llama-4's `text_config`): its keys are then named
/// with the object's path ("text_config.hidden_size") and found inside that object only.
class Config {
 public:
  Config(const Json& json, const std::string& text, const std::string& file)
      : json_(json), text_(text), file_(file), start_(std::min(text.find('{'), text.size())) {}

  const std::string& file() const { return file_; }
  void set_class(std::string_view hf_class) { hf_class_ = hf_class; }
  std::string_view hf_class() const { return hf_class_; }

  /// The object under `key` (an empty one when the key is absent or null: every key takes its default).
  Config sub(std::string_view key) const {
    const std::string prefix = prefix_ + std::string(key) + ".";
    if (!has(key)) return Config(kEmptyObject, text_, file_, where_offset(key), prefix, false, hf_class_);
    const Json& v = at(key);
    if (!v.is_object()) fail(key, fmt::format("expected an object, found {}", describe(v)));
    return Config(v, text_, file_, value_offset(key), prefix, true, hf_class_);
  }

  /// Where the value of a key of this object stands; the object's opening brace when the key is absent.
  SourceLocation where(std::string_view key) const { return location_at(file_, text_, where_offset(key)); }
  SourceLocation where_text(std::size_t offset) const { return location_at(file_, text_, offset); }
  std::size_t value_offset(std::string_view key) const {
    return in_text_ ? member_value_offset(text_, start_, key) : std::string::npos;
  }

  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    throw InputError(where(key), prefix_ + std::string(key), message);
  }
  [[noreturn]] void missing(std::string_view key) const {
    throw InputError(location_at(file_, text_, start_), {},
                     fmt::format("missing required key '{}{}' (needed for {})", prefix_, key, hf_class_));
  }

  /// Whether the key is written at all, null included.
  bool present(std::string_view key) const { return json_.find(key) != json_.end(); }
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

  /// An integer >= 0 that fits an int (0 meaning none); `fallback` when absent or null.
  int non_negative_or(std::string_view key, int fallback) const {
    if (!has(key)) return fallback;
    const Json& v = at(key);
    if (!v.is_number_integer()) fail(key, fmt::format("expected an integer >= 0, found {}", describe(v)));
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT_MAX)) fail(key, fmt::format("{} is out of range: must be <= {}", u, INT_MAX));
      return static_cast<int>(u);
    }
    const auto s = v.get<std::int64_t>();
    if (s < 0) fail(key, fmt::format("{} is out of range: must be >= 0", s));
    if (s > INT_MAX) fail(key, fmt::format("{} is out of range: must be <= {}", s, INT_MAX));
    return static_cast<int>(s);
  }
  /// As non_negative_or, where null means 0 (none) and only an absent key takes `fallback`
  /// (`"q_lora_rank": null`, `"sliding_window": null`).
  int non_negative_null_zero(std::string_view key, int fallback) const {
    if (!present(key)) return fallback;
    return non_negative_or(key, 0);
  }

  /// A list of integers (layer indices or flags); empty when absent or null.
  std::vector<int> int_list(std::string_view key) const {
    std::vector<int> out;
    if (!has(key)) return out;
    const Json& v = at(key);
    if (!v.is_array()) fail(key, fmt::format("expected a list of integers, found {}", describe(v)));
    for (const Json& e : v) {
      if (!e.is_number_integer() || e.get<std::int64_t>() < 0 || e.get<std::int64_t>() > INT_MAX) {
        fail(key, fmt::format("expected a list of integers >= 0, found {} in it", describe(e)));
      }
      out.push_back(static_cast<int>(e.get<std::int64_t>()));
    }
    return out;
  }
  /// A list of strings; empty when absent or null.
  std::vector<std::string> string_list(std::string_view key) const {
    std::vector<std::string> out;
    if (!has(key)) return out;
    const Json& v = at(key);
    if (!v.is_array()) fail(key, fmt::format("expected a list of strings, found {}", describe(v)));
    for (const Json& e : v) {
      if (!e.is_string()) fail(key, fmt::format("expected a list of strings, found {} in it", describe(e)));
      out.push_back(e.get<std::string>());
    }
    return out;
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
  Config(const Json& json, const std::string& text, const std::string& file, std::size_t start, std::string prefix, bool in_text,
         std::string_view hf_class)
      : json_(json), text_(text), file_(file), start_(start), prefix_(std::move(prefix)), in_text_(in_text), hf_class_(hf_class) {}

  std::size_t where_offset(std::string_view key) const {
    const std::size_t at = value_offset(key);
    return at != std::string::npos ? at : start_;
  }

  const Json& json_;
  const std::string& text_;
  const std::string& file_;
  std::size_t start_;         ///< the opening brace of this object (of the enclosing one when it is absent)
  std::string prefix_;        ///< "" or "text_config."
  bool in_text_ = true;       ///< false: an absent object standing for defaults
  std::string_view hf_class_;
};

const std::vector<std::string> kSiluNames = {"silu", "swish"};
const std::vector<std::string> kGeluNames = {"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "gelu_python",
                                             "gelu_accurate", "quick_gelu"};

// ---------------------------------------------------------------------------------------------------
// Layouts over layers: which layers attend locally, which are MoE layers. ModelSpec states them by
// rules (global_every; first_dense_layers and moe_layer_frequency); a config's per-layer lists must
// follow a rule or be an error at their key.

/// The global_every n for which layer l attends globally iff (l + 1) % n == 0; 0 when no layer is global
/// (every layer local), 1 when every layer is. Fails at `key` when the layers follow no such period.
int global_period(const Config& c, std::string_view key, const std::vector<bool>& global) {
  const auto first = std::find(global.begin(), global.end(), true);
  if (first == global.end()) return 0;
  const int n = static_cast<int>(first - global.begin()) + 1;
  for (std::size_t l = 0; l < global.size(); ++l) {
    if (global[l] != ((static_cast<int>(l) + 1) % n == 0)) {
      c.fail(key, fmt::format("layer {} attends {}, against the period of {} that layer {} sets (layers {}, {}, ... global, the others "
                              "local): parasim states local attention by global_every; write a model YAML instead",
                              l, global[l] ? "globally" : "locally", n, n - 1, n - 1, 2 * n - 1));
    }
  }
  return n;
}

/// Which layers attend globally, from a `layer_types` list ("full_attention" against "sliding_attention"
/// or "chunked_attention"); it must name every layer.
std::vector<bool> global_layers_from_types(const Config& c, std::string_view key, int layers) {
  const auto types = c.string_list(key);
  if (static_cast<int>(types.size()) != layers) {
    c.fail(key, fmt::format("expected one entry per layer ({}), found {}", layers, types.size()));
  }
  static const std::vector<std::string> known = {"full_attention", "sliding_attention", "chunked_attention"};
  std::vector<bool> global;
  for (const auto& t : types) {
    if (std::find(known.begin(), known.end(), t) == known.end()) {
      c.fail(key, fmt::format("'{}' is not supported for {}{}; supported: {}", t, c.hf_class(), did_you_mean(t, known), join_names(known)));
    }
    global.push_back(t == "full_attention");
  }
  return global;
}

/// Which layers attend globally: the `layer_types` list where the config has one, else every second
/// layer (Gemma-2's and gpt-oss's alternation, local first).
std::vector<bool> alternating_or_listed_global_layers(const Config& c, int layers) {
  if (c.has("layer_types")) return global_layers_from_types(c, "layer_types", layers);
  std::vector<bool> global(static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) global[static_cast<std::size_t>(l)] = (l + 1) % 2 == 0;
  return global;
}

/// Sets sliding_window (or attention_chunk) and global_every from the size of the local span and which
/// layers attend globally. With every layer global the span is dropped: no layer attends locally.
void set_local_attention(const Config& c, ModelSpec& m, std::string_view pattern_key, const std::vector<bool>& global, int span,
                         bool chunked) {
  const int n = global_period(c, pattern_key, global);
  if (span == 0 || n == 1) return;
  (chunked ? m.attention_chunk : m.sliding_window) = span;
  m.global_every = n;
}

/// Places the MoE layers (`moe[l]`) by first_dense_layers (the first MoE layer) and moe_layer_frequency
/// (the gap to the next), or fails at `key` when they follow no such rule.
void place_moe_layers(const Config& c, ModelSpec& m, std::string_view key, const std::vector<bool>& moe) {
  std::vector<int> at;
  for (std::size_t l = 0; l < moe.size(); ++l) {
    if (moe[l]) at.push_back(static_cast<int>(l));
  }
  if (at.empty()) c.fail(key, fmt::format("leaves no MoE layer among {} layers", m.layers));
  m.first_dense_layers = at[0];
  m.moe_layer_frequency = at.size() > 1 ? at[1] - at[0] : std::max(1, m.layers - at[0]);
  for (int l = 0; l < m.layers; ++l) {
    if (m.moe_layer(l) != moe[static_cast<std::size_t>(l)]) {
      c.fail(key, "dense layers at chosen positions are not supported (parasim places dense layers by first_dense_layers and "
                  "moe_layer_frequency); write a model YAML instead");
    }
  }
}

/// Qwen's MoE layers: layer l unless listed in mlp_only_layers, when (l + 1) % decoder_sparse_step == 0.
void place_qwen_moe_layers(const Config& c, ModelSpec& m) {
  const int step = c.count_or("decoder_sparse_step", 1);
  if (c.has("mlp_only_layers") && !c.at("mlp_only_layers").is_array()) {
    c.fail("mlp_only_layers", fmt::format("expected a list of layer indices, found {}", describe(c.at("mlp_only_layers"))));
  }
  const auto mlp_only = c.int_list("mlp_only_layers");
  std::vector<bool> moe(static_cast<std::size_t>(m.layers));
  for (int l = 0; l < m.layers; ++l) {
    moe[static_cast<std::size_t>(l)] = (l + 1) % step == 0 && std::find(mlp_only.begin(), mlp_only.end(), l) == mlp_only.end();
  }
  if (std::find(moe.begin(), moe.end(), true) == moe.end() && mlp_only.empty()) {
    c.fail("decoder_sparse_step", fmt::format("{} leaves no MoE layer among {} layers", step, m.layers));
  }
  place_moe_layers(c, m, mlp_only.empty() ? "decoder_sparse_step" : "mlp_only_layers", moe);
}

/// Qwen2/Qwen3 attend in a window only with use_sliding_window, and then only in the layers from
/// max_window_layers on (the first ones attend fully), or as an explicit layer_types list. ModelSpec
/// states windowed layers after full ones only when none are full.
void read_qwen_window(const Config& c, ModelSpec& m, bool every_layer) {
  if (c.has("layer_types")) {
    const int window = c.flag_or("use_sliding_window", false) ? c.non_negative_null_zero("sliding_window", 4096) : 0;
    const auto global = global_layers_from_types(c, "layer_types", m.layers);
    if (window > 0) set_local_attention(c, m, "layer_types", global, window, false);
    return;
  }
  if (!c.flag_or("use_sliding_window", false)) return;  // sliding_window is then ignored, as Transformers does
  const int window = c.non_negative_null_zero("sliding_window", 4096);
  if (window == 0) return;
  const int full = every_layer ? 0 : c.non_negative_or("max_window_layers", 28);
  if (full >= m.layers) return;
  if (full > 0) {
    c.fail("max_window_layers", fmt::format("the first {} layers attend fully and the others in a window of {}: parasim states windowed "
                                            "layers only as every layer or all but every n-th; write a model YAML instead",
                                            full, window));
  }
  m.sliding_window = window;
}

/// The MLP's activation under `key` (or the older `hidden_act`): a gelu that gates (GeGLU, three matrices).
void expect_gelu(const Config& c, std::string_view key) {
  c.expect_one_of(c.has(key) || !c.has("hidden_act") ? key : "hidden_act", "gelu_pytorch_tanh", kGeluNames);
}

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
/// Ignored keys change neither shapes nor costs we model (rope_theta, rms_norm_eps, rope_scaling, ...);
/// Mistral's and Qwen2's attention windows are read below.
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
/// Mistral attends in a window of sliding_window keys in every layer (MistralConfig's default 4096;
/// null: full attention, as Mistral-7B-v0.2 on).
void read_mistral(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, false);
  m.sliding_window = c.non_negative_null_zero("sliding_window", 4096);
}
void read_qwen2(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, false);
  m.qkv_bias = true;  // Qwen2 always has biases on q, k and v (and none on o or the MLP)
  read_qwen_window(c, m, false);
}

/// MixtralForCausalLM: Mistral's shapes with every MLP a mixture of num_local_experts experts of
/// intermediate_size, num_experts_per_tok of them per token. router_aux_loss_coef,
/// router_jitter_noise and output_router_logits change no cost we model. A sliding_window (null in the
/// released configs) applies to every layer.
void read_mixtral(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, false);
  m.experts = c.count("num_local_experts");
  m.top_k = c.count("num_experts_per_tok");
  m.expert_ffn_hidden = m.ffn_hidden;
  if (m.top_k > m.experts) c.fail("num_experts_per_tok", fmt::format("{} experts per token exceed the {} experts", m.top_k, m.experts));
  m.sliding_window = c.non_negative_or("sliding_window", 0);  // MixtralConfig's default: none (null)
}

/// Qwen2MoeForCausalLM: Qwen2's attention (biases on q, k, v); MoE layers of num_experts experts of
/// moe_intermediate_size, num_experts_per_tok per token, and one shared expert of
/// shared_expert_intermediate_size behind a sigmoid gate (shared_expert_gate, hidden weights).
/// decoder_sparse_step n makes layers i with (i + 1) % n == 0 MoE layers: first_dense_layers n − 1,
/// moe_layer_frequency n. Layers in mlp_only_layers keep the dense MLP of intermediate_size; ModelSpec
/// places dense layers only first and between every n-th, so a list that does not amount to that is an
/// error. norm_topk_prob and the router's auxiliary loss change no cost we model.
void read_qwen2_moe(const Config& c, ModelSpec& m) {
  read_qwen2(c, m);
  m.experts = c.count("num_experts");
  m.top_k = c.count("num_experts_per_tok");
  m.expert_ffn_hidden = c.count("moe_intermediate_size");
  m.shared_experts = 1;
  m.shared_expert_ffn_hidden = c.count("shared_expert_intermediate_size");
  m.shared_expert_gate = true;
  place_qwen_moe_layers(c, m);
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

// ---------------------------------------------------------------------------------------------------
// DeepSeek-V2/V3: multi-head latent attention and DeepSeekMoE.

struct DeepseekDefaults {  ///< DeepseekV2Config's and DeepseekV3Config's defaults for keys a config may omit
  int q_lora_rank, experts, top_k, shared_experts, moe_ffn, first_dense;
};

/// DeepseekV2ForCausalLM, DeepseekV3ForCausalLM. Every layer uses MLA: queries through a latent of
/// q_lora_rank (null: projected directly, DeepSeek-V2-Lite), keys and values through one of kv_lora_rank
/// plus a shared rotary key of qk_rope_head_dim; heads of qk_nope_head_dim + qk_rope_head_dim (queries,
/// keys) and v_head_dim (values). Layers from first_k_dense_replace on with layer % moe_layer_freq == 0
/// (the reference modeling_deepseek.py) are MoE layers: n_routed_experts of moe_intermediate_size,
/// num_experts_per_tok per token, and n_shared_experts of the same width every token goes through; the
/// others keep the dense MLP of intermediate_size. num_nextn_predict_layers multi-token-prediction
/// modules (DeepSeek-V3: 1) are counted apart from the model, as ModelSpec::mtp_layers says.
/// Group-limited routing (n_group groups, topk_group of them a token) becomes routing_groups: it
/// changes no FLOPs, but bounds the nodes a token is sent to (what a DeepEP dispatcher saves).
/// Not modelled, none worth FLOPs: V3's sigmoid
/// scoring, routed_scaling_factor and norm_topk_prob scale the router's weights; V3's per-expert
/// score-correction bias (n_routed_experts numbers per MoE layer) is not counted; attention_bias (false
/// in every released config) would add a few thousand biases per layer; quantization_config (V3's FP8
/// weights) is a precision, which the training settings choose; yarn rope_scaling changes no shape.
void read_deepseek(const Config& c, ModelSpec& m, const DeepseekDefaults& d) {
  m.hidden = c.count("hidden_size");
  m.layers = c.count("num_hidden_layers");
  m.heads = c.count("num_attention_heads");
  m.kv_heads = m.heads;  // MLA: every head has its own key and value (num_key_value_heads is not used)
  m.ffn_hidden = c.count("intermediate_size");
  m.vocab = c.count("vocab_size");
  m.max_position = c.count_or("max_position_embeddings", 0);
  c.expect_one_of("hidden_act", "silu", kSiluNames);
  m.activation = Activation::swiglu;
  m.norm = Norm::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.bias = false;
  m.tied_embeddings = c.flag_or("tie_word_embeddings", false);
  m.dropout = c.probability_or("attention_dropout", 0.0);

  m.mla.q_lora_rank = c.non_negative_null_zero("q_lora_rank", d.q_lora_rank);
  m.mla.kv_lora_rank = c.count_or("kv_lora_rank", 512);
  m.mla.qk_nope_head_dim = c.count_or("qk_nope_head_dim", 128);
  m.mla.qk_rope_head_dim = c.count_or("qk_rope_head_dim", 64);
  m.mla.v_head_dim = c.count_or("v_head_dim", 128);
  m.head_dim = m.mla.qk_head_dim();

  m.experts = c.non_negative_null_zero("n_routed_experts", d.experts);  // null: a dense model
  if (m.experts > 0) {
    m.top_k = d.top_k > 0 ? c.count_or("num_experts_per_tok", d.top_k) : c.count("num_experts_per_tok");
    if (m.top_k > m.experts) c.fail("num_experts_per_tok", fmt::format("{} experts per token exceed the {} experts", m.top_k, m.experts));
    m.expert_ffn_hidden = c.count_or("moe_intermediate_size", d.moe_ffn);
    m.shared_experts = c.non_negative_null_zero("n_shared_experts", d.shared_experts);
    m.shared_expert_ffn_hidden = m.expert_ffn_hidden;  // one MLP of n_shared_experts x moe_intermediate_size: the same weights
    const int first = c.non_negative_or("first_k_dense_replace", d.first_dense);
    const int every = c.count_or("moe_layer_freq", 1);
    if (first >= m.layers) c.fail("first_k_dense_replace", fmt::format("{} dense layers leave no MoE layer among {}", first, m.layers));
    std::vector<bool> moe(static_cast<std::size_t>(m.layers));
    for (int l = 0; l < m.layers; ++l) moe[static_cast<std::size_t>(l)] = l >= first && l % every == 0;
    place_moe_layers(c, m, every > 1 ? "moe_layer_freq" : "first_k_dense_replace", moe);
    const int groups = c.non_negative_null_zero("n_group", 0), per_token = c.non_negative_null_zero("topk_group", 0);
    if (groups > 1 && per_token > 0 && per_token < groups) {
      if (m.experts % groups != 0) c.fail("n_group", fmt::format("{} groups do not divide the {} experts", groups, m.experts));
      m.routing_groups = groups;
      m.routing_groups_per_token = per_token;
    }
  }
  m.mtp_layers = c.non_negative_or("num_nextn_predict_layers", 0);
}

void read_deepseek_v2(const Config& c, ModelSpec& m) { read_deepseek(c, m, {1536, 64, 0, 2, 1407, 0}); }
void read_deepseek_v3(const Config& c, ModelSpec& m) { read_deepseek(c, m, {1536, 256, 8, 1, 2048, 3}); }

// ---------------------------------------------------------------------------------------------------
// Qwen3, Qwen3-MoE.

/// Qwen3ForCausalLM: Llama's shapes with an explicit head_dim (default 128, as Qwen3Config), an RMSNorm
/// over each query and key head (qk_norm) and attention_bias on q, k, v and o.
void read_qwen3(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, true);
  if (!c.has("head_dim")) m.head_dim = 128;
  m.qk_norm = true;
  read_qwen_window(c, m, false);
}

/// Qwen3MoeForCausalLM: Qwen3's attention (head_dim, when absent, is hidden / heads, as
/// Qwen3MoeAttention takes it); MoE layers of num_experts experts of moe_intermediate_size,
/// num_experts_per_tok per token, no shared expert; decoder_sparse_step and mlp_only_layers place them
/// (a dense layer keeps intermediate_size). norm_topk_prob and the router's auxiliary loss cost nothing.
void read_qwen3_moe(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, true);
  m.qk_norm = true;
  m.experts = c.count_or("num_experts", 128);
  m.top_k = c.count_or("num_experts_per_tok", 8);
  m.expert_ffn_hidden = c.count_or("moe_intermediate_size", 768);
  if (m.top_k > m.experts) c.fail("num_experts_per_tok", fmt::format("{} experts per token exceed the {} experts", m.top_k, m.experts));
  place_qwen_moe_layers(c, m);
  read_qwen_window(c, m, true);
}

// ---------------------------------------------------------------------------------------------------
// Gemma-2, Gemma-3.


/// What a config's Transformers class defaults when a key is absent; 0: the key is required (for
/// kv_heads: as many as the heads).
struct HeadDefaults {
  int hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, layers = 0;
};

/// Width, heads (with an explicit head_dim), key/value heads and layers, as the newer configs
/// (Gemma, gpt-oss, Llama-4) state them.
void read_heads(const Config& c, ModelSpec& m, const HeadDefaults& d) {
  auto get = [&](std::string_view key, int fallback) { return fallback > 0 ? c.count_or(key, fallback) : c.count(key); };
  m.hidden = get("hidden_size", d.hidden);
  m.heads = get("num_attention_heads", d.heads);
  m.kv_heads = c.count_or("num_key_value_heads", d.kv_heads > 0 ? d.kv_heads : m.heads);
  m.head_dim = c.count_or("head_dim", d.head_dim);
  if (m.heads % m.kv_heads != 0) {
    c.fail("num_key_value_heads", fmt::format("{} key/value heads do not divide {} attention heads", m.kv_heads, m.heads));
  }
  m.layers = get("num_hidden_layers", d.layers);
}

/// Gemma2ForCausalLM: GQA with head_dim (256 unless given), GeGLU MLP (gelu_pytorch_tanh gating: three
/// matrices, Activation::swiglu's shape), RMSNorm, tied embeddings, and a sliding_window (default 4096)
/// on every other layer: layers 0, 2, 4, ... local, 1, 3, 5, ... global (global_every 2), or as
/// layer_types lists them. Soft-capping of the attention logits (attn_logit_softcapping) and of the
/// final logits (final_logit_softcapping) is a tanh per score or logit: no material FLOPs next to the
/// matmuls that make them. Gemma's four norms per layer (pre- and post-attention, pre- and
/// post-feed-forward) are counted as two: 2·h parameters per layer short (0.003% of Gemma-2 9B).
/// query_pre_attn_scalar (the attention's scale) and the embedding's sqrt(h) scale change no cost.
void read_gemma2(const Config& c, ModelSpec& m) {
  read_heads(c, m, {.head_dim = 256});
  m.ffn_hidden = c.count("intermediate_size");
  m.vocab = c.count("vocab_size");
  m.max_position = c.count_or("max_position_embeddings", 0);
  expect_gelu(c, "hidden_activation");
  m.activation = Activation::swiglu;
  m.norm = Norm::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.bias = c.flag_or("attention_bias", false);
  m.tied_embeddings = c.flag_or("tie_word_embeddings", true);
  m.dropout = c.probability_or("attention_dropout", 0.0);
  if (c.flag_or("use_bidirectional_attention", false)) {
    c.fail("use_bidirectional_attention", "bidirectional (embedding) Gemma is not supported: parasim models the causal language model");
  }
  set_local_attention(c, m, "layer_types", alternating_or_listed_global_layers(c, m.layers), c.non_negative_null_zero("sliding_window", 4096), false);
}

/// Gemma3ForCausalLM (Gemma3TextConfig at the top level) and Gemma3ForConditionalGeneration (the
/// same under `text_config`; the SigLIP vision tower and its projector are not counted: parasim models
/// the language model, which the images reach as 256 soft tokens each). Gemma-2's shapes with an
/// RMSNorm over each query and key head (qk_norm), no soft-capping by default, and 5 local layers
/// (sliding_window, default 4096) to 1 global one: global_every = sliding_window_pattern (default 6), or
/// the period of a layer_types list, which must end each period in "full_attention". Missing keys take
/// Gemma3TextConfig's defaults (vocab_size 262208, hidden_size 2304, ...), as Transformers does.
void read_gemma3_text(const Config& c, ModelSpec& m, std::optional<bool> tied) {
  read_heads(c, m, {.hidden = 2304, .heads = 8, .kv_heads = 4, .head_dim = 256, .layers = 26});
  m.ffn_hidden = c.count_or("intermediate_size", 9216);
  m.vocab = c.count_or("vocab_size", 262208);
  m.max_position = c.count_or("max_position_embeddings", 131072);
  expect_gelu(c, "hidden_activation");
  m.activation = Activation::swiglu;
  m.norm = Norm::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.bias = c.flag_or("attention_bias", false);
  m.tied_embeddings = tied.value_or(c.flag_or("tie_word_embeddings", true));
  m.dropout = c.probability_or("attention_dropout", 0.0);
  m.qk_norm = true;
  if (c.flag_or("use_bidirectional_attention", false)) {
    c.fail("use_bidirectional_attention", "bidirectional (embedding) Gemma is not supported: parasim models the causal language model");
  }
  const int window = c.non_negative_null_zero("sliding_window", 4096);
  if (c.has("layer_types")) {
    set_local_attention(c, m, "layer_types", global_layers_from_types(c, "layer_types", m.layers), window, false);
    return;
  }
  const int pattern = c.count_or("sliding_window_pattern", 6);
  std::vector<bool> global(static_cast<std::size_t>(m.layers));
  for (int l = 0; l < m.layers; ++l) global[static_cast<std::size_t>(l)] = (l + 1) % pattern == 0;
  set_local_attention(c, m, "sliding_window_pattern", global, window, false);
  if (m.sliding_window > 0) m.global_every = pattern;  // also when the model is shorter than one period
}

void read_gemma3(const Config& c, ModelSpec& m) { read_gemma3_text(c, m, std::nullopt); }
void read_gemma3_multimodal(const Config& c, ModelSpec& m) {
  // The language model's head is tied to its embedding unless the top level says otherwise.
  const Config text = c.sub("text_config");
  read_gemma3_text(text, m, c.has("tie_word_embeddings") ? std::optional<bool>(c.flag_or("tie_word_embeddings", true)) : std::nullopt);
}

// ---------------------------------------------------------------------------------------------------
// Phi-3, OLMo, OLMo-2.

/// Phi3ForCausalLM: Llama's shapes (fused qkv_proj and gate_up_proj hold the same weights), no biases,
/// resid_pdrop / embd_pdrop / attention_dropout as dropout, and a sliding_window on every layer when the
/// config gives one (Phi-3-mini-4k: 2047). partial_rotary_factor changes no shape.
void read_phi3(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, false);
  m.bias = false;
  m.dropout = std::max({m.dropout, c.probability_or("resid_pdrop", 0.0), c.probability_or("embd_pdrop", 0.0)});
  m.sliding_window = c.non_negative_or("sliding_window", 0);
}

/// OlmoForCausalLM: Llama's shapes with a LayerNorm that has neither weight nor bias. It is mapped to
/// Norm::layernorm, which counts 2·h parameters per norm that OLMo does not have: (2 per layer + 1)·2·h,
/// 135,168 for OLMo-1B (0.011%). clip_qkv clamps the projections: no material FLOPs.
void read_olmo(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, true);
  m.norm = Norm::layernorm;
}

/// Olmo2ForCausalLM: Llama's shapes with RMSNorm after attention and after the MLP (two per layer, as
/// counted) and an RMSNorm over the queries and the keys (qk_norm). OLMo-2 norms all heads' queries
/// together (weights of heads x head_dim and kv_heads x head_dim) where ModelSpec counts one head's
/// (2 x head_dim): 7,936 per layer short for OLMo-2 7B, 0.003% of it over 32 layers.
void read_olmo2(const Config& c, ModelSpec& m) {
  read_llama_family(c, m, true);
  m.qk_norm = true;
}

// ---------------------------------------------------------------------------------------------------
// gpt-oss.

/// GptOssForCausalLM: every layer a MoE layer of num_local_experts experts of intermediate_size,
/// num_experts_per_tok per token (gpt-oss's clamped SwiGLU: three matrices' worth of weights, the gate
/// and up projections fused), GQA with head_dim 64, biases on q, k, v, o and on the experts
/// (attention_bias, default true, turns on ModelSpec's bias, which covers both), and sliding_window
/// (128) on every other layer: layer_types alternates sliding_attention and full_attention (global_every
/// 2). Not counted: the attention sinks (one learned logit per head and layer: 64 numbers) and the
/// router's bias (num_local_experts per layer); both are under 0.001% of the parameters and cost no
/// material FLOPs. swiglu_limit, the yarn rope_scaling and the router's auxiliary loss change no cost.
void read_gpt_oss(const Config& c, ModelSpec& m) {
  read_heads(c, m, {.head_dim = 64});
  m.ffn_hidden = c.count("intermediate_size");
  m.vocab = c.count("vocab_size");
  m.max_position = c.count_or("max_position_embeddings", 0);
  c.expect_one_of("hidden_act", "silu", kSiluNames);
  m.activation = Activation::swiglu;
  m.norm = Norm::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.bias = c.flag_or("attention_bias", true);
  m.tied_embeddings = c.flag_or("tie_word_embeddings", false);
  m.dropout = c.probability_or("attention_dropout", 0.0);
  m.experts = c.count_or("num_local_experts", 128);
  m.top_k = c.count_or("num_experts_per_tok", 4);
  m.expert_ffn_hidden = m.ffn_hidden;
  if (m.top_k > m.experts) c.fail("num_experts_per_tok", fmt::format("{} experts per token exceed the {} experts", m.top_k, m.experts));
  set_local_attention(c, m, "layer_types", alternating_or_listed_global_layers(c, m.layers), c.non_negative_null_zero("sliding_window", 128), false);
}

// ---------------------------------------------------------------------------------------------------
// Llama-4.

/// Llama4ForCausalLM (Llama4TextConfig at the top level) and Llama4ForConditionalGeneration (the same
/// under `text_config`; the vision encoder and its projector are not counted). MoE layers are those in
/// moe_layers, or every interleave_moe_layer_step-th (layers step−1, 2·step−1, ...): num_local_experts
/// experts of intermediate_size, num_experts_per_tok per token, and one shared expert of
/// intermediate_size every token goes through; the other layers keep a dense MLP of
/// intermediate_size_mlp. Layers with RoPE attend within chunks of attention_chunk_size; the NoPE layers
/// (no_rope_layers 0: every no_rope_layer_interval-th, default 4) attend globally (global_every 4).
/// use_qk_norm is an L2 norm without weights on the RoPE layers, and attn_temperature_tuning scales
/// the NoPE layers' queries: no parameters, no material FLOPs. Missing keys take Llama4TextConfig's
/// defaults (Scout's shapes), as Transformers does.
void read_llama4_text(const Config& c, ModelSpec& m, std::optional<bool> tied) {
  read_heads(c, m, {.hidden = 5120, .heads = 40, .kv_heads = 8, .head_dim = 128, .layers = 48});
  m.vocab = c.count_or("vocab_size", 202048);
  m.max_position = c.count_or("max_position_embeddings", 131072);
  c.expect_one_of("hidden_act", "silu", kSiluNames);
  m.activation = Activation::swiglu;
  m.norm = Norm::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.bias = c.flag_or("attention_bias", false);
  m.tied_embeddings = tied.value_or(c.flag_or("tie_word_embeddings", false));
  m.dropout = c.probability_or("attention_dropout", 0.0);

  m.ffn_hidden = c.count_or("intermediate_size_mlp", 16384);
  m.experts = c.count_or("num_local_experts", 16);
  m.top_k = c.count_or("num_experts_per_tok", 1);
  if (m.top_k > m.experts) c.fail("num_experts_per_tok", fmt::format("{} experts per token exceed the {} experts", m.top_k, m.experts));
  m.expert_ffn_hidden = c.count_or("intermediate_size", 8192);
  m.shared_experts = 1;
  m.shared_expert_ffn_hidden = m.expert_ffn_hidden;
  std::vector<bool> moe(static_cast<std::size_t>(m.layers));
  if (c.has("moe_layers")) {
    for (const int l : c.int_list("moe_layers")) {
      if (l >= m.layers) c.fail("moe_layers", fmt::format("layer {} is out of range: the model has {} layers", l, m.layers));
      moe[static_cast<std::size_t>(l)] = true;
    }
    place_moe_layers(c, m, "moe_layers", moe);
  } else {
    const int step = c.count_or("interleave_moe_layer_step", 1);
    for (int l = 0; l < m.layers; ++l) moe[static_cast<std::size_t>(l)] = (l + 1) % step == 0;
    place_moe_layers(c, m, "interleave_moe_layer_step", moe);
  }

  const int chunk = c.non_negative_null_zero("attention_chunk_size", 8192);
  std::vector<bool> global(static_cast<std::size_t>(m.layers));
  std::string_view pattern_key = "no_rope_layer_interval";
  if (c.has("layer_types")) {
    global = global_layers_from_types(c, "layer_types", m.layers);
    pattern_key = "layer_types";
  } else if (const auto rope = c.int_list("no_rope_layers"); !rope.empty()) {
    if (static_cast<int>(rope.size()) < m.layers) c.fail("no_rope_layers", fmt::format("expected one entry per layer ({}), found {}", m.layers, rope.size()));
    for (int l = 0; l < m.layers; ++l) global[static_cast<std::size_t>(l)] = rope[static_cast<std::size_t>(l)] == 0;
    pattern_key = "no_rope_layers";
  } else {
    const int interval = c.count_or("no_rope_layer_interval", 4);
    for (int l = 0; l < m.layers; ++l) global[static_cast<std::size_t>(l)] = (l + 1) % interval == 0;
  }
  set_local_attention(c, m, pattern_key, global, chunk, true);
}

void read_llama4(const Config& c, ModelSpec& m) { read_llama4_text(c, m, std::nullopt); }
void read_llama4_multimodal(const Config& c, ModelSpec& m) {
  const Config text = c.sub("text_config");
  read_llama4_text(text, m, c.flag_or("tie_word_embeddings", false));
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
    {"DeepseekV2ForCausalLM", "deepseek-v2", read_deepseek_v2},
    {"DeepseekV3ForCausalLM", "deepseek-v3", read_deepseek_v3},
    {"Qwen3ForCausalLM", "qwen3", read_qwen3},
    {"Qwen3MoeForCausalLM", "qwen3-moe", read_qwen3_moe},
    {"Gemma2ForCausalLM", "gemma2", read_gemma2},
    {"Gemma3ForCausalLM", "gemma3", read_gemma3},
    {"Gemma3ForConditionalGeneration", "gemma3", read_gemma3_multimodal},
    {"Phi3ForCausalLM", "phi3", read_phi3},
    {"OlmoForCausalLM", "olmo", read_olmo},
    {"Olmo2ForCausalLM", "olmo2", read_olmo2},
    {"GptOssForCausalLM", "gpt-oss", read_gpt_oss},
    {"Llama4ForCausalLM", "llama4", read_llama4},
    {"Llama4ForConditionalGeneration", "llama4", read_llama4_multimodal},
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

namespace {

// The config keys a model field comes from, in the order the readers look for them.
const std::map<std::string, std::vector<std::string_view>>& config_keys() {
  static const std::map<std::string, std::vector<std::string_view>> keys{
      {"layers", {"num_hidden_layers", "n_layer", "num_layers"}},
      {"hidden", {"hidden_size", "n_embd", "d_model"}},
      {"heads", {"num_attention_heads", "n_head"}},
      {"kv_heads", {"num_key_value_heads"}},
      {"head_dim", {"head_dim", "qk_nope_head_dim"}},
      {"ffn_hidden", {"intermediate_size", "intermediate_size_mlp", "n_inner"}},
      {"vocab", {"vocab_size"}},
      {"max_position", {"max_position_embeddings", "n_positions"}},
      {"experts", {"n_routed_experts", "num_local_experts", "num_experts"}},
      {"top_k", {"num_experts_per_tok"}},
      {"shared_experts", {"n_shared_experts"}},
      {"expert_ffn_hidden", {"moe_intermediate_size", "intermediate_size"}},
      {"sliding_window", {"sliding_window"}},
      {"attention_chunk", {"attention_chunk_size"}},
      {"mtp_layers", {"num_nextn_predict_layers"}},
      {"mla.q_lora_rank", {"q_lora_rank"}},
      {"mla.kv_lora_rank", {"kv_lora_rank"}},
      {"mla.qk_nope_head_dim", {"qk_nope_head_dim"}},
      {"mla.qk_rope_head_dim", {"qk_rope_head_dim"}},
      {"mla.v_head_dim", {"v_head_dim"}},
  };
  return keys;
}

// A shape past parasim's bounds is an error at the config key it came from.
void check_limits(const Config& c, const ModelSpec& m) {
  const auto problem = model_limit_problem(m);
  if (!problem) return;
  std::string_view key = problem->field;
  if (const auto it = config_keys().find(problem->field); it != config_keys().end()) {
    for (auto k : it->second) {
      if (c.has(k)) {
        key = k;
        break;
      }
    }
  }
  c.fail(key, fmt::format("{:.0f} is out of range for the model's {}: must be <= {:.0f}", problem->value, problem->field, problem->max));
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
  } catch (const Json::out_of_range&) {
    // A number beyond a double's range (1e400): nlohmann says which, not where.
    const auto [offset, number] = overflowing_number(text);
    throw InputError(location_at(display_name, text, offset), {}, fmt::format("{} is out of range for a number", number));
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
    // Point at the class name itself: the first string inside the list. No "did you mean": class names
    // that differ by a letter or two are different models (OlmoForCausalLM, OlmoeForCausalLM), so the
    // nearest supported one would mislead; the list says what is supported.
    const std::size_t list = config.value_offset("architectures");
    const std::size_t name = list == std::string::npos ? list : text.find('"', list);
    throw InputError(name == std::string::npos ? config.where("architectures") : config.where_text(name), "architectures",
                     fmt::format("'{}' is not supported; supported: {}", hf_class, join_names(supported)));
  }
  config.set_class(mapping->hf_class);

  ModelSpec m;
  m.architecture = std::string(mapping->architecture);
  mapping->read(config, m);
  m.name = directory_name(display_name);
  if (m.name.empty()) m.name = hf_class;
  check_limits(config, m);
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
