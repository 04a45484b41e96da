#pragma once
// `parasim model` as a value: a model's parameters, FLOPs and activations per token, and its --json
// document, for the CLI and the Python module alike.
#include <nlohmann/json.hpp>
#include <string_view>

#include "workload/memory.hpp"
#include "workload/model.hpp"

namespace parasim::cli {

struct ModelFigures {
  int seq = 0;  ///< the sequence length the per-token figures are for
  workload::ParameterCount parameters;
  double training_flops_per_token = 0, palm_flops_per_token = 0;
  double activation_bytes_flash = 0, activation_bytes_eager = 0;  ///< per token per layer, no recompute
};

/// The figures at seq_len (0: the model's context, else 2048).
ModelFigures model_figures(const workload::ModelSpec& model, int seq_len = 0);

/// `parasim model --json`.
nlohmann::json model_json(const workload::ModelSpec& model, const ModelFigures& figures);

std::string_view activation_name(workload::Activation a);
std::string_view norm_name(workload::Norm n);
std::string_view position_name(workload::PositionEmbedding p);

}  // namespace parasim::cli
