#include "workload/chunk_placement.hpp"

#include <algorithm>

namespace parasim::workload {

bool is_v_shaped(Schedule schedule) { return schedule == Schedule::zb_v || schedule == Schedule::dualpipe_v; }

bool runs_reversed(const Plan& plan, int microbatch) {
  return plan.schedule == Schedule::dualpipe && microbatch >= plan.micro_batches() / 2;
}

int chunk_stage(const Plan& plan, int chunk, int microbatch) {
  if (is_v_shaped(plan.schedule)) return chunk < plan.pp ? chunk : 2 * plan.pp - 1 - chunk;
  if (plan.schedule == Schedule::dualpipe) return runs_reversed(plan, microbatch) ? plan.pp - 1 - chunk : chunk;
  return chunk % plan.pp;
}

std::vector<int> stage_chunks(const Plan& plan, int stage) {
  if (is_v_shaped(plan.schedule)) return {stage, 2 * plan.pp - 1 - stage};
  if (plan.schedule == Schedule::dualpipe) return {std::min(stage, plan.pp - 1 - stage), std::max(stage, plan.pp - 1 - stage)};
  std::vector<int> out;
  for (int c = stage; c < plan.chunks(); c += plan.pp) out.push_back(c);
  return out;
}

bool holds_embedding(const Plan& plan, int stage) {
  const auto chunks = stage_chunks(plan, stage);
  return std::find(chunks.begin(), chunks.end(), 0) != chunks.end();
}

bool holds_head(const Plan& plan, int stage) {
  const auto chunks = stage_chunks(plan, stage);
  return std::find(chunks.begin(), chunks.end(), plan.chunks() - 1) != chunks.end();
}

int mirror_stage(const Plan& plan, int stage) { return plan.schedule == Schedule::dualpipe ? plan.pp - 1 - stage : -1; }

}  // namespace parasim::workload
