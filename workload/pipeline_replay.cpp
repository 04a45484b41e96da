#include "workload/pipeline_replay.hpp"

#include <algorithm>
#include <stdexcept>

#include "workload/chunk_placement.hpp"

namespace parasim::workload {

double PipelineTiming::longest_span() const {
  double span = 0;
  for (std::size_t s = 0; s < last_end.size(); ++s) span = std::max(span, last_end[s] - first_start[s]);
  return span;
}

namespace {

constexpr double kNotYet = -1;

class Replay {
 public:
  Replay(const PipelineShape& shape, const std::vector<std::vector<ScheduleStep>>& steps) : shape_(shape), steps_(steps) {
    plan_.schedule = shape.schedule;
    plan_.pp = shape.pp;
    plan_.vpp = shape.vpp;
    plan_.micro_batch = 1;
    plan_.global_batch = shape.micro_batches;
    const auto n = static_cast<std::size_t>(plan_.chunks() * shape.micro_batches);
    for (auto* v : {&forward_, &backward_}) v->assign(n, kNotYet);
    chunks_.resize(static_cast<std::size_t>(shape.pp));
    for (int s = 0; s < shape.pp; ++s) chunks_[static_cast<std::size_t>(s)] = stage_chunks(plan_, s);
  }

  PipelineTiming run() {
    const auto pp = static_cast<std::size_t>(shape_.pp);
    std::vector<std::size_t> next(pp, 0);
    timing_.first_start.assign(pp, -1);
    timing_.last_end.assign(pp, 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t s = 0; s < pp; ++s) {
        while (next[s] < steps_[s].size() && advance(static_cast<int>(s), next[s])) progress = true;
      }
    }
    for (std::size_t s = 0; s < pp; ++s) {
      if (next[s] < steps_[s].size()) throw std::logic_error("replay_pipeline: the schedule deadlocks");
      timing_.makespan = std::max(timing_.makespan, timing_.last_end[s]);
    }
    return timing_;
  }

 private:
  std::size_t slot(int chunk, int mb) const { return static_cast<std::size_t>(chunk * shape_.micro_batches + mb); }
  int model_chunk(int stage, const ScheduleStep& step) const { return chunks_[static_cast<std::size_t>(stage)][static_cast<std::size_t>(step.chunk)]; }
  double hop(int chunk, int other, int mb) const { return chunk_stage(plan_, chunk, mb) == chunk_stage(plan_, other, mb) ? 0 : shape_.times.transfer; }

  // When a pass's input is there; kNotYet while it is not.
  double forward_input(int c, int mb) const {
    if (c == 0) return 0;
    const double before = forward_[slot(c - 1, mb)];
    return before < 0 ? kNotYet : before + hop(c, c - 1, mb);
  }
  double backward_input(int c, int mb) const {
    const double own = forward_[slot(c, mb)];
    if (own < 0) return kNotYet;
    if (c == plan_.chunks() - 1) return own;
    const double after = backward_[slot(c + 1, mb)];
    return after < 0 ? kNotYet : std::max(own, after + hop(c, c + 1, mb));
  }

  // Runs step `i` of a stage if its inputs are there (an F&B pair runs both); false otherwise.
  bool advance(int stage, std::size_t& i) {
    const auto& steps = steps_[static_cast<std::size_t>(stage)];
    const auto& step = steps[i];
    const int c = model_chunk(stage, step);
    const PassTimes& t = shape_.times;
    auto& end = timing_.last_end[static_cast<std::size_t>(stage)];
    double ready = 0, cost = 0;
    if (step.pass == Pass::forward && step.overlaps_next && i + 1 < steps.size()) {
      const auto& b = steps[i + 1];
      const int bc = model_chunk(stage, b);
      const double f_in = forward_input(c, step.microbatch), b_in = backward_input(bc, b.microbatch);
      if (f_in < 0 || b_in < 0) return false;
      const double start = std::max({end, f_in, b_in});
      note_start(stage, start);
      forward_[slot(c, step.microbatch)] = start + t.forward;
      end = backward_[slot(bc, b.microbatch)] = start + t.forward + t.backward + (b.defers_weight ? 0 : t.weight);
      i += 2;
      return true;
    }
    switch (step.pass) {
      case Pass::forward: ready = forward_input(c, step.microbatch), cost = t.forward; break;
      case Pass::backward: ready = backward_input(c, step.microbatch), cost = t.backward + (step.defers_weight ? 0 : t.weight); break;
      case Pass::weight: ready = backward_[slot(c, step.microbatch)], cost = t.weight; break;
    }
    if (ready < 0) return false;
    const double start = std::max(end, ready);
    note_start(stage, start);
    end = start + cost;
    if (step.pass == Pass::forward) forward_[slot(c, step.microbatch)] = end;
    if (step.pass == Pass::backward) backward_[slot(c, step.microbatch)] = end;
    ++i;
    return true;
  }
  void note_start(int stage, double start) {
    auto& first = timing_.first_start[static_cast<std::size_t>(stage)];
    if (first < 0) first = start;
  }

  const PipelineShape& shape_;
  const std::vector<std::vector<ScheduleStep>>& steps_;
  Plan plan_;
  std::vector<std::vector<int>> chunks_;
  std::vector<double> forward_, backward_;
  PipelineTiming timing_;
};

}  // namespace

PipelineTiming replay_pipeline(const PipelineShape& shape, const std::vector<std::vector<ScheduleStep>>& steps) {
  return Replay(shape, steps).run();
}

}  // namespace parasim::workload
