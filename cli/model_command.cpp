// parasim model <model.yaml|config.json>: the architecture as parasim understood it, its
// parameters, training FLOPs per token and activation bytes per token.
#include <fmt/format.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/model_report.hpp"
#include "cli/table.hpp"
#include "sim/scenario.hpp"
#include "workload/memory.hpp"

namespace parasim::cli {
namespace {

std::string count(double n) {
  if (n >= 1e9) return format_number(n / 1e9) + " B";
  if (n >= 1e6) return format_number(n / 1e6) + " M";
  if (n >= 1e3) return format_number(n / 1e3) + " K";
  return format_number(n);
}


// The attention a model's layers run, in a line: latent or per-head projections, local windows or
// chunks and which layers attend globally, q/k norms. Empty for plain full attention.
std::string attention_line(const workload::ModelSpec& m) {
  std::vector<std::string> parts;
  if (m.is_mla()) {
    parts.push_back(fmt::format("multi-head latent (q latent {}, kv latent {}, qk {} + {} rope, v {})", m.mla.q_lora_rank > 0 ? std::to_string(m.mla.q_lora_rank) : "none",
                                m.mla.kv_lora_rank, m.mla.qk_nope_head_dim, m.mla.qk_rope_head_dim, m.mla.v_head_dim));
  }
  if (m.sliding_window > 0 || m.attention_chunk > 0) {
    const std::string local = m.sliding_window > 0 ? fmt::format("sliding window of {} tokens", m.sliding_window) : fmt::format("chunks of {} tokens", m.attention_chunk);
    parts.push_back(m.global_every > 0 ? fmt::format("{} on all but every {}th layer", local, m.global_every) : fmt::format("{} on every layer", local));
  }
  if (m.qk_norm) parts.push_back("q/k norms");
  std::string out;
  for (const auto& x : parts) out += (out.empty() ? "" : ", ") + x;
  return out;
}

// The model's shape, attention, experts and encoder lines.
std::string model_header(const workload::ModelSpec& m, const ModelFigures& f) {
  const auto& p = f.parameters;
  std::string out = fmt::format("Model         {} ({})\n", m.name, m.architecture);
  out += fmt::format("Shape         {} layers, hidden {}, {} heads ({} key/value, head_dim {}), ffn {} ({})\n", m.layers, m.hidden, m.heads,
                     m.kv_heads, m.is_mla() ? m.mla.qk_head_dim() : m.head_dim, m.ffn_hidden, activation_name(m.activation));
  out += fmt::format("              vocabulary {}, {}, {} positions, bias {}, tied embeddings {}, dropout {}\n", m.vocab,
                     norm_name(m.norm), position_name(m.position), m.bias ? "yes" : (m.qkv_bias ? "qkv only" : "no"),
                     m.tied_embeddings ? "yes" : "no", format_number(m.dropout));
  if (const auto a = attention_line(m); !a.empty()) out += fmt::format("Attention     {}\n", a);
  if (m.is_moe()) {
    out += fmt::format("Experts       {} of ffn {}, top-{}, {} shared{}, in {} of {} layers; capacity {}, load imbalance {}\n", m.experts,
                       m.expert_ffn_hidden, m.top_k, m.shared_experts,
                       m.shared_experts > 0 ? fmt::format(" of ffn {}", m.shared_expert_ffn_hidden) : "", p.moe_layers, m.layers,
                       m.capacity_factor > 0 ? format_number(m.capacity_factor) : "dropless", format_number(m.expert_load_imbalance));
  }
  if (!m.causal || m.token_types > 0 || m.post_norm || m.mlm_head) {
    out += fmt::format("Encoder       {} attention, {} token types, {}{}\n", m.causal ? "causal" : "bidirectional", m.token_types,
                       m.post_norm ? "post-LN" : "pre-LN", m.mlm_head ? ", masked-LM head" : "");
  }
  return out;
}

// Where the parameters are, part by part.
std::string parameter_table(const workload::ModelSpec& m, const ModelFigures& f) {
  const auto& p = f.parameters;
  Table t({"parameters", "count"}, {Table::Align::left, Table::Align::right});
  t.add({"total", count(p.total())});
  if (m.is_moe()) t.add({"active (per token)", count(p.active())});
  // Conventions differ on whether the input embedding (a lookup) counts as active.
  if (m.is_moe()) t.add({"  without input embedding", count(p.active() - p.embedding - p.position - p.token_type)});
  if (p.mtp > 0) t.add({fmt::format("multi-token prediction ({}, apart)", m.mtp_layers), count(p.mtp)});
  t.add({"embedding", count(p.embedding)});
  if (p.position > 0) t.add({"position embedding", count(p.position)});
  if (p.token_type > 0) t.add({"token type embedding", count(p.token_type)});
  if (p.embedding_norm > 0) t.add({"embedding norm", count(p.embedding_norm)});
  if (p.moe_layers < p.layers) t.add({m.is_moe() ? "per dense layer" : "per layer", count(p.per_layer())});
  if (m.is_moe()) t.add({"per MoE layer", count(p.attention + p.layer_norms + p.moe_mlp())});
  t.add({"  attention", count(p.attention)});
  if (p.moe_layers < p.layers) t.add({"  mlp", count(p.mlp)});
  if (m.is_moe()) {
    t.add({"  router (MoE layer)", count(p.router)});
    t.add({"  expert (each)", count(p.expert)});
    if (p.shared > 0) t.add({"  shared experts", count(p.shared)});
  }
  t.add({"  norms", count(p.layer_norms)});
  if (!m.post_norm) t.add({"final norm", count(p.final_norm)});
  if (p.head_transform > 0) t.add({"masked-LM head transform", count(p.head_transform)});
  t.add({"lm head", p.lm_head > 0 ? count(p.lm_head) : "tied"});
  t.add({"in matrix multiplies (N)", count(p.in_matmuls())});
  if (m.is_moe()) t.add({"  active (N_active)", count(p.active_in_matmuls())});
  return t.render();
}

}  // namespace

Action add_model_command(CLI::App& app) {
  struct Options {
    std::string file;
    int seq = 0;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("model", "Show a model as parasim understands it: shapes, parameters, FLOPs and activations per token");
  cmd->footer(
      "Examples:\n"
      "  parasim model scenarios/models/deepseek-v3.yaml\n"
      "  parasim model tests/data/hf/qwen3-30b-a3b/config.json --seq 4096 --json");
  cmd->add_option("model", o->file, "model YAML or Hugging Face config.json")->required();
  cmd->add_option("--seq", o->seq, "sequence length for FLOPs and activations (default: the model's context, or 2048)")->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json, "print JSON instead of a table");
  return [o]() {
    const auto m = sim::load_model(o->file);
    const auto f = model_figures(m, o->seq);
    if (o->json) {
      std::cout << model_json(m, f).dump(2) << "\n";
      return 0;
    }
    std::string out = model_header(m, f) + "\n" + parameter_table(m, f) + "\n";
    out += fmt::format("Training FLOPs per token at seq {}: {} (6N + 12·l·s·h = {})\n", f.seq, format_number(f.training_flops_per_token),
                       format_number(f.palm_flops_per_token));
    out += fmt::format("Activations per token per layer (16-bit, micro-batch 1, no TP): {} with flash attention, {} eager\n",
                       format_bytes(Bytes(f.activation_bytes_flash)), format_bytes(Bytes(f.activation_bytes_eager)));
    std::cout << out;
    return 0;
  };
}

}  // namespace parasim::cli
