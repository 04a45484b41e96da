#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/scenario.hpp"
#include "workload/hf_config.hpp"

using namespace parasim;
using namespace parasim::workload;

namespace {

std::string import_error(const std::string& path) {
  try {
    import_hf_config(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

std::string text_error(const std::string& json) {
  try {
    import_hf_config_text(json, "m/config.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

/// The classes the importer reads, in the order its errors list them.
const std::string kSupported =
    "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel, GPTNeoXForCausalLM, MixtralForCausalLM, "
    "Qwen2MoeForCausalLM, BertForMaskedLM, DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, "
    "Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3ForConditionalGeneration, Phi3ForCausalLM, OlmoForCausalLM, Olmo2ForCausalLM, "
    "GptOssForCausalLM, Llama4ForCausalLM, Llama4ForConditionalGeneration";

/// |got / published − 1| <= 0.5%.
bool within_half_percent(double got, double published) { return std::abs(got / published - 1) <= 0.005; }

}  // namespace

// Counts below: h hidden, l layers, a heads, k kv heads, d head width, f MLP width, V vocabulary.
// Attention h·(a·d + 2·k·d) + a·d·h; SwiGLU MLP 3·h·f; RMSNorm h per norm (two per layer, one final);
// untied head V·h beside the embedding V·h.

TEST_CASE("hugging face: Llama-2-7B imports as MHA Llama with 6,738,415,616 parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/llama-2-7b/config.json");
  CHECK(m.name == "llama-2-7b");
  CHECK(m.architecture == "llama");
  CHECK(m.layers == 32);
  CHECK(m.hidden == 4096);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 32);
  CHECK(m.head_dim == 128);
  CHECK(m.ffn_hidden == 11008);
  CHECK(m.vocab == 32000);
  CHECK(m.max_position == 4096);
  CHECK(m.activation == Activation::swiglu);
  CHECK(m.norm == Norm::rmsnorm);
  CHECK(m.position == PositionEmbedding::rope);
  CHECK_FALSE(m.bias);
  CHECK_FALSE(m.qkv_bias);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.dropout == 0.0);
  // h=4096, l=32, a=k=32, f=11008, V=32000.
  // attention 4·4096² = 67,108,864; MLP 3·4096·11008 = 135,266,304; norms 2·4096 = 8,192
  // per layer 202,383,360; × 32 = 6,476,267,520
  // embedding + head 2·32000·4096 = 262,144,000; final norm 4,096
  // total 6,476,267,520 + 262,144,000 + 4,096 = 6,738,415,616
  const ParameterCount p = count_parameters(m);
  CHECK(p.per_layer() == 202'383'360.0);
  CHECK(p.total() == 6'738'415'616.0);
}

TEST_CASE("hugging face: Llama-3-8B imports with GQA (8 kv heads) and 8,030,261,248 parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/llama-3-8b/config.json");
  CHECK(m.name == "llama-3-8b");
  CHECK(m.architecture == "llama");
  CHECK(m.layers == 32);
  CHECK(m.hidden == 4096);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.ffn_hidden == 14336);
  CHECK(m.vocab == 128256);
  CHECK(m.max_position == 8192);
  CHECK_FALSE(m.bias);
  CHECK_FALSE(m.tied_embeddings);
  // h=4096, l=32, a=32, k=8, d=128, f=14336, V=128256.
  // attention 4096·(4096 + 2·1024) + 4096·4096 = 25,165,824 + 16,777,216 = 41,943,040
  // MLP 3·4096·14336 = 176,160,768; norms 8,192; per layer 218,112,000; × 32 = 6,979,584,000
  // embedding + head 2·128256·4096 = 1,050,673,152; final norm 4,096
  // total 6,979,584,000 + 1,050,673,152 + 4,096 = 8,030,261,248
  const ParameterCount p = count_parameters(m);
  CHECK(p.attention == 41'943'040.0);
  CHECK(p.total() == 8'030'261'248.0);
}

TEST_CASE("hugging face: Mistral-7B imports with 7,241,732,096 parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/mistral-7b/config.json");
  CHECK(m.name == "mistral-7b");
  CHECK(m.architecture == "mistral");
  CHECK(m.layers == 32);
  CHECK(m.hidden == 4096);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 8);
  CHECK(m.ffn_hidden == 14336);
  CHECK(m.vocab == 32000);
  CHECK(m.max_position == 32768);
  CHECK(m.activation == Activation::swiglu);
  // Same layers as Llama-3-8B: per layer 218,112,000; × 32 = 6,979,584,000
  // embedding + head 2·32000·4096 = 262,144,000; final norm 4,096
  // total 6,979,584,000 + 262,144,000 + 4,096 = 7,241,732,096
  CHECK(count_parameters(m).total() == 7'241'732'096.0);
}

TEST_CASE("hugging face: Qwen2-7B imports with QKV biases and 7,615,616,512 parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/qwen2-7b/config.json");
  CHECK(m.name == "qwen2-7b");
  CHECK(m.architecture == "qwen2");
  CHECK(m.layers == 28);
  CHECK(m.hidden == 3584);
  CHECK(m.heads == 28);
  CHECK(m.kv_heads == 4);
  CHECK(m.head_dim == 128);
  CHECK(m.ffn_hidden == 18944);
  CHECK(m.vocab == 152064);
  CHECK_FALSE(m.bias);
  CHECK(m.qkv_bias);
  // h=3584, l=28, a=28, k=4, d=128, f=18944, V=152064.
  // attention 3584·(3584 + 2·512) + 3584·3584 = 16,515,072 + 12,845,056 = 29,360,128,
  //   QKV biases 3584 + 2·512 = 4,608 → 29,364,736
  // MLP 3·3584·18944 = 203,685,888; norms 2·3584 = 7,168; per layer 233,057,792; × 28 = 6,525,618,176
  // embedding + head 2·152064·3584 = 1,089,994,752; final norm 3,584
  // total 6,525,618,176 + 1,089,994,752 + 3,584 = 7,615,616,512
  const ParameterCount p = count_parameters(m);
  CHECK(p.attention == 29'364'736.0);
  CHECK(p.total() == 7'615'616'512.0);
}

TEST_CASE("hugging face: GPT-2 imports with learned positions, tied head and 124,439,808 parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/gpt2/config.json");
  CHECK(m.name == "gpt2");
  CHECK(m.architecture == "gpt2");
  CHECK(m.layers == 12);
  CHECK(m.hidden == 768);
  CHECK(m.heads == 12);
  CHECK(m.kv_heads == 12);
  CHECK(m.head_dim == 64);
  CHECK(m.ffn_hidden == 3072);  // n_inner absent: 4·768
  CHECK(m.vocab == 50257);
  CHECK(m.max_position == 1024);
  CHECK(m.activation == Activation::gelu);
  CHECK(m.norm == Norm::layernorm);
  CHECK(m.position == PositionEmbedding::learned);
  CHECK(m.bias);
  CHECK(m.tied_embeddings);
  CHECK(m.dropout == doctest::Approx(0.1).epsilon(1e-12));
  // h=768, l=12, f=3072, V=50257, 1024 positions.
  // attention 4·768² + 4·768 = 2,359,296 + 3,072 = 2,362,368
  // MLP 2·768·3072 + 3072 + 768 = 4,718,592 + 3,840 = 4,722,432
  // LayerNorms 2·2·768 = 3,072; per layer 7,087,872; × 12 = 85,054,464
  // token embedding 50257·768 = 38,597,376 (tied: no head); positions 1024·768 = 786,432; final norm 1,536
  // total 85,054,464 + 38,597,376 + 786,432 + 1,536 = 124,439,808
  const ParameterCount p = count_parameters(m);
  CHECK(p.lm_head == 0.0);
  CHECK(p.position == 786'432.0);
  CHECK(p.total() == 124'439'808.0);
}

TEST_CASE("hugging face: GPT-NeoX-20B imports with RoPE, biases and 20,554,567,680 parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/gpt-neox-20b/config.json");
  CHECK(m.name == "gpt-neox-20b");
  CHECK(m.architecture == "gpt-neox");
  CHECK(m.layers == 44);
  CHECK(m.hidden == 6144);
  CHECK(m.heads == 64);
  CHECK(m.head_dim == 96);
  CHECK(m.ffn_hidden == 24576);
  CHECK(m.vocab == 50432);
  CHECK(m.max_position == 2048);
  CHECK(m.activation == Activation::gelu);
  CHECK(m.norm == Norm::layernorm);
  CHECK(m.position == PositionEmbedding::rope);
  CHECK(m.bias);
  CHECK_FALSE(m.tied_embeddings);
  // h=6144, l=44, f=24576, V=50432.
  // attention 4·6144² + 4·6144 = 150,994,944 + 24,576 = 151,019,520
  // MLP 2·6144·24576 + 24576 + 6144 = 301,989,888 + 30,720 = 302,020,608
  // LayerNorms 4·6144 = 24,576; per layer 453,064,704; × 44 = 19,934,846,976
  // embedding + head 2·50432·6144 = 619,708,416; final norm 12,288
  // total 19,934,846,976 + 619,708,416 + 12,288 = 20,554,567,680
  CHECK(count_parameters(m).total() == 20'554'567'680.0);
}

TEST_CASE("hugging face: bad config files fail with file, line, column and key") {
  // "FalconForCausalLM" stands on line 5, column 5 (inside the architectures list).
  CHECK(import_error("tests/data/hf/bad/falcon-7b/config.json") ==
        "tests/data/hf/bad/falcon-7b/config.json:5:5: error: architectures: 'FalconForCausalLM' is not supported; supported: " + kSupported);
  // The trailing comma after vocab_size: the parser fails on the '}' at line 11, column 1.
  CHECK(import_error("tests/data/hf/bad/malformed/config.json") ==
        "tests/data/hf/bad/malformed/config.json:11:1: error: malformed JSON: syntax error while parsing object key - "
        "unexpected '}'; expected string literal");
  // A missing key points at the object that lacks it, as the YAML reader does.
  CHECK(import_error("tests/data/hf/bad/missing-hidden-size/config.json") ==
        "tests/data/hf/bad/missing-hidden-size/config.json:1:1: error: missing required key 'hidden_size' "
        "(needed for LlamaForCausalLM)");
  CHECK(import_error("tests/data/hf/none/config.json") == "tests/data/hf/none/config.json: error: cannot open file: no such file");
}

TEST_CASE("hugging face: bad values point at the value of their key") {
  // Line 2 is the key; the value starts after `"hidden_size": ` (4 + 15 characters) at column 18.
  CHECK(text_error("{\"architectures\": [\"LlamaForCausalLM\"],\n  \"hidden_size\": \"4096\"}") ==
        "m/config.json:2:18: error: hidden_size: expected a positive integer, found \"4096\"");
  const std::string llama =
      "{\n"
      "  \"architectures\": [\"LlamaForCausalLM\"],\n"
      "  \"hidden_size\": 4096,\n"
      "  \"intermediate_size\": 11008,\n"
      "  \"num_attention_heads\": 32,\n"
      "  \"num_hidden_layers\": 32,\n"
      "  \"vocab_size\": 32000";
  CHECK(text_error(llama + ",\n  \"num_key_value_heads\": 5\n}") ==
        "m/config.json:8:26: error: num_key_value_heads: 5 key/value heads do not divide 32 attention heads");
  const std::string no_layers =
      "{\n"
      "  \"architectures\": [\"LlamaForCausalLM\"],\n"
      "  \"hidden_size\": 4096,\n"
      "  \"intermediate_size\": 11008,\n"
      "  \"num_attention_heads\": 32,\n"
      "  \"num_hidden_layers\": 0,\n"
      "  \"vocab_size\": 32000\n"
      "}";
  // `  "num_hidden_layers": 0`: the value at column 2 + 19 + 2 + 1 = 24 of line 6.
  CHECK(text_error(no_layers) == "m/config.json:6:24: error: num_hidden_layers: 0 is out of range: must be >= 1");
  CHECK(text_error(llama + ",\n  \"hidden_act\": \"gelu\"\n}") ==
        "m/config.json:8:17: error: hidden_act: 'gelu' is not supported for LlamaForCausalLM; supported: silu, swish");
  CHECK(text_error(llama + ",\n  \"tie_word_embeddings\": 1\n}") ==
        "m/config.json:8:26: error: tie_word_embeddings: expected true or false, found 1");
  // No "did you mean" between class names, even for a near miss: a near name is usually another model.
  CHECK(text_error("{\"architectures\": [\"LLamaForCausalLM\"]}") ==
        "m/config.json:1:20: error: architectures: 'LLamaForCausalLM' is not supported; supported: " + kSupported);
  CHECK(text_error("{\"model_type\": \"llama\"}") ==
        "m/config.json:1:1: error: missing required key 'architectures' (the model class; supported: " + kSupported + ")");
  CHECK(text_error("[1, 2]") == "m/config.json:1:1: error: expected a Hugging Face config (a JSON object), found a list");
  CHECK(text_error("") ==
        "m/config.json:1:1: error: malformed JSON: syntax error while parsing value - unexpected end of input; expected "
        "'[', '{', or a literal");
}

TEST_CASE("hugging face: the same key inside a nested object is not mistaken for the top-level one") {
  // A nested "hidden_size" comes first in the text; the error must point at line 3, the top-level one.
  const std::string json =
      "{\"architectures\": [\"LlamaForCausalLM\"],\n"
      " \"text_config\": {\"hidden_size\": 1},\n"
      " \"hidden_size\": -1}";
  CHECK(text_error(json) == "m/config.json:3:17: error: hidden_size: -1 is out of range: must be >= 1");
}

TEST_CASE("hugging face: defaults and names") {
  // No directory: the model takes its class name. GPT-2 with n_inner null uses 4·n_embd and ties.
  const std::string gpt2 =
      R"({"architectures": ["GPT2LMHeadModel"], "n_embd": 64, "n_layer": 2, "n_head": 4, "n_inner": null,
          "vocab_size": 100, "n_positions": 32})";
  const ModelSpec g = import_hf_config_text(gpt2, "config.json");
  CHECK(g.name == "GPT2LMHeadModel");
  CHECK(g.ffn_hidden == 256);
  CHECK(g.tied_embeddings);
  CHECK(g.dropout == doctest::Approx(0.1).epsilon(1e-12));  // GPT2Config's resid_pdrop default
  CHECK(import_hf_config_text(gpt2, "./config.json").name == "GPT2LMHeadModel");
  CHECK(import_hf_config_text(gpt2, "/models/tiny/./config.json").name == "tiny");

