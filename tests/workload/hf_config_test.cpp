#include <doctest/doctest.h>

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
        "tests/data/hf/bad/falcon-7b/config.json:5:5: error: architectures: 'FalconForCausalLM' is not supported; "
        "supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel, GPTNeoXForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM, BertForMaskedLM");
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
  CHECK(text_error("{\"architectures\": [\"LLamaForCausalLM\"]}") ==
        "m/config.json:1:20: error: architectures: 'LLamaForCausalLM' is not supported (did you mean 'LlamaForCausalLM'?); "
        "supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel, GPTNeoXForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM, BertForMaskedLM");
  CHECK(text_error("{\"model_type\": \"llama\"}") ==
        "m/config.json:1:1: error: missing required key 'architectures' (the model class; supported: LlamaForCausalLM, "
        "MistralForCausalLM, Qwen2ForCausalLM, GPT2LMHeadModel, GPTNeoXForCausalLM, MixtralForCausalLM, Qwen2MoeForCausalLM, BertForMaskedLM)");
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
  CHECK(text_error(qwen + ",\n  \"mlp_only_layers\": [0, 1]\n}") ==
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
