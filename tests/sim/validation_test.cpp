#include <doctest/doctest.h>

#include <variant>

#include "sim/validation.hpp"

using namespace parasim;
using namespace parasim::sim;

namespace {
// dgxc-grok1-314b-bf16-256g of ../shared/validation/other_stacks.yaml, as load_measured_runs reads it.
MeasuredRun grok_row() {
  MeasuredRun r;
  r.id = "dgxc-grok1-314b-bf16-256g";
  r.family = "dgxc";
  r.arch = "moe";
  r.layers = 32;
  r.hidden = 6144;
  r.heads = 48;
  r.kv_heads = 8;
  r.ffn_hidden = 32768;
  r.vocab = 128256;
  r.seq_len = 8192;
  r.experts = 8;
  r.top_k = 2;
  r.gpu = "h100-sxm5-80gb";
  r.gpus = 256;
  r.nic_gbps_per_gpu = 400;
  r.precision = "bf16";
  r.attention = "flash";
  r.tp = 4;
  r.pp = 4;
  r.dp = 8;
  r.cp = 2;
  r.ep = 8;
  r.vpp = 8;
  r.micro_batch = 1;
  r.global_batch = 1024;
  r.measured_iteration_s = 20.83;
  return r;
}
}  // namespace

TEST_CASE("validate rebuilds MoE and context-parallel rows: experts from the row, ring CP, EP within dp·cp") {
  const auto built = row_scenario(grok_row(), "scenarios/hardware");
  REQUIRE(std::holds_alternative<RowScenario>(built));
  const auto& s = std::get<RowScenario>(built);
  // The llama block with 8 experts of the row's ffn_hidden, top-2, no shared experts.
  CHECK(s.model.experts == 8);
  CHECK(s.model.top_k == 2);
  CHECK(s.model.expert_ffn_hidden == 32768);
  CHECK(s.model.shared_experts == 0);
  CHECK(s.model.activation == workload::Activation::swiglu);
  const auto& p = s.candidates.front();
  CHECK(p.cp == 2);
  CHECK(p.cp_kind == workload::CpKind::ring);
  CHECK(p.ep == 8);
  // 4 x 4 x 8 x 2 = 256 GPUs; ep 8 within dp·cp = 16.
  CHECK(p.gpus() == 256);
  CHECK_FALSE(workload::find_plan_problem(p, s.model, 256, 8192).has_value());
  // A row without experts cannot be a mixture.
  auto bad = grok_row();
  bad.experts.reset();
  CHECK(std::get<std::string>(row_scenario(bad, "scenarios/hardware")) == "a mixture of experts needs experts and top_k");
}