  // Llama with an explicit head_dim that does not divide the width, and attention biases.
  const std::string llama =
      R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 100, "num_attention_heads": 3, "head_dim": 32,
          "num_hidden_layers": 1, "intermediate_size": 200, "vocab_size": 10, "attention_bias": true,
          "attention_dropout": 0.05})";
  const ModelSpec l = import_hf_config_text(llama, "x/config.json");
  CHECK(l.head_dim == 32);
  CHECK(l.q_width() == 96);
  CHECK(l.kv_heads == 3);
  CHECK(l.bias);
  CHECK(l.max_position == 0);
  CHECK(l.dropout == doctest::Approx(0.05).epsilon(1e-12));
}

TEST_CASE("hugging face: Mixtral-8x7B imports as 8 experts, top-2: 46.7B parameters, 12.9B active") {
  const ModelSpec m = import_hf_config("tests/data/hf/mixtral-8x7b/config.json");
  CHECK(m.architecture == "mixtral");
  CHECK(m.experts == 8);
  CHECK(m.top_k == 2);
  CHECK(m.expert_ffn_hidden == 14336);
  CHECK(m.shared_experts == 0);
  CHECK(m.moe_layers() == 32);
  // As tests/workload/model_test.cpp counts it from the bundled YAML.
  CHECK(count_parameters(m).total() == 46'702'792'704.0);
  CHECK(count_parameters(m).active() == 12'879'925'248.0);
}

TEST_CASE("hugging face: Qwen1.5-MoE-A2.7B imports with a gated shared expert: 14.3B parameters, 2.7B active") {
  const ModelSpec m = import_hf_config("tests/data/hf/qwen1.5-moe-a2.7b/config.json");
  CHECK(m.architecture == "qwen2-moe");
  CHECK(m.qkv_bias);
  CHECK(m.experts == 60);
  CHECK(m.top_k == 4);
  CHECK(m.expert_ffn_hidden == 1408);
  CHECK(m.shared_experts == 1);
  CHECK(m.shared_expert_ffn_hidden == 5632);
  CHECK(m.shared_expert_gate);
  // h 2048, 24 layers, 16 heads of 128 (MHA), vocab 151936, untied.
  // attention 2048·6144 + 2048² + 6144 (q/k/v biases) = 16,783,360; norms 4,096; router 2048·60
  // = 122,880; expert 3·2048·1408 = 8,650,752; shared 3·2048·5632 + gate 2048 = 34,605,056.
  // per layer 16,783,360 + 4,096 + 122,880 + 60 x 8,650,752 + 34,605,056 = 570,560,512; x 24
  // = 13,693,452,288 + 2·151936·2048 = 622,329,856 + 2,048 = 14,315,784,192.
  // active: (16,910,336 + 4 x 8,650,752 + 34,605,056) x 24 = 2,066,841,600 + 622,331,904 = 2,689,173,504.
  const auto p = count_parameters(m);
  CHECK(p.total() == 14'315'784'192.0);
  CHECK(p.active() == 2'689'173'504.0);
}

TEST_CASE("hugging face: Qwen2-MoE layouts parasim cannot state are errors at their key") {
  const std::string qwen =
      "{\n"
      "  \"architectures\": [\"Qwen2MoeForCausalLM\"],\n"
      "  \"hidden_size\": 2048, \"intermediate_size\": 5632, \"num_attention_heads\": 16, \"num_hidden_layers\": 24,\n"
      "  \"vocab_size\": 151936, \"num_experts\": 60, \"num_experts_per_tok\": 4, \"moe_intermediate_size\": 1408,\n"
      "  \"shared_expert_intermediate_size\": 5632";
  // Dense layers 0 and 5 follow no rule of first_dense_layers and moe_layer_frequency.
  CHECK(text_error(qwen + ",\n  \"mlp_only_layers\": [0, 5]\n}") ==
        "m/config.json:6:22: error: mlp_only_layers: dense layers at chosen positions are not supported (parasim places dense layers by "
        "first_dense_layers and moe_layer_frequency); write a model YAML instead");
  // decoder_sparse_step 2: layers 1, 3, 5, ... are MoE, i.e. after one dense layer every second one.
  const auto m = import_hf_config_text(qwen + ",\n  \"decoder_sparse_step\": 2\n}", "m/config.json");
  CHECK(m.first_dense_layers == 1);
  CHECK(m.moe_layer_frequency == 2);
  CHECK_FALSE(m.moe_layer(0));
  CHECK(m.moe_layer(1));
  CHECK_FALSE(m.moe_layer(2));
  CHECK(m.moe_layers() == 12);
  // Dense layers 0 and 1, then every layer MoE: first_dense_layers 2.
  const auto two = import_hf_config_text(qwen + ",\n  \"mlp_only_layers\": [0, 1]\n}", "m/config.json");
  CHECK(two.first_dense_layers == 2);
  CHECK(two.moe_layer_frequency == 1);
  CHECK(two.moe_layers() == 22);
}

TEST_CASE("hugging face: BertForMaskedLM imports as a post-LN encoder with its masked-LM head, 335,174,458 parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/bert-large-uncased/config.json");
  CHECK(m.architecture == "bert");
  CHECK_FALSE(m.causal);
  CHECK(m.post_norm);
  CHECK(m.mlm_head);
  CHECK(m.token_types == 2);
  CHECK(m.position == PositionEmbedding::learned);
  CHECK(m.tied_embeddings);
  CHECK(m.dropout == 0.1);
  // h 1024, 24 layers, V 30522, 512 positions, 2 segment types.
  // embeddings 30522·1024 + 512·1024 + 2·1024 + LayerNorm 2·1024 = 31,782,912
  // per layer 12h² + 13h = 12,582,912 + 13,312 = 12,596,224; x 24 = 302,309,376
  // head: dense 1024² + 1024 = 1,049,600, LayerNorm 2,048, decoder bias 30,522 = 1,082,170 (decoder tied)
  // total 31,782,912 + 302,309,376 + 1,082,170 = 335,174,458 (BertForMaskedLM, no pooler)
  const auto p = count_parameters(m);
  CHECK(p.per_layer() == 12'596'224.0);
  CHECK(p.embedding + p.position + p.token_type + p.embedding_norm == 31'782'912.0);
  CHECK(p.head_transform == 1'082'170.0);
  CHECK(p.final_norm == 0.0);
  CHECK(p.total() == 335'174'458.0);
}

TEST_CASE("hugging face: T5 is an encoder-decoder model; the error says what is missing") {
  CHECK(import_error("tests/data/hf/bad/t5-base/config.json") ==
        "tests/data/hf/bad/t5-base/config.json:3:5: error: architectures: 'T5ForConditionalGeneration' is an encoder-decoder model: parasim "
        "models one stack of self-attention layers (decoder-only or encoder-only); the decoder's cross-attention over the encoder output "
        "and the second stack are not modelled");
}

// ---------------------------------------------------------------------------------------------------
// Architectures trained today. Each test checks the imported fields and the total against the count
// its authors publish, within 0.5%.

TEST_CASE("hugging face: DeepSeek-V3 imports MLA, 256 experts and MTP: 671B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/deepseek-v3/config.json");
  CHECK(m.name == "deepseek-v3");
  CHECK(m.architecture == "deepseek-v3");
  CHECK(m.layers == 61);
  CHECK(m.hidden == 7168);
  CHECK(m.heads == 128);
  CHECK(m.kv_heads == 128);  // MLA: kv_heads = heads
  CHECK(m.head_dim == 192);  // qk_nope_head_dim + qk_rope_head_dim
  CHECK(m.is_mla());
  CHECK(m.mla == LatentAttention{1536, 512, 128, 64, 128});
  CHECK(m.ffn_hidden == 18432);  // the first three (dense) layers
  CHECK(m.vocab == 129280);
  CHECK(m.activation == Activation::swiglu);
  CHECK(m.norm == Norm::rmsnorm);
  CHECK_FALSE(m.bias);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.experts == 256);
  CHECK(m.top_k == 8);
  CHECK(m.shared_experts == 1);
  CHECK(m.expert_ffn_hidden == 2048);
  CHECK(m.shared_expert_ffn_hidden == 2048);
  CHECK_FALSE(m.shared_expert_gate);
  CHECK(m.first_dense_layers == 3);
  CHECK(m.moe_layer_frequency == 1);
  CHECK(m.moe_layers() == 58);
  CHECK(m.mtp_layers == 1);
  // Node-limited routing: 8 groups of 32 experts, a token's from at most 4.
  CHECK(m.routing_groups == 8);
  CHECK(m.routing_groups_per_token == 4);
  // The bundled model YAML says the same as the checkpoint's config.
  CHECK(m.mla == sim::load_model("scenarios/models/deepseek-v3.yaml").mla);
  CHECK(count_parameters(m).total() == count_parameters(sim::load_model("scenarios/models/deepseek-v3.yaml")).total());
  CHECK(m.sliding_window == 0);
  // DeepSeek-V3 Technical Report (arXiv 2412.19437) and model card: 671B total parameters, 37B activated
  // per token; the checkpoint's 685B adds the 14B MTP module, counted apart.
  const auto p = count_parameters(m);
  CHECK(within_half_percent(p.total(), 671e9));
  CHECK(p.active() == doctest::Approx(37e9).epsilon(0.02));  // "37B": rounded
  CHECK(p.mtp > 11e9);  // one MoE layer and the 2h x h projection; its embedding and head are the model's
  CHECK(p.mtp < 14e9);
}

TEST_CASE("hugging face: DeepSeek-V2-Lite imports MLA without a query latent: 15.7B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/deepseek-v2-lite/config.json");
  CHECK(m.architecture == "deepseek-v2");
  CHECK(m.mla == LatentAttention{0, 512, 128, 64, 128});  // q_lora_rank null
  CHECK(m.kv_heads == 16);
  CHECK(m.head_dim == 192);
  CHECK(m.experts == 64);
  CHECK(m.top_k == 6);
  CHECK(m.shared_experts == 2);
  CHECK(m.expert_ffn_hidden == 1408);
  CHECK(m.first_dense_layers == 1);
  CHECK(m.moe_layers() == 26);
  CHECK(m.mtp_layers == 0);
  // DeepSeek-V2 paper (arXiv 2405.04434) and the DeepSeek-V2-Lite model card: 15.7B total parameters.
  CHECK(within_half_percent(count_parameters(m).total(), 15.7e9));
}

