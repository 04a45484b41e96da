#include <doctest/doctest.h>

#include "workload/schedule.hpp"

using namespace parasim::workload;

namespace {
std::string render(const std::vector<ScheduleStep>& steps) {
  std::string out;
  for (const auto& s : steps) {
    if (!out.empty()) out += ' ';
    out += s.pass == Pass::forward ? 'F' : s.pass == Pass::backward ? 'B' : 'W';
    out += std::to_string(s.microbatch);
    if (s.chunk > 0) {
      out += '.';
      out += std::to_string(s.chunk);
    }
  }
  return out;
}
}  // namespace

TEST_CASE("1F1B: warm-up of pp - stage - 1 forwards, then alternate, then drain") {
  // pp = 4, m = 6. Stage 0 warms up with 3 forwards, stage 3 with none.
  CHECK(warmup_steps(Schedule::one_f_one_b, 4, 1, 0, 6) == 3);
  CHECK(warmup_steps(Schedule::one_f_one_b, 4, 1, 3, 6) == 0);
  CHECK(render(stage_schedule(Schedule::one_f_one_b, 4, 1, 0, 6)) == "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  CHECK(render(stage_schedule(Schedule::one_f_one_b, 4, 1, 3, 6)) == "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
  // Fewer micro-batches than stages: warm-up is capped at m.
  CHECK(render(stage_schedule(Schedule::one_f_one_b, 4, 1, 0, 2)) == "F0 F1 B0 B1");
}

TEST_CASE("every forward comes before its backward, and each runs once") {
  for (auto s : {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved_1f1b}) {
    const int v = s == Schedule::interleaved_1f1b ? 2 : 1;
    for (int stage = 0; stage < 4; ++stage) {
      const auto steps = stage_schedule(s, 4, v, stage, 8);
      CHECK(steps.size() == 2u * 8 * v);
      for (std::size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].pass != Pass::backward) continue;
        bool forward_before = false;
        for (std::size_t j = 0; j < i; ++j) {
          forward_before |= steps[j].pass == Pass::forward && steps[j].microbatch == steps[i].microbatch && steps[j].chunk == steps[i].chunk;
        }
        CHECK(forward_before);
      }
    }
  }
}

TEST_CASE("interleaved 1F1B matches Megatron-LM for pp = 4, vpp = 2, 8 micro-batches") {
  // Megatron-LM: warm-up (pp - rank - 1)·2 + (v - 1)·pp virtual forwards; virtual step k runs chunk
  // (k mod 8) div 4 (reversed for backward) on micro-batch (k div 8)·4 + k mod 4.
  // Stage 0: 10 warm-up forwards: k = 0..9 -> F0 F1 F2 F3 (chunk 0), F0.1 F1.1 F2.1 F3.1, F4 F5;
  // then pairs F(k = 10..15) / B(k = 0..5); then B(k = 6..15).
  CHECK(render(stage_schedule(Schedule::interleaved_1f1b, 4, 2, 0, 8)) ==
        "F0 F1 F2 F3 F0.1 F1.1 F2.1 F3.1 F4 F5 "
        "F6 B0.1 F7 B1.1 F4.1 B2.1 F5.1 B3.1 F6.1 B0 F7.1 B1 "
        "B2 B3 B4.1 B5.1 B6.1 B7.1 B4 B5 B6 B7");
  // Stage 3: warm-up (4 - 3 - 1)·2 + 4 = 4.
  CHECK(render(stage_schedule(Schedule::interleaved_1f1b, 4, 2, 3, 8)) ==
        "F0 F1 F2 F3 "
        "F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 F4 B0 F5 B1 F6 B2 F7 B3 F4.1 B4.1 F5.1 B5.1 F6.1 B6.1 F7.1 B7.1 "
        "B4 B5 B6 B7");
  // m = pp: the same rule (Megatron-Core since its Nov 2024 schedule table; the 2021-24 special case
  // that made every step warm-up is gone). Stage 0 warms up with min(6 + 4, 8) = 8, stage 3 with 4
  // and then alternates.
  CHECK(warmup_steps(Schedule::interleaved_1f1b, 4, 2, 0, 4) == 8);
  CHECK(warmup_steps(Schedule::interleaved_1f1b, 4, 2, 3, 4) == 4);
  CHECK(render(stage_schedule(Schedule::interleaved_1f1b, 4, 2, 3, 4)) == "F0 F1 F2 F3 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3.1 B3.1 B0 B1 B2 B3");
}

