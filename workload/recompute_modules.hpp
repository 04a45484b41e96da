#pragma once
// What selective recompute reruns, by module, as Megatron-Core's --recompute-modules names them
// (megatron/core/transformer/transformer_config.py; the default is core_attn alone). Two kinds of
// checkpoint stand behind the names, and they differ in what the forward keeps:
//
//   a module checkpoint (core_attn, mlp, moe, shared_experts) keeps the module's input only and
//     reruns its whole forward, its collectives included, when backward reaches it;
//   an output-discarding checkpoint (moe_act, layernorm, mla_up_proj) frees one output once the
//     forward has used it and recomputes it before the first backward that reads it.
//
// Per module, with Transformer Engine's layer specs (a norm fused into the linear after it is no
// module of its own, so `layernorm` reaches only the norms that stand alone):
//   core_attn       the attention core (its scores, with eager attention)
//   mlp             a dense layer's MLP: fc1, the activation, fc2, their TP collectives (MoE layers:
//                   no effect, as in Megatron-Core)
//   moe             a MoE layer's whole MLP part: router, dispatch, experts, combine, shared experts
//   moe_act         the routed experts' activation output (fc2's input)
//   shared_experts  the shared experts' MLP
//   layernorm       the outputs of the norms that stand alone: MLA's input norm, a MoE layer's
//                   pre-MLP norm
//   mla_up_proj     MLA's query and key/value up projections and RoPE: Q, K and V
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workload/model.hpp"

namespace parasim::workload {

enum class RecomputeModule : std::uint8_t { core_attn, mlp, moe, moe_act, shared_experts, layernorm, mla_up_proj };
inline constexpr RecomputeModule kAllRecomputeModules[] = {RecomputeModule::core_attn,      RecomputeModule::mlp,       RecomputeModule::moe,
                                                           RecomputeModule::moe_act,        RecomputeModule::shared_experts,
                                                           RecomputeModule::layernorm,      RecomputeModule::mla_up_proj};

std::string_view recompute_module_name(RecomputeModule m);
std::optional<RecomputeModule> recompute_module_from_name(std::string_view name);

/// A set of modules; Megatron-Core's default is core_attn alone.
class RecomputeModules {
 public:
  constexpr RecomputeModules() = default;  ///< Megatron-Core's default: core_attn
  /// Exactly these modules ({} is the empty set).
  static constexpr RecomputeModules of(std::initializer_list<RecomputeModule> modules) {
    RecomputeModules out;
    out.bits_ = 0;
    for (auto m : modules) out.bits_ |= bit(m);
    return out;
  }
  constexpr bool has(RecomputeModule m) const { return (bits_ & bit(m)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr bool is_default() const { return bits_ == bit(RecomputeModule::core_attn); }
  constexpr RecomputeModules with(RecomputeModule m) const {
    RecomputeModules out = *this;
    out.bits_ |= bit(m);
    return out;
  }
  constexpr std::uint8_t bits() const { return bits_; }
  constexpr bool operator==(const RecomputeModules&) const = default;
  /// The modules in Megatron-Core's order (kAllRecomputeModules), as --recompute-modules lists them.
  std::vector<std::string_view> names() const;
  /// "core_attn,mlp": the names joined by commas.
  std::string joined() const;

 private:
  static constexpr std::uint8_t bit(RecomputeModule m) { return static_cast<std::uint8_t>(1u << static_cast<unsigned>(m)); }
  std::uint8_t bits_ = 1;  // core_attn
};

/// What is wrong with a module set for a model, as Megatron-Core's checks say it: mla_up_proj needs
/// multi-head latent attention. Empty when nothing is.
std::optional<std::string> recompute_modules_problem(RecomputeModules modules, const ModelSpec& model);

/// The module sets a search tries beyond the default, least recomputed first, for a model: the
/// outputs that are cheap to recompute (the experts' activation, MLA's up projections and the
/// stand-alone norms), then whole MLPs too (the dense MLP and the shared experts), then the MoE
/// part entire. Only sets that differ in what the model keeps are listed.
std::vector<RecomputeModules> recompute_module_ladder(const ModelSpec& model);

}  // namespace parasim::workload