TEST_CASE("hugging face: DeepSeek defaults, dense models and moe_layer_freq") {
  const std::string base =
      "{\n"
      "  \"architectures\": [\"DeepseekV3ForCausalLM\"],\n"
      "  \"hidden_size\": 1024, \"num_hidden_layers\": 12, \"num_attention_heads\": 8, \"intermediate_size\": 4096,\n"
      "  \"vocab_size\": 1000";
  // Absent keys take DeepseekV3Config's defaults: q_lora_rank 1536, 256 experts, top-8, 1 shared, 3 dense.
  const auto d = import_hf_config_text(base + "\n}", "m/config.json");
  CHECK(d.mla == LatentAttention{1536, 512, 128, 64, 128});
  CHECK(d.experts == 256);
  CHECK(d.top_k == 8);
  CHECK(d.shared_experts == 1);
  CHECK(d.expert_ffn_hidden == 2048);
  CHECK(d.first_dense_layers == 3);
  // The reference code's rule: layer l is MoE when l >= first_k_dense_replace and l % moe_layer_freq == 0:
  // with 3 and 2, layers 4, 6, 8, 10.
  const auto f = import_hf_config_text(base + ", \"moe_layer_freq\": 2\n}", "m/config.json");
  CHECK(f.first_dense_layers == 4);
  CHECK(f.moe_layer_frequency == 2);
  CHECK(f.moe_layers() == 4);
  CHECK_FALSE(f.moe_layer(5));
  // n_routed_experts null: a dense model with MLA.
  const auto dense = import_hf_config_text(base + ", \"n_routed_experts\": null\n}", "m/config.json");
  CHECK(dense.experts == 0);
  CHECK(dense.is_mla());
  CHECK(text_error(base + ", \"first_k_dense_replace\": 12\n}") ==
        "m/config.json:4:48: error: first_k_dense_replace: 12 dense layers leave no MoE layer among 12");
  // DeepseekV2Config has no default for num_experts_per_tok.
  CHECK(text_error("{\"architectures\": [\"DeepseekV2ForCausalLM\"], \"hidden_size\": 1024, \"num_hidden_layers\": 4, "
                   "\"num_attention_heads\": 8, \"intermediate_size\": 4096, \"vocab_size\": 1000}") ==
        "m/config.json:1:1: error: missing required key 'num_experts_per_tok' (needed for DeepseekV2ForCausalLM)");
}

