#pragma once
// Models for workload tests, written out so each test states the shapes it assumes.
#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"

namespace parasim::test {

/// GPT-3 175B as Megatron-LM trains it (SC21): h 12288, 96 layers, 96 heads, ffn 4h, vocab 51200
/// (already a multiple of 128 x 8), 2048 learned positions, tied embeddings, dropout 0.1.
inline workload::ModelSpec gpt175b() {
  workload::ModelSpec m;
  m.name = "gpt-175b";
  m.architecture = "gpt";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.head_dim = 128;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  m.max_position = 2048;
  m.tied_embeddings = true;
  m.dropout = 0.1;
  return m;
}

/// A small GPT with the same structure, for fast task graphs.
inline workload::ModelSpec small_gpt(int layers = 8) {
  auto m = gpt175b();
  m.name = "small-gpt";
  m.layers = layers;
  m.hidden = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.head_dim = 64;
  m.ffn_hidden = 4096;
  m.vocab = 32768;
  return m;
}

/// Llama-3-8B: GQA with 8 KV heads, SwiGLU ffn 14336, RMSNorm, RoPE, untied, vocab 128256.
inline workload::ModelSpec llama3_8b() {
  workload::ModelSpec m;
  m.name = "llama-3-8b";
  m.architecture = "llama";
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.ffn_hidden = 14336;
  m.vocab = 128256;
  m.max_position = 8192;
  m.activation = workload::Activation::swiglu;
  m.norm = workload::Norm::rmsnorm;
  m.position = workload::PositionEmbedding::rope;
  m.bias = false;
  return m;
}

/// Mixtral-8x7B: Mistral 7B's shapes with 8 SwiGLU experts of 14336, top-2 (Jiang et al. 2024, Table 1).
inline workload::ModelSpec mixtral_8x7b() {
  auto m = llama3_8b();
  m.name = "mixtral-8x7b";
  m.architecture = "mixtral";
  m.vocab = 32000;
  m.max_position = 32768;
  m.experts = 8;
  m.top_k = 2;
  m.expert_ffn_hidden = 14336;
  return m;
}

/// DeepSeek-V3 (its technical report, section 4.2; Hugging Face config.json).
inline workload::ModelSpec deepseek_v3() {
  auto m = llama3_8b();
  m.name = "deepseek-v3";
  m.layers = 61;
  m.hidden = 7168;
  m.heads = m.kv_heads = 128;
  m.head_dim = 192;
  m.ffn_hidden = 18432;
  m.vocab = 129280;
  m.mla = {1536, 512, 128, 64, 128};
  m.experts = 256;
  m.top_k = 8;
  m.shared_experts = 1;
  m.expert_ffn_hidden = m.shared_expert_ffn_hidden = 2048;
  m.first_dense_layers = 3;
  m.mtp_layers = 1;
  return m;
}

inline workload::TrainingSpec training(int seq, workload::AttentionKernel kernel = workload::AttentionKernel::flash) {
  workload::TrainingSpec t;
  t.seq_len = seq;
  t.attention = kernel;
  return t;
}

inline workload::Plan plan(int tp, int pp, int dp, int micro_batch, int global_batch) {
  workload::Plan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.micro_batch = micro_batch;
  p.global_batch = global_batch;
  return p;
}

}  // namespace parasim::test
