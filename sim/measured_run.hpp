#pragma once
// Published measurements of real training runs (../shared/validation/README.md): a model, a
// cluster, the plan that was used, and the time one optimizer step took. Fields a source did not
// print are absent (nullopt); `validate` fills them by one policy.
//
// A file is read a row at a time: a row with an unknown key or a bad value is an error for that row
// alone (file, line, column and key path), and the other rows are read.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"

#include "sim/software_stack.hpp"
#include "workload/training.hpp"

namespace parasim::sim {

/// Multi-head latent attention (DeepSeek-V2/V3) as a row states it.
struct MlaShape {
  std::optional<int> q_lora_rank;  ///< absent: queries are projected directly
  int kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
  bool operator==(const MlaShape&) const = default;
};

struct MeasuredRun {
  std::string id;
  std::string family;  ///< the id's first word: sc21, korthikanti, foundry, dgxc, …
  std::string source;
  std::string notes;  ///< what the row's author inferred and its caveats, as written
  SourceLocation where;
  // model
  std::string arch;  ///< gpt | llama | moe
  int layers = 0, hidden = 0, heads = 0, seq_len = 0;
  std::optional<int> kv_heads, head_dim, ffn_hidden, vocab, experts, top_k, shared_experts, expert_ffn_hidden;
  std::optional<int> dense_layers;    ///< MoE: the first N layers keep the dense MLP
  std::optional<MlaShape> mla;
  std::optional<int> mtp_layers;      ///< multi-token-prediction blocks
  std::optional<int> sliding_window;  ///< attention window in tokens
  std::optional<double> dropout;      ///< attention and hidden dropout, where the source states it
  std::optional<double> params_b;
  std::optional<bool> tied_embeddings;  ///< where the source states it (a log's model arguments)
  /// Adam's step as a log shows it ran (Megatron-LM's fallback to torch.optim: foreach); rows do not say.
  std::optional<workload::OptimizerKernel> optimizer_kernel;
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
  /// Megatron-Core's --recompute-modules where the source names them (recompute selective).
  std::optional<std::vector<std::string>> recompute_modules;
  std::optional<std::string> schedule;  ///< as the row names it: 1f1b, interleaved-1f1b, zb-v, …
  std::vector<int> stage_layers;        ///< transformer layers per pipeline stage; empty: not given
  std::optional<bool> overlap_grad_reduce, overlap_param_gather, overlap_tp_comm;
  double measured_iteration_s = 0;
  /// Peak GPU memory the source printed, when it did: `as_published.gpu_mem` as a size ("29GB"), or
  /// a number under a key naming memory and its unit (`peak_mem_gib: 82.4`, `max_reserved_mib`).
  std::optional<double> published_memory_bytes;
  /// What that figure counts: the key says (…reserved…, …alloc…), else the stack's own printer
  /// (sim/software_stack.hpp), else the device's whole use.
  std::optional<PrintedMemory> published_memory_kind;
};

/// Whether two rows give the simulator the same job: every model, cluster, training and plan field
/// they state, and the stack their sources name, equal (their ids, sources' wording, measurements and
/// notes aside). Two such rows are the same run measured twice, not two plans to order.
bool same_inputs(const MeasuredRun& a, const MeasuredRun& b);

/// A row that could not be read.
struct RowError {
  std::string id;  ///< the row's id where it has a readable one
  InputError error;
};

struct MeasuredRunFile {
  std::vector<MeasuredRun> runs;
  std::vector<RowError> errors;  ///< in file order
};

/// Reads a measured-run file row by row. Throws InputError only when the file itself cannot be read
/// (missing, malformed YAML, no `runs` list).
MeasuredRunFile read_measured_runs(const std::filesystem::path& file);

/// As read_measured_runs, but the first row error is thrown: for commands that need every row.
std::vector<MeasuredRun> load_measured_runs(const std::filesystem::path& file);

}  // namespace parasim::sim