TEST_CASE("hugging face: Qwen3-8B imports head_dim 128 and q/k norms: 8.19B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/qwen3-8b/config.json");
  CHECK(m.architecture == "qwen3");
  CHECK(m.layers == 36);
  CHECK(m.hidden == 4096);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.ffn_hidden == 12288);
  CHECK(m.qk_norm);
  CHECK_FALSE(m.bias);
  CHECK_FALSE(m.qkv_bias);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.sliding_window == 0);  // use_sliding_window false
  CHECK(m.experts == 0);
  // Qwen3-8B model card: 8.2B parameters (6.95B non-embedding); Qwen3 Technical Report (arXiv 2505.09388).
  const auto p = count_parameters(m);
  CHECK(within_half_percent(p.total(), 8.19e9));
  CHECK(within_half_percent(p.total() - p.embedding - p.lm_head, 6.95e9));
}

TEST_CASE("hugging face: Qwen3-30B-A3B imports 128 experts, top-8, no shared expert: 30.5B parameters, 3.3B active") {
  const ModelSpec m = import_hf_config("tests/data/hf/qwen3-30b-a3b/config.json");
  CHECK(m.architecture == "qwen3-moe");
  CHECK(m.layers == 48);
  CHECK(m.hidden == 2048);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 4);
  CHECK(m.head_dim == 128);  // given: not hidden / heads (64)
  CHECK(m.qk_norm);
  CHECK(m.experts == 128);
  CHECK(m.top_k == 8);
  CHECK(m.expert_ffn_hidden == 768);
  CHECK(m.shared_experts == 0);
  CHECK(m.first_dense_layers == 0);
  CHECK(m.moe_layer_frequency == 1);
  CHECK(m.moe_layers() == 48);
  // Qwen3-30B-A3B model card: 30.5B parameters in total, 3.3B activated.
  const auto p = count_parameters(m);
  CHECK(within_half_percent(p.total(), 30.5e9));
  CHECK(p.active() == doctest::Approx(3.3e9).epsilon(0.02));  // "3.3B": rounded
}

