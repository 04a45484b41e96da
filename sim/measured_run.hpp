#pragma once
// Published measurements of real training runs (../shared/validation/README.md): a model, a
// cluster, the plan that was used, and the time one optimizer step took. Fields a source did not
// print are absent (nullopt); `validate` fills them by one policy.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace parasim::sim {

struct MeasuredRun {
  std::string id;
  std::string family;  ///< the id's first word: sc21, korthikanti, foundry, dgxc, …
  std::string source;
  SourceLocation where;
  // model
  std::string arch;  ///< gpt | llama | moe
  int layers = 0, hidden = 0, heads = 0, seq_len = 0;
  std::optional<int> kv_heads, ffn_hidden, vocab, experts, top_k, shared_experts, expert_ffn_hidden;
  std::optional<double> params_b;
  // cluster
  std::string gpu;
  int gpus = 0, gpus_per_node = 8;
  std::optional<double> nic_gbps_per_gpu;
  // training
  std::string precision, attention;
  // plan
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  int global_batch = 0;
  std::optional<bool> sp;
  std::optional<int> vpp, zero, micro_batch, zero_group;
  std::optional<std::string> recompute;
  std::optional<bool> overlap_grad_reduce, overlap_param_gather, overlap_tp_comm;
  double measured_iteration_s = 0;
  /// Peak GPU memory the source printed (`as_published.gpu_mem`, e.g. "29GB"), when it did.
  std::optional<double> published_memory_bytes;
};

/// Reads a measured-run file; unknown keys and bad values fail with file, line and key path.
std::vector<MeasuredRun> load_measured_runs(const std::filesystem::path& file);

}  // namespace parasim::sim
