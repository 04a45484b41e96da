#pragma once
// Imports a Hugging Face `config.json` as a ModelSpec. The config's `architectures[0]` (a Transformers
// class name) picks the mapping from its keys to ours; an unknown class is an error that lists the
// supported ones. Errors name the file, the line and column of the offending value, and its key.
#include <filesystem>
#include <string>

#include "workload/model.hpp"

namespace parasim::workload {

/// Reads a Hugging Face config.json (LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM,
/// MixtralForCausalLM, Qwen2MoeForCausalLM, GPT2LMHeadModel, GPTNeoXForCausalLM, BertForMaskedLM);
/// encoder-decoder classes (T5, BART) are errors that say what is missing. Throws InputError naming the file, line and key.
/// The model is named after the file's directory (`llama-2-7b/config.json` → "llama-2-7b").
ModelSpec import_hf_config(const std::filesystem::path& file);

/// The same for JSON text that stands for the file `display_name` (used in errors and for the name).
ModelSpec import_hf_config_text(const std::string& json_text, const std::string& display_name);

}  // namespace parasim::workload