TEST_CASE("hugging face: Qwen3 layouts parasim cannot state are errors at their key") {
  const std::string moe =
      "{\n"
      "  \"architectures\": [\"Qwen3MoeForCausalLM\"],\n"
      "  \"hidden_size\": 2048, \"intermediate_size\": 6144, \"num_attention_heads\": 32, \"num_hidden_layers\": 8,\n"
      "  \"vocab_size\": 1000, \"head_dim\": 128";
  // A dense first layer is first_dense_layers 1; dense layers 0 and 3 follow no rule.
  CHECK(import_hf_config_text(moe + ",\n  \"mlp_only_layers\": [0]\n}", "m/config.json").first_dense_layers == 1);
  CHECK(text_error(moe + ",\n  \"mlp_only_layers\": [0, 3]\n}") ==
        "m/config.json:5:22: error: mlp_only_layers: dense layers at chosen positions are not supported (parasim places dense layers by "
        "first_dense_layers and moe_layer_frequency); write a model YAML instead");
  // Qwen3MoeConfig's defaults: 128 experts of 768, top-8; with use_sliding_window every layer attends locally.
  const auto d = import_hf_config_text(moe + ",\n  \"use_sliding_window\": true, \"sliding_window\": 4096\n}", "m/config.json");
  CHECK(d.experts == 128);
  CHECK(d.top_k == 8);
  CHECK(d.expert_ffn_hidden == 768);
  CHECK(d.sliding_window == 4096);
  CHECK(d.global_every == 0);
  // Qwen3 dense: a window on the layers from max_window_layers on, after full ones, is not expressible.
  const std::string dense =
      "{\n"
      "  \"architectures\": [\"Qwen3ForCausalLM\"],\n"
      "  \"hidden_size\": 1024, \"intermediate_size\": 3072, \"num_attention_heads\": 16, \"num_hidden_layers\": 28,\n"
      "  \"vocab_size\": 1000, \"use_sliding_window\": true, \"sliding_window\": 4096";
  CHECK(text_error(dense + ",\n  \"max_window_layers\": 20\n}") ==
        "m/config.json:5:24: error: max_window_layers: the first 20 layers attend fully and the others in a window of 4096: parasim states "
        "windowed layers only as every layer or all but every n-th; write a model YAML instead");
  CHECK(import_hf_config_text(dense + ",\n  \"max_window_layers\": 28\n}", "m/config.json").sliding_window == 0);  // no layer local
  CHECK(import_hf_config_text(dense + ",\n  \"max_window_layers\": 0\n}", "m/config.json").sliding_window == 4096);
  CHECK(import_hf_config_text(dense + "\n}", "m/config.json").head_dim == 128);  // Qwen3Config's default
}