TEST_CASE("interleaved 1F1B with a micro-batch group other than pp runs Megatron-Core's table") {
  // Megatron-Core's ModelParallelConfig docstring: pp = 2, vpp = 2, groups of 3, 5 micro-batches run
  // their forwards as 0 1 2 0 1 2 3 4 3 4 on both ranks (chunk 0 then chunk 1 of each group).
  // Rank 0 warms up with (2 - 0 - 1)·2 + (2 - 1)·3 = 5 forwards; backward k takes table entry k with
  // its chunk reversed.
  CHECK(warmup_steps(Schedule::interleaved_1f1b, 2, 2, 0, 5, false, 3) == 5);
  CHECK(render(stage_schedule(Schedule::interleaved_1f1b, 2, 2, 0, 5, 3)) ==
        "F0 F1 F2 F0.1 F1.1 F2.1 B0.1 F3 B1.1 F4 B2.1 F3.1 B0 F4.1 B1 B2 B3.1 B4.1 B3 B4");
  // Rank 1 warms up with (2 - 1)·3 = 3.
  CHECK(render(stage_schedule(Schedule::interleaved_1f1b, 2, 2, 1, 5, 3)) ==
        "F0 F1 F2 F0.1 B0.1 F1.1 B1.1 F2.1 B2.1 F3 B0 F4 B1 F3.1 B2 F4.1 B3.1 B4.1 B3 B4");
  // The group of pp is the default: the same steps as without one.
  CHECK(stage_schedule(Schedule::interleaved_1f1b, 4, 2, 1, 8, 4) == stage_schedule(Schedule::interleaved_1f1b, 4, 2, 1, 8));
  // A larger group warms up longer and holds more activations: (v - 1)·N more forwards.
  CHECK(chunks_in_flight(stage_schedule(Schedule::interleaved_1f1b, 4, 2, 0, 16, 8)) >
        chunks_in_flight(stage_schedule(Schedule::interleaved_1f1b, 4, 2, 0, 16, 4)));
}

TEST_CASE("ZB-H1: 1F1B's warm-up, then stage x (F, B) with W deferred, (F, B, W), (B, W), the deferred W's") {
  // pp = 4, m = 6. Stage 0 defers nothing: warm-up F0 F1 F2, then F B W triples, then B W pairs.
  CHECK(render(stage_schedule(Schedule::zb_h1, 4, 1, 0, 6)) == "F0 F1 F2 F3 B0 W0 F4 B1 W1 F5 B2 W2 B3 W3 B4 W4 B5 W5");
  // Stage 3 (the last) defers three W's: F B pairs, then F B W with the oldest W, then the rest.
  CHECK(render(stage_schedule(Schedule::zb_h1, 4, 1, 3, 6)) == "F0 B0 F1 B1 F2 B2 F3 B3 W0 F4 B4 W1 F5 B5 W2 W3 W4 W5");
  // Stage 1: warm-up 2, one deferred W.
  CHECK(render(stage_schedule(Schedule::zb_h1, 4, 1, 1, 6)) == "F0 F1 F2 B0 F3 B1 W0 F4 B2 W1 F5 B3 W2 B4 W3 B5 W4 W5");
  // A micro-batch's activations live until its W: pp of them on every stage, 1F1B's stage-0 peak.
  for (int stage = 0; stage < 4; ++stage) {
    CHECK(chunks_in_flight(Schedule::zb_h1, 4, 1, stage, 6) == 4);
    CHECK(chunks_in_flight(Schedule::one_f_one_b, 4, 1, stage, 6) == 4 - stage);
  }
  CHECK(defers_weights(Schedule::zb_h1));
  CHECK_FALSE(defers_weights(Schedule::one_f_one_b));
}
