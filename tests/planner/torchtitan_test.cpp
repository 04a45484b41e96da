#include <doctest/doctest.h>

#include "planner/launch.hpp"
#include "plan_shapes.hpp"
#include "sim/scenario.hpp"

using namespace parasim;
using namespace parasim::planner;
using workload::Plan;
using workload::Recompute;
using workload::Schedule;

namespace {
Plan plan(int tp, int pp, int dp, int zero) { return test::plan_of(tp, pp, dp, zero); }

workload::TrainingSpec bf16(int seq_len) {
  workload::TrainingSpec t;
  t.precision = Precision::bf16;
  t.seq_len = seq_len;
  return t;
}

// The value of `key = ...` in the TOML text (the first line that sets it).
std::string value_of(const std::string& toml, const std::string& key) {
  const auto at = toml.find("\n" + key + " = ");
  if (at == std::string::npos) return "";
  const auto start = at + key.size() + 4;
  return toml.substr(start, toml.find('\n', start) - start);
}
}  // namespace

TEST_CASE("torchtitan v0.2.2's models are found by shape, and a model it does not ship is refused") {
  CHECK(torchtitan_flavor(sim::load_model("scenarios/models/llama-3-8b.yaml"))->flavor == "8B");
  CHECK(torchtitan_flavor(sim::load_model("scenarios/models/llama-3-405b.yaml"))->flavor == "405B");
  CHECK(torchtitan_flavor(sim::load_model("scenarios/models/qwen3-30b-a3b.yaml"))->flavor == "30B-A3B");
  const auto deepseek = torchtitan_flavor(sim::load_model("scenarios/models/deepseek-v3.yaml"));
  CHECK(deepseek->name == "deepseek_v3");
  CHECK(deepseek->flavor == "671B");
  // Llama 2 7B has Llama 3 8B's depth and width but 32 key/value heads and an 11008-wide MLP.
  const auto llama2 = sim::load_model("scenarios/models/llama-2-7b.yaml");
  CHECK_FALSE(torchtitan_flavor(llama2));
  const auto why = torchtitan_job_problem(llama2, bf16(4096));
  REQUIRE(why);
  CHECK(why->find("torchtitan v0.2.2 ships no model of Llama-2-7B's shape") == 0);
  auto fp16 = bf16(4096);
  fp16.precision = Precision::fp16;
  CHECK(torchtitan_job_problem(sim::load_model("scenarios/models/llama-3-8b.yaml"), fp16) == "torchtitan trains in bf16 (or fp32), not fp16");
}

TEST_CASE("torchtitan runs FSDP2 (or DDP alone), TP with SP, ring CP and its own schedules") {
  CHECK_FALSE(torchtitan_plan_problem(plan(1, 1, 8, 3)));
  CHECK_FALSE(torchtitan_plan_problem(plan(1, 1, 8, 0)));  // DDP alone
  CHECK_FALSE(torchtitan_plan_problem(plan(8, 4, 2, 3)));
  CHECK(torchtitan_plan_problem(plan(2, 1, 4, 1)) == "torchtitan has no optimizer-only sharding (ZeRO-1): FSDP2 shards weights, gradients and optimizer state");
  CHECK(torchtitan_plan_problem(plan(2, 1, 4, 0)) == "torchtitan's DDP (data parallelism without sharding) runs alone, not beside tp, cp or pp");
  auto no_sp = plan(2, 1, 4, 3);
  no_sp.sp = false;
  CHECK(torchtitan_plan_problem(no_sp) == "torchtitan's tensor parallelism always shards the norms' sequence (sequence parallelism)");
  auto ulysses = plan(1, 1, 4, 3);
  ulysses.cp = 2;
  ulysses.cp_kind = workload::CpKind::ulysses;
  CHECK(torchtitan_plan_problem(ulysses) == "torchtitan's context parallelism is ring attention, not Ulysses");
  auto zb = plan(1, 4, 2, 3);
  zb.schedule = Schedule::zb_1p;
  CHECK(torchtitan_plan_problem(zb) == "torchtitan has no zb-1p schedule");
  auto v = plan(1, 4, 2, 3);
  v.schedule = Schedule::zb_v;
  v.vpp = 2;
  CHECK_FALSE(torchtitan_plan_problem(v));
  CHECK(torchtitan_schedule_name(v) == "ZBVZeroBubble");
  auto dualpipe = v;
  dualpipe.schedule = Schedule::dualpipe_v;
  dualpipe.ep = 2;
  dualpipe.recompute = Recompute::full;
  CHECK(torchtitan_plan_problem(dualpipe) == "torchtitan refuses DualPipeV with expert parallelism and activation checkpointing together");
  auto groups = plan(1, 1, 8, 3);
  groups.recompute = Recompute::full;
  groups.recompute_layers = 2;
  CHECK(torchtitan_plan_problem(groups) == "torchtitan checkpoints each layer on its own, not Megatron-LM's groups or blocks of layers");
  // PyTorch's ScheduleInterleaved1F1B groups the micro-batches in max(1, m / pp) equal rounds.
  auto rounds = plan(1, 4, 2, 3);
  rounds.schedule = Schedule::interleaved_1f1b;
  rounds.vpp = 2;
  rounds.global_batch = 20;  // 10 micro-batches a replica: 2 rounds of 5
  CHECK(torchtitan_plan_problem(rounds) == "PyTorch's Interleaved1F1B runs the 10 micro-batches in rounds of 5, not groups of 4");
  rounds.microbatch_group = 5;
  CHECK_FALSE(torchtitan_plan_problem(rounds));
  rounds.global_batch = 14;  // 7 micro-batches over pp 2: Megatron-Core's groups of 4 and 3, no equal rounds
  rounds.pp = 2;
  rounds.dp = 2;
  rounds.microbatch_group = 4;
  CHECK(torchtitan_plan_problem(rounds) == "PyTorch's Interleaved1F1B splits the 7 micro-batches into 3 equal rounds, which they are not");
  auto ragged = plan(1, 1, 8, 3);
  ragged.global_batch = 60;
  CHECK(torchtitan_plan_problem(ragged) == "torchtitan accumulates whole local batches: global batch 60 is no multiple of 1 x dp 8");
}

