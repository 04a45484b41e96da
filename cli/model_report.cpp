#include "cli/model_report.hpp"

namespace parasim::cli {

std::string_view activation_name(workload::Activation a) { return a == workload::Activation::swiglu ? "swiglu" : "gelu"; }
std::string_view norm_name(workload::Norm n) { return n == workload::Norm::rmsnorm ? "rmsnorm" : "layernorm"; }
std::string_view position_name(workload::PositionEmbedding p) {
  return p == workload::PositionEmbedding::rope ? "rope" : p == workload::PositionEmbedding::alibi ? "alibi" : "learned";
}

ModelFigures model_figures(const workload::ModelSpec& m, int seq_len) {
  ModelFigures f;
  f.seq = seq_len > 0 ? seq_len : (m.max_position > 0 ? m.max_position : 2048);
  f.parameters = workload::count_parameters(m);
  f.training_flops_per_token = workload::training_flops_per_token(m, f.seq, 1);
  // PaLM's 6N + 12·l·s·h, N the parameters a token uses (all of them in a dense model).
  f.palm_flops_per_token = 6 * f.parameters.active_in_matmuls() + 12.0 * m.layers * f.seq * m.q_width();
  const workload::BlockShape shape{1, f.seq, 1, false, workload::Recompute::none};
  workload::TrainingSpec flash, eager;
  flash.seq_len = eager.seq_len = f.seq;
  eager.attention = workload::AttentionKernel::eager;
  f.activation_bytes_flash = workload::layer_activation_bytes(m, flash, shape) / f.seq;
  f.activation_bytes_eager = workload::layer_activation_bytes(m, eager, shape) / f.seq;
  return f;
}

namespace {

// The architecture as the model file and the Hugging Face config state it.
nlohmann::json shape_json(const workload::ModelSpec& m) {
  return {
      {"name", m.name},
      {"architecture", m.architecture},
      {"layers", m.layers},
      {"hidden", m.hidden},
      {"heads", m.heads},
      {"kv_heads", m.kv_heads},
      {"head_dim", m.head_dim},
      {"ffn_hidden", m.ffn_hidden},
      {"vocab", m.vocab},
      {"activation", activation_name(m.activation)},
      {"norm", norm_name(m.norm)},
      {"position", position_name(m.position)},
      {"bias", m.bias},
      {"qkv_bias", m.qkv_bias},
      {"tied_embeddings", m.tied_embeddings},
      {"dropout", m.dropout},
      {"causal", m.causal},
      {"token_types", m.token_types},
      {"post_norm", m.post_norm},
      {"mlm_head", m.mlm_head},
      {"experts", m.experts},
      {"top_k", m.top_k},
  };
}

nlohmann::json parameters_json(const workload::ParameterCount& p) {
  return {{"total", p.total()},
          {"embedding", p.embedding},
          {"position", p.position},
          {"per_layer", p.per_layer()},
          {"attention_per_layer", p.attention},
          {"mlp_per_layer", p.mlp},
          {"norms_per_layer", p.layer_norms},
          {"final_norm", p.final_norm},
          {"token_type", p.token_type},
          {"embedding_norm", p.embedding_norm},
          {"head_transform", p.head_transform},
          {"lm_head", p.lm_head},
          {"in_matmuls", p.in_matmuls()},
          {"active", p.active()},
          {"active_without_embedding", p.active() - p.embedding - p.position - p.token_type},
          {"mtp", p.mtp},
          {"active_in_matmuls", p.active_in_matmuls()},
          {"router_per_moe_layer", p.router},
          {"expert", p.expert},
          {"shared_experts_per_moe_layer", p.shared}};
}

}  // namespace

nlohmann::json model_json(const workload::ModelSpec& m, const ModelFigures& f) {
  nlohmann::json j = shape_json(m);
  j["moe_layers"] = f.parameters.moe_layers;
  j["qk_norm"] = m.qk_norm;
  j["sliding_window"] = m.sliding_window;
  j["attention_chunk"] = m.attention_chunk;
  j["global_every"] = m.global_every;
  j["mtp_layers"] = m.mtp_layers;
  j["parameters"] = parameters_json(f.parameters);
  j["seq_len"] = f.seq;
  j["training_flops_per_token"] = f.training_flops_per_token;
  j["palm_flops_per_token"] = f.palm_flops_per_token;
  j["activation_bytes_per_token_per_layer"] = {{"flash", f.activation_bytes_flash}, {"eager", f.activation_bytes_eager}};
  if (m.is_mla()) {
    j["mla"] = {{"q_lora_rank", m.mla.q_lora_rank},
                {"kv_lora_rank", m.mla.kv_lora_rank},
                {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
                {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                {"v_head_dim", m.mla.v_head_dim}};
  }
  return j;
}

}  // namespace parasim::cli