TEST_CASE("hugging face: Mistral's sliding window is imported; Mixtral's null one is none") {
  const ModelSpec m = import_hf_config("tests/data/hf/mistral-7b/config.json");
  CHECK(m.sliding_window == 4096);
  CHECK(m.global_every == 0);
  CHECK(m.attention_chunk == 0);
  CHECK(m.local_attention_layer(0));
  CHECK(m.local_attention_layer(31));
  CHECK(m.attended_keys(0, 32768) == 4096.0);
  const ModelSpec x = import_hf_config("tests/data/hf/mixtral-8x7b/config.json");
  CHECK(x.sliding_window == 0);
  CHECK_FALSE(x.local_attention_layer(0));
  // Absent: MistralConfig's default 4096; null: full attention (Mistral-7B-v0.2 on).
  const std::string mistral =
      R"({"architectures": ["MistralForCausalLM"], "hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 2,
          "intermediate_size": 512, "vocab_size": 100)";
  CHECK(import_hf_config_text(mistral + "}", "m/config.json").sliding_window == 4096);
  CHECK(import_hf_config_text(mistral + R"(, "sliding_window": null})", "m/config.json").sliding_window == 0);
}

TEST_CASE("hugging face: Gemma-2 9B imports GeGLU, head_dim 256 and alternating windows: 9.24B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/gemma-2-9b/config.json");
  CHECK(m.architecture == "gemma2");
  CHECK(m.layers == 42);
  CHECK(m.hidden == 3584);
  CHECK(m.heads == 16);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 256);  // heads x head_dim = 4096 > hidden
  CHECK(m.ffn_hidden == 14336);
  CHECK(m.vocab == 256000);
  CHECK(m.activation == Activation::swiglu);  // gated GELU: three matrices
  CHECK(m.norm == Norm::rmsnorm);
  CHECK(m.tied_embeddings);
  CHECK_FALSE(m.qk_norm);
  CHECK(m.sliding_window == 4096);
  CHECK(m.global_every == 2);
  CHECK(m.local_attention_layer(0));
  CHECK_FALSE(m.local_attention_layer(1));
  // Gemma 2 report (arXiv 2408.00118) and the google/gemma-2-9b model page: 9.24B parameters.
  CHECK(within_half_percent(count_parameters(m).total(), 9.24e9));
}

