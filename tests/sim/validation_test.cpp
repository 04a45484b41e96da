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

TEST_CASE("the fill policy counts a plan as fitting when its tensors and the fixed allowance do") {
  // 76 GiB of tensors on an 80 GiB GPU: with the 1.5 GiB fixed allowance 77.5 GiB fit; the model's
  // full total adds 5% fragmentation (3.8 GiB) and is 81.3 GiB, over the capacity.
  const double gib = 1073741824.0;
  workload::MemoryReport m;
  m.capacity = Bytes(80 * gib);
  workload::StageMemory st;
  st.weights = Bytes(20 * gib);
  st.optimizer = Bytes(30 * gib);
  st.activations = Bytes(26 * gib);
  st.allowance = Bytes(workload::kFixedAllowanceBytes + workload::kFragmentation * 76 * gib);
  m.stages.push_back(st);
  CHECK_FALSE(m.fits());
  CHECK(fits_published(m));
  // 79 GiB of tensors: 80.5 GiB with the fixed allowance alone, which does not fit either way.
  m.stages[0].activations = Bytes(29 * gib);
  m.stages[0].allowance = Bytes(workload::kFixedAllowanceBytes + workload::kFragmentation * 79 * gib);
  CHECK_FALSE(fits_published(m));
}
