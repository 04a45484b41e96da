#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/workload/fixtures.hpp"
#include "workload/model.hpp"

using namespace parasim;
using namespace parasim::workload;

namespace {

ModelSpec load_model(const std::string& path) {
  const yaml::Node node = yaml::load_file(path);
  return parse_model(yaml::Record(node, kModelSchema));
}

double total_parameters(const std::string& file) { return count_parameters(load_model("scenarios/models/" + file)).total(); }

}  // namespace

// GPT blocks (MLP 4h, biases, LayerNorm): per layer 12h² + 13h. SwiGLU blocks without biases, GQA with
// k key/value heads of width d, RMSNorm: per layer h·(2h + 2kd) + 3hf + 2h.

TEST_CASE("parameter counts of the bundled GPT-3 and Llama models match their papers within 0.5%") {
  // GPT-3 175B: h=12288, l=96, V=50257, 2048 learned positions, tied head.
  // 96·(12·12288² + 13·12288) = 96·1,812,099,072 = 173,961,510,912
  // + 50257·12288 = 617,558,016 + 2048·12288 = 25,165,824 + final 24,576 = 174,604,259,328 ≈ 174.6B
  CHECK(total_parameters("gpt3-175b.yaml") == doctest::Approx(174.6e9).epsilon(0.005).scale(0));
  CHECK(total_parameters("gpt3-175b.yaml") == 174'604'259'328.0);
  // Llama-2-7B: 32·(4·4096² + 3·4096·11008 + 2·4096) + 2·32000·4096 + 4096 = 6,738,415,616
  CHECK(total_parameters("llama-2-7b.yaml") == doctest::Approx(6.74e9).epsilon(0.005).scale(0));
  CHECK(total_parameters("llama-2-7b.yaml") == 6'738'415'616.0);
  // Llama-2-13B: 40·(4·5120² + 3·5120·13824 + 2·5120) = 40·317,204,480 = 12,688,179,200
  // + 2·32000·5120 = 327,680,000 + 5120 = 13,015,864,320
  CHECK(total_parameters("llama-2-13b.yaml") == doctest::Approx(13.02e9).epsilon(0.005).scale(0));
  // Llama-2-70B (GQA, k=8, d=128): attention 8192·(8192 + 2048) + 8192² = 150,994,944;
  // MLP 3·8192·28672 = 704,643,072; norms 16,384; per layer 855,654,400; × 80 = 68,452,352,000
  // + 2·32000·8192 = 524,288,000 + 8192 = 68,976,648,192
  CHECK(total_parameters("llama-2-70b.yaml") == doctest::Approx(68.98e9).epsilon(0.005).scale(0));
  // Llama-3-8B: 32·218,112,000 = 6,979,584,000 + 2·128256·4096 = 1,050,673,152 + 4096 = 8,030,261,248
  CHECK(total_parameters("llama-3-8b.yaml") == doctest::Approx(8.03e9).epsilon(0.005).scale(0));
  CHECK(total_parameters("llama-3-8b.yaml") == 8'030'261'248.0);
  // Llama-3-70B: Llama-2-70B's layers, 68,452,352,000 + 2·128256·8192 = 2,101,346,304 + 8192 = 70,553,706,496
  CHECK(total_parameters("llama-3-70b.yaml") == doctest::Approx(70.55e9).epsilon(0.005).scale(0));
  // Llama-3-405B: attention 16384·(16384 + 2048) + 16384² = 570,425,344; MLP 3·16384·53248 = 2,617,245,696;
  // norms 32,768; per layer 3,187,703,808; × 126 = 401,650,679,808
  // + 2·128256·16384 = 4,202,692,608 + 16384 = 405,853,388,800
  CHECK(total_parameters("llama-3-405b.yaml") == doctest::Approx(405.8e9).epsilon(0.005).scale(0));
  CHECK(total_parameters("llama-3-405b.yaml") == 405'853'388'800.0);
}

TEST_CASE("parameter counts of the bundled SC21 GPT models are within 3% of their nominal sizes") {
  // SC21 Table 1 rounds its sizes (1.7B is 1.652B by the paper's own formula
  // 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)), 2.8% off); ours is that formula plus the final LayerNorm (2h).
  // 1.7B: 24·(12·2304² + 13·2304) = 1,529,542,656 + (51200 + 2048)·2304 = 122,683,392 + 4,608 = 1,652,230,656
  struct Row {
    const char* file;
    double nominal;
  };
  const Row rows[] = {
      {"gpt-1.7b.yaml", 1.7e9},   {"gpt-3.6b.yaml", 3.6e9},   {"gpt-7.5b.yaml", 7.5e9},   {"gpt-18b.yaml", 18.4e9},
      {"gpt-39b.yaml", 39.1e9},   {"gpt-76b.yaml", 76.1e9},   {"gpt-145b.yaml", 145.6e9}, {"gpt-310b.yaml", 310.1e9},
      {"gpt-530b.yaml", 529.6e9}, {"gpt-1t.yaml", 1008.0e9},
  };
  for (const auto& row : rows) {
    CAPTURE(row.file);
    CHECK(total_parameters(row.file) == doctest::Approx(row.nominal).epsilon(0.03).scale(0));
  }
  CHECK(total_parameters("gpt-1.7b.yaml") == 1'652'230'656.0);
  // 1T: 128·(12·25600² + 13·25600) = 1,006,675,558,400 + 53248·25600 = 1,363,148,800 + 51,200
  //   = 1,008,038,758,400 (Table 1: 1008.0B)
  CHECK(total_parameters("gpt-1t.yaml") == 1'008'038'758'400.0);
}

TEST_CASE("parameter counts: a bundled model reads back as the shapes its file states") {
  const ModelSpec m = load_model("scenarios/models/llama-3-405b.yaml");
  CHECK(m.name == "Llama-3-405B");
  CHECK(m.architecture == "llama");
  CHECK(m.layers == 126);
  CHECK(m.hidden == 16384);
  CHECK(m.heads == 128);
  CHECK(m.kv_heads == 8);
  CHECK(m.head_dim == 128);  // 16384 / 128
  CHECK(m.ffn_hidden == 53248);
  CHECK(m.vocab == 128256);
  CHECK(m.activation == Activation::swiglu);
  CHECK(m.norm == Norm::rmsnorm);
  CHECK(m.position == PositionEmbedding::rope);
  CHECK_FALSE(m.bias);
  CHECK_FALSE(m.tied_embeddings);
  CHECK(m.dropout == 0.0);

  const ModelSpec g = load_model("scenarios/models/gpt-530b.yaml");
  CHECK(g.layers == 105);
  CHECK(g.hidden == 20480);
  CHECK(g.heads == 128);
  CHECK(g.ffn_hidden == 81920);
  CHECK(g.max_position == 2048);
  CHECK(g.tied_embeddings);
  CHECK(g.dropout == doctest::Approx(0.1).epsilon(1e-12));
}

// Mixture of experts, per MoE layer: router h·E, E experts of 3·h·f_e (SwiGLU), shared experts.

TEST_CASE("Mixtral-8x7B: 46.7B parameters, 12.9B active") {
  // h 4096, 32 layers, GQA 32/8 of 128, 8 experts of 14336, top-2, vocab 32000, untied.
  // attention 4096·(4096 + 2·1024) + 4096² = 41,943,040; norms 8,192; router 4096·8 = 32,768;
  // expert 3·4096·14336 = 176,160,768.
  // per layer, all experts: 41,943,040 + 8,192 + 32,768 + 8·176,160,768 = 1,451,270,144; x 32 = 46,440,644,608
  // + 2·32000·4096 = 262,144,000 + final 4,096 = 46,702,792,704
  // active: 41,943,040 + 8,192 + 32,768 + 2·176,160,768 = 394,305,536; x 32 = 12,617,777,152
  // + 262,148,096 = 12,879,925,248
  const auto m = load_model("scenarios/models/mixtral-8x7b.yaml");
  const auto p = count_parameters(m);
  CHECK(p.moe_layers == 32);
  CHECK(p.total() == 46'702'792'704.0);
  CHECK(p.active() == 12'879'925'248.0);
  CHECK(p.total() == doctest::Approx(46.7e9).epsilon(0.005).scale(0));
  CHECK(p.active() == doctest::Approx(12.9e9).epsilon(0.005).scale(0));
}

TEST_CASE("bundled MoE models: Mixtral-8x22B 141B / 39B active, Qwen2-57B-A14B 57B / 14B active") {
  // Mixtral-8x22B: attention 6144·(6144 + 2048) + 6144² = 88,080,384; norms 12,288; router 49,152;
  // expert 3·6144·16384 = 301,989,888. Per layer 88,141,824 + 8 x expert = 2,504,060,928, x 56
  // = 140,227,411,968 + 2·32768·6144 = 402,653,184 + 6,144 = 140,630,071,296.
  // Active: (88,141,824 + 2 x expert) x 56 = 38,758,809,600 + 402,659,328 = 39,161,468,928.
  const auto x22 = count_parameters(load_model("scenarios/models/mixtral-8x22b.yaml"));
  CHECK(x22.total() == 140'630'071'296.0);
  CHECK(x22.active() == 39'161'468'928.0);
  // Qwen2-57B-A14B: attention 3584·(3584 + 2·512) + 3584² + (3584 + 1024) q/k/v biases = 29,364,736;
  // norms 7,168; router 3584·64 = 229,376; expert 3·3584·2560 = 27,525,120; shared: 8 experts of the
  // same and a gate of 3584 = 220,204,544. Per layer 29,364,736 + 7,168 + 229,376 + 64 x expert
  // + 220,204,544 = 2,011,413,504, x 28 = 56,319,578,112 + 2·151936·3584 = 1,089,077,248 + 3,584
  // = 57,408,658,944. Active: (29,601,280 + 8 x expert + 220,204,544) x 28 = 13,160,189,952
  // + 1,089,080,832 = 14,249,270,784.
  const auto qwen = load_model("scenarios/models/qwen2-57b-a14b.yaml");
  const auto q = count_parameters(qwen);
  CHECK(q.attention == 29'364'736.0);
  CHECK(q.expert == 27'525'120.0);
  CHECK(q.shared == 220'204'544.0);
  CHECK(q.total() == 57'408'658'944.0);
  CHECK(q.active() == 14'249'270'784.0);
  CHECK(q.active() == doctest::Approx(14.25e9).epsilon(0.005).scale(0));
  // DeepSeekMoE-16B: attention 4·2048² = 16,777,216; norms 4,096; the dense first layer's MLP
  // 3·2048·10944 = 67,239,936; router 2048·64 = 131,072; expert 3·2048·1408 = 8,650,752; 2 shared
  // = 17,301,504. MoE layer 16,781,312 + 131,072 + 64 x expert + 17,301,504 = 587,862,016, x 27
  // = 15,872,274,432; dense layer 84,021,248; embeddings 2·102400·2048 = 419,430,400; final norm
  // 2,048: 16,375,728,128 (the paper's 16.4B). Active: (16,912,384 + 6 x expert + 17,301,504) x 27
  // = 2,325,196,800 + 84,021,248 + 419,432,448 = 2,828,650,496 (the paper's 2.8B).
  const auto deepseek = load_model("scenarios/models/deepseek-moe-16b.yaml");
  CHECK(deepseek.moe_layers() == 27);
  const auto d = count_parameters(deepseek);
  CHECK(d.expert == 8'650'752.0);
  CHECK(d.shared == 17'301'504.0);
  CHECK(d.total() == 16'375'728'128.0);
  CHECK(d.active() == 2'828'650'496.0);
}

TEST_CASE("MoE keys need experts; top_k cannot exceed them") {
  // Each text written to m.yaml in a scratch directory; errors name the file as written there.
  const auto dir = std::filesystem::temp_directory_path() / "parasim_model_test";
  std::filesystem::create_directories(dir);
  auto parse = [&](const std::string& text) {
    const auto file = dir / "m.yaml";
    std::ofstream(file) << text;
    try {
      parse_model(yaml::Record(yaml::load_file(file), kModelSchema));
    } catch (const InputError& e) {
      const std::string what = e.what();
      return what.substr(what.find("m.yaml"));
    }
    return std::string("no error");
  };
  const std::string base = "name: x\nlayers: 4\nhidden: 256\nheads: 4\nvocab: 1000\nposition: rope\n";
  CHECK(parse(base + "top_k: 2\n") == "m.yaml:7:8: error: top_k: only a mixture of experts takes this (set experts)");
  CHECK(parse(base + "experts: 4\ntop_k: 8\n") == "m.yaml:8:8: error: top_k: top_k 8 exceeds the 4 experts");
  CHECK(parse(base + "experts: 4\n") == "m.yaml:7:10: error: experts: a mixture of 4 experts needs top_k");
  CHECK(parse(base + "experts: 4\ntop_k: 1\n") == "no error");
}

TEST_CASE("bundled BERT-Large: the Hugging Face BertForMaskedLM count, 335,174,458") {
  // As tests/workload/hf_config_test.cpp counts it from bert-large-uncased's config.json.
  CHECK(total_parameters("bert-large.yaml") == 335'174'458.0);
}

TEST_CASE("a dense layer's modules add up to its parameters, in forward order") {
  // GPT-3 175B (LayerNorm, biases, GELU): norm 2h, QKV 3h² + 3h, projection h² + h, norm 2h,
  // fc1 4h² + 4h, fc2 4h² + h.
  const auto gpt = test::gpt175b();
  const double h = 12288;
  const auto m = dense_layer_modules(gpt);
  CHECK(m[0] == doctest::Approx(2 * h).scale(0));
  CHECK(m[1] == doctest::Approx(3 * h * h + 3 * h).scale(0));
  CHECK(m[2] == doctest::Approx(h * h + h).scale(0));
  CHECK(m[4] == doctest::Approx(4 * h * h + 4 * h).scale(0));
  CHECK(m[5] == doctest::Approx(4 * h * h + h).scale(0));
  CHECK(m[0] + m[1] + m[2] + m[3] + m[4] + m[5] == doctest::Approx(count_parameters(gpt).per_layer()).scale(0));
  // Llama-3-8B (RMSNorm, GQA, SwiGLU, no biases): the same sum.
  const auto llama = test::llama3_8b();
  const auto l = dense_layer_modules(llama);
  CHECK(l[0] == doctest::Approx(4096.0).scale(0));
  CHECK(l[4] == doctest::Approx(2.0 * 4096 * 14336).scale(0));
  CHECK(l[0] + l[1] + l[2] + l[3] + l[4] + l[5] == doctest::Approx(count_parameters(llama).per_layer()).scale(0));
}