TEST_CASE("hugging face: Gemma-3 27B imports its text_config with Gemma3TextConfig's defaults: 27.0B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/gemma-3-27b-it/config.json");
  CHECK(m.name == "gemma-3-27b-it");
  CHECK(m.architecture == "gemma3");
  CHECK(m.layers == 62);
  CHECK(m.hidden == 5376);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 16);
  CHECK(m.head_dim == 128);
  CHECK(m.ffn_hidden == 21504);
  CHECK(m.vocab == 262208);  // not in text_config: Gemma3TextConfig's default
  CHECK(m.max_position == 131072);
  CHECK(m.activation == Activation::swiglu);
  CHECK(m.tied_embeddings);
  CHECK(m.qk_norm);
  CHECK(m.sliding_window == 1024);
  CHECK(m.global_every == 6);  // sliding_window_pattern's default: 5 local layers, then a global one
  CHECK(m.local_attention_layer(4));
  CHECK_FALSE(m.local_attention_layer(5));
  // Gemma 3 Technical Report (arXiv 2503.19786), Table 1: 27B has 1,416M embedding and 25,600M
  // non-embedding parameters, and a 417M vision encoder (not counted here).
  CHECK(within_half_percent(count_parameters(m).total(), 1416e6 + 25600e6));
}

TEST_CASE("hugging face: Gemma-3 layer_types give global_every; a list without a period is an error") {
  const std::string text =
      "{\n"
      "  \"architectures\": [\"Gemma3ForCausalLM\"],\n"
      "  \"num_hidden_layers\": 6,\n"
      "  \"layer_types\": [\"sliding_attention\", \"sliding_attention\", \"full_attention\",\n"
      "                  \"sliding_attention\", \"sliding_attention\", ";
  const auto m = import_hf_config_text(text + "\"full_attention\"]\n}", "m/config.json");
  CHECK(m.global_every == 3);
  CHECK(m.sliding_window == 4096);  // Gemma3TextConfig's defaults
  CHECK(m.hidden == 2304);
  CHECK(m.vocab == 262208);
  CHECK(text_error(text + "\"sliding_attention\"]\n}") ==
        "m/config.json:4:18: error: layer_types: layer 5 attends locally, against the period of 3 that layer 2 sets (layers 2, 5, ... "
        "global, the others local): parasim states local attention by global_every; write a model YAML instead");
  // Nested in text_config (Gemma3ForConditionalGeneration), errors name the nested key where it stands.
  CHECK(text_error("{\"architectures\": [\"Gemma3ForConditionalGeneration\"],\n \"text_config\": {\"hidden_size\": \"big\"}}") ==
        "m/config.json:2:33: error: text_config.hidden_size: expected a positive integer, found \"big\"");
  CHECK(text_error("{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"text_config\": 3}") ==
        "m/config.json:1:70: error: text_config: expected an object, found 3");
  // No text_config at all: Gemma3TextConfig() (the 1B-like shapes), as Transformers builds it.
  const auto d = import_hf_config_text("{\"architectures\": [\"Gemma3ForConditionalGeneration\"]}", "m/config.json");
  CHECK(d.layers == 26);
  CHECK(d.global_every == 6);
}

TEST_CASE("hugging face: Phi-3-mini imports as Llama with a 2047-token window: 3.82B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/phi-3-mini-4k-instruct/config.json");
  CHECK(m.architecture == "phi3");
  CHECK(m.layers == 32);
  CHECK(m.hidden == 3072);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 32);
  CHECK(m.ffn_hidden == 8192);
  CHECK(m.vocab == 32064);
  CHECK(m.activation == Activation::swiglu);
  CHECK_FALSE(m.bias);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.sliding_window == 2047);
  CHECK(m.global_every == 0);
  // Phi-3 Technical Report (arXiv 2404.14219): phi-3-mini, a 3.8B-parameter model; 3.82B on its model page.
  CHECK(within_half_percent(count_parameters(m).total(), 3.82e9));
}

TEST_CASE("hugging face: OLMo-1B imports its weightless LayerNorm as layernorm: 1.18B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/olmo-1b-hf/config.json");
  CHECK(m.architecture == "olmo");
  CHECK(m.norm == Norm::layernorm);
  CHECK(m.layers == 16);
  CHECK(m.hidden == 2048);
  CHECK(m.ffn_hidden == 8192);
  CHECK(m.tied_embeddings);
  CHECK_FALSE(m.qk_norm);
  // allenai/OLMo-1B-hf: 1.18B parameters (1,176,764,416 in its checkpoint: the linear layers and the
  // embedding). parasim counts 2·h per LayerNorm OLMo does not have: (2 x 16 + 1) x 4,096 = 135,168 more.
  const auto p = count_parameters(m);
  CHECK(within_half_percent(p.total(), 1.18e9));
  CHECK(p.total() == 1'176'764'416.0 + 135'168.0);
}

TEST_CASE("hugging face: OLMo-2 7B imports RMSNorm and q/k norms: 7.30B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/olmo-2-1124-7b/config.json");
  CHECK(m.architecture == "olmo2");
  CHECK(m.norm == Norm::rmsnorm);
  CHECK(m.qk_norm);
  CHECK(m.layers == 32);
  CHECK(m.ffn_hidden == 11008);
  CHECK(m.vocab == 100352);
  CHECK_FALSE(m.tied_embeddings);
  // OLMo 2 paper (arXiv 2501.00656) and the allenai/OLMo-2-1124-7B model page: 7.30B parameters.
  CHECK(within_half_percent(count_parameters(m).total(), 7.30e9));
}

