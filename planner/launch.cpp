#include "planner/launch.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <sstream>

#include "core/error.hpp"

namespace parasim::planner {

using workload::Plan;
using workload::Recompute;

std::string plan_yaml(const Plan& p, const std::string& comment) {
  std::string out;
  std::istringstream lines(comment);
  for (std::string line; std::getline(lines, line);) out += "# " + line + "\n";
  out += fmt::format("tp: {}\nsp: {}\npp: {}\nvpp: {}\ndp: {}\n", p.tp, p.sp ? "true" : "false", p.pp, p.vpp, p.dp);
  if (p.microbatch_group > 0) out += fmt::format("microbatch_group: {}\n", p.microbatch_group);
  if (p.cp > 1) out += fmt::format("cp: {}\ncp_kind: {}\n", p.cp, workload::cp_kind_name(p.cp_kind));
  if (p.ep > 1) out += fmt::format("ep: {}\n", p.ep);
  if (p.etp > 0) out += fmt::format("etp: {}\n", p.etp);
  out += fmt::format("schedule: {}\nzero: {}\n", workload::schedule_name(p.schedule), p.zero);
  if (p.zero_group > 0) out += fmt::format("zero_group: {}\n", p.zero_group);
  out += fmt::format("micro_batch: {}\nglobal_batch: {}\nrecompute: {}\n", p.micro_batch, p.global_batch, workload::recompute_name(p.recompute));
  if (p.recompute == Recompute::full) {
    out += fmt::format("recompute_method: {}\nrecompute_layers: {}\n", p.recompute_method == workload::RecomputeMethod::block ? "block" : "uniform",
                       p.recompute_layers);
  }
  if (p.recomputes_selectively() && !p.recompute_modules.is_default()) out += fmt::format("recompute_modules: [{}]\n", fmt::join(p.recompute_modules.names(), ", "));
  if (!p.recompute_overrides.empty()) {
    out += "overrides:\n";
    for (const auto& o : p.recompute_overrides) {
      out += fmt::format("  - {{layers: [{}, {}], recompute: {}}}\n", o.first_layer, o.last_layer, workload::recompute_name(o.recompute));
    }
  }
  out += fmt::format("overlap: {{grad_reduce: {}, param_gather: {}, tp_comm: {}, ep_comm: {}}}\n", p.overlap.grad_reduce, p.overlap.param_gather,
                     p.overlap.tp_comm, p.overlap.ep_comm);
  std::string order;
  for (auto d : workload::full_order(p.order)) order += fmt::format("{}{}", order.empty() ? "" : ", ", workload::dim_name(d));
  out += fmt::format("order: [{}]\n", order);
  if (!p.chunk_layers.empty()) {
    std::string split;
    for (int n : p.chunk_layers) split += fmt::format("{}{}", split.empty() ? "" : ", ", n);
    out += fmt::format("stage_layers: [{}]\n", split);
  }
  if (p.bucket_params > 0) out += fmt::format("bucket_params: {}\n", p.bucket_params);
  return out;
}

nlohmann::json deepspeed_config(const Plan& p, const workload::TrainingSpec& tr) {
  nlohmann::json c;
  c["train_batch_size"] = p.global_batch;
  c["train_micro_batch_size_per_gpu"] = p.micro_batch;
  c["gradient_accumulation_steps"] = p.micro_batches();
  c["bf16"] = {{"enabled", tr.precision == Precision::bf16 || tr.precision == Precision::fp8}};
  c["fp16"] = {{"enabled", tr.precision == Precision::fp16}};
  const double bucket = p.gradient_bucket_params();
  nlohmann::json zero = {{"stage", p.zero},
                         {"overlap_comm", p.overlap.grad_reduce},
                         {"contiguous_gradients", true},
                         {"reduce_scatter", true},
                         {"reduce_bucket_size", static_cast<long long>(bucket)},
                         {"allgather_bucket_size", static_cast<long long>(bucket)}};
  if (p.zero == 3) {
    zero["stage3_prefetch_bucket_size"] = static_cast<long long>(bucket);
    zero["stage3_param_persistence_threshold"] = 100000;
  }
  if (p.zero_group > 0 && p.zero >= 1) zero["zero_hpz_partition_size"] = p.zero_group;
  c["zero_optimization"] = zero;
  if (p.recompute != Recompute::none || !p.recompute_overrides.empty()) {
    c["activation_checkpointing"] = {{"partition_activations", p.tp > 1}, {"contiguous_memory_optimization", false}, {"cpu_checkpointing", false}};
  }
  if (p.cp > 1 && p.cp_kind == workload::CpKind::ulysses && p.tp == 1 && p.pp == 1) {
    // deepspeed.initialize builds its (data, sequence) mesh over every rank from these two keys when
    // both are there; with tensor or pipeline parallelism the mesh would not cover the ranks, and
    // Megatron-DeepSpeed's mpu gives the sequence-parallel groups instead.
    c["data_parallel_size"] = p.dp;
    c["sequence_parallel_size"] = p.cp;
  }
  c["gradient_clipping"] = 1.0;
  c["steps_per_print"] = 10;
  return c;
}

}  // namespace parasim::planner
