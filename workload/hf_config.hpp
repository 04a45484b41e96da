#pragma once
// Imports a Hugging Face `config.json` as a ModelSpec. The config's `architectures[0]` (a Transformers
// class name) picks the mapping from its keys to ours; an unknown class is an error that lists the
// supported ones (with no "did you mean": a near name is a different model). Errors name the file, the
// line and column of the offending value, and its key.
#include <filesystem>
#include <string>

#include "workload/model.hpp"

namespace parasim::workload {

/// Reads a Hugging Face config.json (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,
/// MixtralForCausalLM, Qwen2MoeForCausalLM, GPT2LMHeadModel, GPTNeoXForCausalLM, BertForMaskedLM,
/// DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, Gemma2ForCausalLM,
/// Gemma3ForCausalLM, Gemma3ForConditionalGeneration, Phi3ForCausalLM, OlmoForCausalLM, Olmo2ForCausalLM,
/// GptOssForCausalLM, Llama4ForCausalLM, Llama4ForConditionalGeneration; the multimodal classes import
/// their language model from `text_config`, the vision tower uncounted). Encoder-decoder classes (T5,
/// BART) are errors that say what is missing. A key that changes the cost and that ModelSpec cannot state
/// (dense layers at chosen positions, a window pattern without a period) is an error at that key; what
/// is left out on purpose (soft-capping, attention sinks, router biases, ...) is below each reader in
/// hf_config.cpp. Throws InputError naming the file, line and key.
/// The model is named after the file's directory (`llama-2-7b/config.json` → "llama-2-7b").
ModelSpec import_hf_config(const std::filesystem::path& file);

/// The same for JSON text that stands for the file `display_name` (used in errors and for the name).
ModelSpec import_hf_config_text(const std::string& json_text, const std::string& display_name);

}  // namespace parasim::workload