TEST_CASE("hugging face: gpt-oss-20b imports 32 experts top-4, biases and alternating 128-token windows: 20.9B parameters") {
  const ModelSpec m = import_hf_config("tests/data/hf/gpt-oss-20b/config.json");
  CHECK(m.architecture == "gpt-oss");
  CHECK(m.layers == 24);
  CHECK(m.hidden == 2880);
  CHECK(m.heads == 64);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 64);
  CHECK(m.bias);  // attention and expert biases
  CHECK(m.activation == Activation::swiglu);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.experts == 32);
  CHECK(m.top_k == 4);
  CHECK(m.expert_ffn_hidden == 2880);
  CHECK(m.shared_experts == 0);
  CHECK(m.moe_layers() == 24);
  CHECK(m.sliding_window == 128);
  CHECK(m.global_every == 2);
  CHECK(m.local_attention_layer(0));
  CHECK_FALSE(m.local_attention_layer(1));
  // OpenAI's gpt-oss model card (arXiv 2508.10925), Table 1: gpt-oss-20b has 20.91B parameters in total
  // and 3.61B active per token, the latter without the input embedding.
  const auto p = count_parameters(m);
  CHECK(within_half_percent(p.total(), 20.91e9));
  CHECK(within_half_percent(p.active() - p.embedding, 3.61e9));
}

TEST_CASE("hugging face: gpt-oss layer_types that follow no period are an error at the key") {
  std::string types;
  // Layer 1 global sets a period of 2; layer 2 global breaks it.
  for (int l = 0; l < 4; ++l) types += std::string(l ? ", " : "") + (l == 1 || l == 2 ? "\"full_attention\"" : "\"sliding_attention\"");
  const std::string json = "{\"architectures\": [\"GptOssForCausalLM\"], \"hidden_size\": 256, \"num_attention_heads\": 4, "
                           "\"num_hidden_layers\": 4, \"intermediate_size\": 256, \"vocab_size\": 100, \"layer_types\": [" + types + "]}";
  CHECK(text_error(json) ==
        "m/config.json:1:172: error: layer_types: layer 2 attends globally, against the period of 2 that layer 1 sets (layers 1, 3, ... "
        "global, the others local): parasim states local attention by global_every; write a model YAML instead");
  const std::string short_list = "{\"architectures\": [\"GptOssForCausalLM\"], \"hidden_size\": 256, \"num_attention_heads\": 4, "
                                 "\"num_hidden_layers\": 4, \"intermediate_size\": 256, \"vocab_size\": 100, \"layer_types\": [\"full_attention\"]}";
  CHECK(text_error(short_list) == "m/config.json:1:172: error: layer_types: expected one entry per layer (4), found 1");
}

TEST_CASE("hugging face: Llama-4 Scout imports 16 experts and a shared one, chunked attention: 107.8B parameters, 17B active") {
  const ModelSpec m = import_hf_config("tests/data/hf/llama-4-scout-17b-16e-instruct/config.json");
  CHECK(m.architecture == "llama4");
  CHECK(m.layers == 48);
  CHECK(m.hidden == 5120);
  CHECK(m.heads == 40);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);
  CHECK(m.vocab == 202048);
  CHECK(m.ffn_hidden == 16384);  // intermediate_size_mlp, for dense layers (none in Scout)
  CHECK(m.experts == 16);
  CHECK(m.top_k == 1);
  CHECK(m.expert_ffn_hidden == 8192);
  CHECK(m.shared_experts == 1);
  CHECK(m.shared_expert_ffn_hidden == 8192);
  CHECK(m.moe_layers() == 48);
  CHECK_FALSE(m.tied_embeddings);
  CHECK_FALSE(m.qk_norm);  // an L2 norm without weights
  CHECK(m.attention_chunk == 8192);
  CHECK(m.sliding_window == 0);
  CHECK(m.global_every == 4);  // no_rope_layers: every fourth layer NoPE and global
  CHECK(m.local_attention_layer(2));
  CHECK_FALSE(m.local_attention_layer(3));
  // Meta's Llama 4 model card: Scout has 17B active and 109B total parameters, the latter with the
  // vision encoder (0.87B by its vision_config), which leaves 107.8B for the language model.
  const auto p = count_parameters(m);
  CHECK(within_half_percent(p.total(), 107.8e9));
  CHECK(p.active() == doctest::Approx(17e9).epsilon(0.02));  // "17B": rounded
}

TEST_CASE("hugging face: Llama-4 at the top level, interleaved MoE layers and defaults") {
  // Maverick's layout: every second layer MoE (1, 3, 5, ...), the others a dense MLP of intermediate_size_mlp.
  const std::string json =
      "{\n"
      "  \"architectures\": [\"Llama4ForCausalLM\"],\n"
      "  \"num_hidden_layers\": 8, \"interleave_moe_layer_step\": 2, \"num_local_experts\": 128";
  const auto m = import_hf_config_text(json + "\n}", "m/config.json");
  CHECK(m.first_dense_layers == 1);
  CHECK(m.moe_layer_frequency == 2);
  CHECK(m.moe_layers() == 4);
  CHECK(m.experts == 128);
  CHECK(m.hidden == 5120);  // Llama4TextConfig's defaults
  CHECK(m.ffn_hidden == 16384);
  CHECK(m.attention_chunk == 8192);
  CHECK(m.global_every == 4);  // no_rope_layer_interval's default
  CHECK(import_hf_config_text(json + ", \"attention_chunk_size\": null\n}", "m/config.json").attention_chunk == 0);
  CHECK(text_error(json + ",\n  \"moe_layers\": [1, 2, 5]\n}") ==
        "m/config.json:4:17: error: moe_layers: dense layers at chosen positions are not supported (parasim places dense layers by "
        "first_dense_layers and moe_layer_frequency); write a model YAML instead");
}

TEST_CASE("hugging face: an unknown class lists the supported ones without a near-name suggestion") {
  // OLMoE's class is one letter from OLMo's: suggesting OlmoForCausalLM would name another model.
  CHECK(import_error("tests/data/hf/bad/olmoe-1b-7b/config.json") ==
        "tests/data/hf/bad/olmoe-1b-7b/config.json:3:5: error: architectures: 'OlmoeForCausalLM' is not supported; supported: " + kSupported);
}
