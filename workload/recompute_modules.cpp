#include "workload/recompute_modules.hpp"

#include <fmt/format.h>

namespace parasim::workload {

std::string_view recompute_module_name(RecomputeModule m) {
  switch (m) {
    case RecomputeModule::core_attn: return "core_attn";
    case RecomputeModule::mlp: return "mlp";
    case RecomputeModule::moe: return "moe";
    case RecomputeModule::moe_act: return "moe_act";
    case RecomputeModule::shared_experts: return "shared_experts";
    case RecomputeModule::layernorm: return "layernorm";
    case RecomputeModule::mla_up_proj: return "mla_up_proj";
  }
  return "";
}

std::optional<RecomputeModule> recompute_module_from_name(std::string_view name) {
  for (auto m : kAllRecomputeModules) {
    if (recompute_module_name(m) == name) return m;
  }
  return std::nullopt;
}

std::vector<std::string_view> RecomputeModules::names() const {
  std::vector<std::string_view> out;
  for (auto m : kAllRecomputeModules) {
    if (has(m)) out.push_back(recompute_module_name(m));
  }
  return out;
}

std::string RecomputeModules::joined() const { return fmt::format("{}", fmt::join(names(), ",")); }

std::optional<std::string> recompute_modules_problem(RecomputeModules modules, const ModelSpec& model) {
  if (modules.has(RecomputeModule::mla_up_proj) && !model.is_mla()) {
    return std::string("mla_up_proj needs multi-head latent attention (model.mla)");
  }
  return std::nullopt;
}

std::vector<RecomputeModules> recompute_module_ladder(const ModelSpec& model) {
  const bool moe = model.is_moe(), mla = model.is_mla();
  const bool dense_layers = !moe || model.first_dense_layers > 0 || model.moe_layer_frequency > 1;
  std::vector<RecomputeModules> ladder;
  auto set = RecomputeModules::of({});
  auto step = [&](std::initializer_list<RecomputeModule> modules) {
    const auto before = set;
    for (auto m : modules) set = set.with(m);
    if (set != before) ladder.push_back(set);
  };
  if (moe) step({RecomputeModule::moe_act, RecomputeModule::layernorm});
  if (mla) step({RecomputeModule::layernorm, RecomputeModule::mla_up_proj});
  // One rung for both whole MLPs: a dense layer's and the shared experts'.
  const auto before_mlps = set;
  if (dense_layers) set = set.with(RecomputeModule::mlp);
  if (moe && model.shared_experts > 0) set = set.with(RecomputeModule::shared_experts);
  if (set != before_mlps) ladder.push_back(set);
  if (moe) step({RecomputeModule::moe});
  return ladder;
}

}  // namespace parasim::workload
