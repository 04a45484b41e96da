#pragma once
// What torchtitan v0.2.2 (commit 73a0e69, the last release configured by TOML) runs of a job and a
// plan: the models it ships (by shape: a flavor of llama3, llama4, deepseek_v3, qwen3 or gpt_oss),
// its formats (bf16, float8 linears through torchao), and of the plan what its device mesh, FSDP2,
// pipeline schedules and activation checkpointing can state. The search under --framework
// torchtitan and the torchtitan.toml writer both ask here.
#include <optional>
#include <string>
#include <string_view>

#include "workload/model.hpp"
#include "workload/plan.hpp"
#include "workload/training.hpp"

namespace parasim::planner {

inline constexpr std::string_view kTorchtitanRelease = "v0.2.2";
inline constexpr std::string_view kTorchtitanCommit = "73a0e6979dd10b6b1904098eb3c8f62c18ab87ce";

/// A model torchtitan ships: its train spec name and flavor, and the shape that identifies it.
struct TorchtitanFlavor {
  std::string_view name, flavor;
  int layers, hidden, heads, kv_heads;  ///< kv_heads 0: multi-head latent attention
  int ffn_hidden;                       ///< the dense MLP (MoE models: their dense layers')
  int experts, top_k, expert_ffn_hidden;
  std::string_view hf_assets;  ///< the tokenizer folder its own train configs name
};

/// The shipped flavor with this model's shape; nullopt when torchtitan v0.2.2 builds no such model.
std::optional<TorchtitanFlavor> torchtitan_flavor(const workload::ModelSpec& model);

/// Why torchtitan cannot train this model in this format at all (unshipped model, fp16); nullopt
/// when it can.
std::optional<std::string> torchtitan_job_problem(const workload::ModelSpec& model, const workload::TrainingSpec& training);

/// Why torchtitan cannot run the plan, in its terms; nullopt when it can.
std::optional<std::string> torchtitan_plan_problem(const workload::Plan& plan);

/// The pipeline_parallel_schedule name of the plan's schedule; empty when torchtitan has none.
std::string_view torchtitan_schedule_name(const workload::Plan& plan);

}  // namespace parasim::planner