TEST_CASE("torchtitan.toml: the mesh, the batch as local batches and micro-batches, the model parts of a pipeline") {
  const auto model = sim::load_model("scenarios/models/llama-3-8b.yaml");
  // 64 GPUs: HSDP over 16 (2 x 8), TP 2, PP 2 with 4 model parts (interleaved), micro-batch 2.
  auto p = plan(2, 2, 16, 3);
  p.zero_group = 8;
  p.vpp = 2;
  p.schedule = Schedule::interleaved_1f1b;
  p.micro_batch = 2;
  p.recompute = Recompute::full;
  const auto toml = torchtitan_toml(p, model, bf16(8192), {"parasim plan test"}, 4);
  CHECK(toml.rfind("# parasim plan test\n# torchtitan v0.2.2 (commit 73a0e69", 0) == 0);
  CHECK(toml.find("#   torchrun --nproc_per_node=4 -m torchtitan.train") != std::string::npos);  // the node's GPUs
  CHECK(value_of(toml, "name") == "\"llama3\"");
  CHECK(value_of(toml, "flavor") == "\"8B\"");
  CHECK(value_of(toml, "data_parallel_replicate_degree") == "2");
  CHECK(value_of(toml, "data_parallel_shard_degree") == "8");
  CHECK(value_of(toml, "tensor_parallel_degree") == "2");
  CHECK(value_of(toml, "pipeline_parallel_degree") == "2");
  CHECK(value_of(toml, "pipeline_parallel_schedule") == "\"Interleaved1F1B\"");
  // With a pipeline the local batch is the replica's whole share (64 / 16), in micro-batches of 2.
  CHECK(value_of(toml, "local_batch_size") == "4");
  CHECK(value_of(toml, "global_batch_size") == "64");
  CHECK(value_of(toml, "pipeline_parallel_microbatch_size") == "2");
  CHECK(value_of(toml, "mode") == "\"full\"");
  // 32 layers in 4 parts of 8, the embedding with the first, the norm and the output with the last.
  CHECK(toml.find("  [\"tok_embeddings\", \"layers.0\",") != std::string::npos);
  CHECK(toml.find("\"layers.7\"],\n  [\"layers.8\",") != std::string::npos);
  CHECK(toml.find("\"layers.31\", \"norm\", \"output\"],\n]") != std::string::npos);
  // Without a pipeline a step accumulates local batches of one micro-batch.
  auto flat = plan(1, 1, 8, 3);
  flat.micro_batch = 2;
  const auto fsdp = torchtitan_toml(flat, model, bf16(8192), {}, 8);
  CHECK(value_of(fsdp, "local_batch_size") == "2");
  CHECK(value_of(fsdp, "data_parallel_shard_degree") == "8");
  CHECK(fsdp.find("pipeline_parallel_schedule") == std::string::npos);
  // fp8: torchao's float8 linears, compiled.
  auto fp8 = bf16(8192);
  fp8.precision = Precision::fp8;
  const auto f8 = torchtitan_toml(flat, model, fp8, {}, 8);
  CHECK(value_of(f8, "converters") == "[\"quantize.linear.float8\"]");
  CHECK(f8.find("[quantize.linear.float8]\nrecipe_name = \"tensorwise\"") != std::string::npos);
  CHECK(value_of(f8, "enable") == "true");  // [compile] is the first table with `enable`
  CHECK_THROWS(torchtitan_toml(plan(2, 1, 4, 1), model, bf16(8192), {}, 8));
}

TEST_CASE("torchtitan's launch script runs torchtitan.train on the job config beside it, from the checkout, rank 0's output") {
  const auto script = torchtitan_launch_script({{"parasim confirm job: plan 1 of 2"}, 2, 8});
  CHECK(script.find("# parasim confirm job: plan 1 of 2\n") != std::string::npos);
  CHECK(script.find("NNODES=2\nGPUS_PER_NODE=8\n") != std::string::npos);
  CHECK(script.find("NODE_RANK=${NODE_RANK:?") != std::string::npos);
  CHECK(script.find("config=\"$(cd \"$(dirname \"$0\")\" && pwd)/torchtitan.toml\"\n") != std::string::npos);
  CHECK(script.find("cd \"$TORCHTITAN\"\n") != std::string::npos);
  CHECK(script.find("--local-ranks-filter 0 --role rank --tee 3") != std::string::npos);
  CHECK(script.find("-m torchtitan.train --job.config_file \"$config\"\n") != std::string::npos);
}
