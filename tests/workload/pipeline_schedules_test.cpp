// The pipeline schedules of today against their closed forms, on abstract pass times with free
// communication (workload/pipeline_replay.hpp). Two notations meet here:
//   Qi et al. (ZB papers): F forward, B input gradients only, W weight gradients.
//   DeepSeek-V3's report (Table 2): F forward, B the full backward (input and weight gradients),
//     W its weight part, F&B a forward and a backward chunk overlapped.
// PassTimes holds Qi's: times.backward is B_Qi; the DeepSeek formulas are written with
// B_DS = B_Qi + W and, without overlap, F&B = F + B_DS.
#include <doctest/doctest.h>

#include <map>
#include <tuple>

#include "workload/chunk_placement.hpp"
#include "workload/pipeline_replay.hpp"
#include "workload/schedule.hpp"

using namespace parasim::workload;

namespace {

PipelineShape shape_of(Schedule s, int pp, int m, PassTimes t, int vpp = 1) {
  PipelineShape shape;
  shape.schedule = s;
  shape.pp = pp;
  shape.vpp = vpp;
  shape.micro_batches = m;
  shape.times = t;
  return shape;
}

Plan plan_of(const PipelineShape& s) {
  Plan p;
  p.schedule = s.schedule;
  p.pp = s.pp;
  p.vpp = s.vpp;
  p.global_batch = s.micro_batches;
  return p;
}

// Idle time of the busiest stage when every stage starts at 0: makespan − a stage's work.
double makespan_bubble(const PipelineShape& shape, double chunks_a_microbatch_passes_on_a_stage) {
  const auto t = shape.times;
  const auto timing = replay_pipeline(shape, pipeline_schedule(shape));
  return timing.makespan - shape.micro_batches * chunks_a_microbatch_passes_on_a_stage * (t.forward + t.backward + t.weight);
}
// Qi et al.'s measure: the longest stage span from its first pass to its last, less its work.
double span_bubble(const PipelineShape& shape, double chunks) {
  const auto t = shape.times;
  const auto timing = replay_pipeline(shape, pipeline_schedule(shape));
  return timing.longest_span() - shape.micro_batches * chunks * (t.forward + t.backward + t.weight);
}

int peak_in_flight(const PipelineShape& shape) {
  int peak = 0;
  for (const auto& steps : pipeline_schedule(shape)) peak = std::max(peak, chunks_in_flight(steps));
  return peak;
}

// Every (chunk, micro-batch) of a stage runs one forward, one backward and, where the backward
// defers them, one weight step after it; an F&B pair is a forward then a backward.
void check_complete(const PipelineShape& shape) {
  const auto plan = plan_of(shape);
  const auto stages = pipeline_schedule(shape);
  REQUIRE(static_cast<int>(stages.size()) == shape.pp);
  for (int s = 0; s < shape.pp; ++s) {
    std::map<std::tuple<int, int>, int> forwards, backwards, weights, deferred;
    const auto& steps = stages[static_cast<std::size_t>(s)];
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const auto& st = steps[i];
      const auto key = std::make_tuple(st.chunk, st.microbatch);
      if (st.pass == Pass::forward) {
        CHECK(forwards[key]++ == 0);
        if (st.overlaps_next) CHECK((i + 1 < steps.size() && steps[i + 1].pass == Pass::backward));
      } else if (st.pass == Pass::backward) {
        CHECK(forwards[key] == 1);
        CHECK(backwards[key]++ == 0);
        if (st.defers_weight) deferred[key] = 1;
      } else {
        CHECK(deferred[key] == 1);
        CHECK(weights[key]++ == 0);
      }
    }
    // A stage runs a micro-batch through each chunk it holds for that micro-batch.
    int expected = 0;
    const auto chunks = stage_chunks(plan, s);
    for (int mb = 0; mb < shape.micro_batches; ++mb) {
      for (int c : chunks) expected += chunk_stage(plan, c, mb) == s;
    }
    CHECK(static_cast<int>(forwards.size()) == expected);
    CHECK(backwards.size() == forwards.size());
    CHECK(weights.size() == deferred.size());
  }
  CHECK_NOTHROW(replay_pipeline(shape, stages));
}

}  // namespace

TEST_CASE("every schedule runs each pass once, in dependency order, for any stage and micro-batch count it accepts") {
  const PassTimes uneven{1.0, 1.3, 0.8, 0.1};
  for (int pp : {2, 4, 6, 8}) {
    for (int m = 1; m <= 3 * pp; ++m) {
      CAPTURE(pp);
      CAPTURE(m);
      check_complete(shape_of(Schedule::zb_1p, pp, m, uneven));
      check_complete(shape_of(Schedule::zb_2p, pp, m, uneven));
      if (m >= pp) check_complete(shape_of(Schedule::zb_v, pp, m, uneven, 2));
      if (m >= 2 * pp) check_complete(shape_of(Schedule::dualpipe_v, pp, m, uneven, 2));
      if (m >= 2 * pp && m % 2 == 0) check_complete(shape_of(Schedule::dualpipe, pp, m, uneven));
    }
  }
}

TEST_CASE("1F1B (Megatron-LM): bubble (PP-1)(F+B) in DeepSeek's notation, (p-1)(F+B+W) in Qi's") {
  const PassTimes t{1.0, 1.2, 0.7};
  for (int pp : {2, 4, 8}) {
    const double f = t.forward, b_ds = t.backward + t.weight;
    CHECK(makespan_bubble(shape_of(Schedule::one_f_one_b, pp, 4 * pp, t), 1) == doctest::Approx((pp - 1) * (f + b_ds)));
  }
}

TEST_CASE("interleaved 1F1B in groups of 3 (pp 2, v 2, 5 micro-batches): the replay's makespan by hand") {
  // Chunk passes F = 1, B = 2 (weights with the backward), free transfers; the steps of Megatron-Core's
  // docstring example (schedule_test). Rank 0 holds model chunks 0 and 2, rank 1 chunks 1 and 3;
  // (g, k) is chunk g on micro-batch k. Walking both ranks' orders by hand:
  //   rank 0: F(0,0..2) 0-3, F(2,0..2) 3-6, B(2,0) 7-9, F(0,3) 9-10, B(2,1) 10-12, F(0,4) 12-13,
  //           B(2,2) 13-15, F(2,3) 15-16, B(0,0) 16-18, F(2,4) 18-19, B(0,1) 19-21, B(0,2) 22-24,
  //           B(2,3) 25-27, B(2,4) 27-29, B(0,3) 29-31, B(0,4) 31-33;
  //   rank 1: F(1,0..2) 1-4, F(3,0) 4-5, B(3,0) 5-7, F(3,1) 7-8, B(3,1) 8-10, F(3,2) 10-11,
  //           B(3,2) 11-13, F(1,3) 13-14, B(1,0) 14-16, F(1,4) 16-17, B(1,1) 17-19, F(3,3) 19-20,
  //           B(1,2) 20-22, F(3,4) 22-23, B(3,3) 23-25, B(3,4) 25-27, B(1,3) 27-29, B(1,4) 29-31.
  // 33 against a rank's 30 of work: a bubble of 3, where 1F1B on whole stages (F 2, B 4) would idle
  // (pp - 1)(F + B) = 6.
  PipelineShape shape = shape_of(Schedule::interleaved_1f1b, 2, 5, PassTimes{1.0, 2.0, 0.0}, 2);
  shape.microbatch_group = 3;
  const auto timing = replay_pipeline(shape, pipeline_schedule(shape));
  CHECK(timing.makespan == doctest::Approx(33));
  CHECK(timing.first_start[1] == doctest::Approx(1));
  CHECK(timing.last_end[1] == doctest::Approx(31));
  CHECK(makespan_bubble(shape, 2) == doctest::Approx(3));
  CHECK(makespan_bubble(shape_of(Schedule::one_f_one_b, 2, 5, PassTimes{2.0, 4.0, 0.0}), 1) == doctest::Approx(6));
}

TEST_CASE("ZB-1P (Qi et al.'s scheduler, limit pp): bubble (PP-1)(F+B-2W), DeepSeek's notation; ZB-H1's; pp activations") {
  for (const PassTimes t : {PassTimes{1, 1, 1}, PassTimes{1.0, 1.2, 0.7}, PassTimes{1.0, 0.9, 0.5}}) {
    for (int pp : {4, 8}) {
      for (int m : {2 * pp, 4 * pp}) {
        CAPTURE(pp);
        CAPTURE(m);
        const double f = t.forward, b_ds = t.backward + t.weight, w = t.weight;
        const auto zb1p = shape_of(Schedule::zb_1p, pp, m, t);
        CHECK(makespan_bubble(zb1p, 1) == doctest::Approx((pp - 1) * (f + b_ds - 2 * w)));
        CHECK(makespan_bubble(zb1p, 1) == doctest::Approx(makespan_bubble(shape_of(Schedule::zb_h1, pp, m, t), 1)));
        CHECK(peak_in_flight(zb1p) <= pp);
      }
    }
  }
  // Qi et al.'s table (T_F = T_B = T_W): bubble rate (p-1)/3m against 1F1B's (p-1)/m.
  const int pp = 8, m = 24;
  const auto t = PassTimes{1, 1, 1};
  CHECK(span_bubble(shape_of(Schedule::zb_1p, pp, m, t), 1) / (3.0 * m) == doctest::Approx((pp - 1) / (3.0 * m)));
}

TEST_CASE("ZB-2P (limit 2pp): zero bubble when F = B = W and m >= 2p, as Qi et al. report; 2pp activations") {
  const PassTimes t{1, 1, 1};
  for (int pp : {4, 8}) {
    for (int m : {2 * pp, 3 * pp, 8 * pp}) {
      CAPTURE(pp);
      CAPTURE(m);
      const auto zb2p = shape_of(Schedule::zb_2p, pp, m, t);
      // Qi et al. measure each stage from its first pass to its last (their optimizer step is
      // validated afterwards, so iterations run back to back): nothing idles there.
      CHECK(span_bubble(zb2p, 1) == doctest::Approx(0).scale(1));
      // In one iteration that every stage starts together, the last stage waits for the first
      // forward to reach it: (p-1)·T_F, against 1F1B's (p-1)(T_F + T_B + T_W).
      CHECK(makespan_bubble(zb2p, 1) == doctest::Approx((pp - 1) * t.forward));
      CHECK(peak_in_flight(zb2p) <= 2 * pp);
      CHECK(peak_in_flight(zb2p) > pp);
    }
  }
}

TEST_CASE("ZB-V (two chunks a stage in a V): zero bubble when F = B = W and m >= 2p under 1F1B's activation memory") {
  // Each chunk is half a stage: its passes take half as long and its activations are half a
  // stage's; 1F1B's peak of pp stage activations is 2pp of them.
  const PassTimes t{0.5, 0.5, 0.5};
  for (int pp : {4, 8}) {
    for (int m : {2 * pp, 4 * pp}) {
      CAPTURE(pp);
      CAPTURE(m);
      const auto zbv = shape_of(Schedule::zb_v, pp, m, t, 2);
      CHECK(span_bubble(zbv, 2) == doctest::Approx(0).scale(1));
      // The last stage waits for the first half-size forward to cross the pipeline.
      CHECK(makespan_bubble(zbv, 2) == doctest::Approx((pp - 1) * t.forward));
      CHECK(peak_in_flight(zbv) <= 2 * pp);
    }
  }
}

TEST_CASE("DualPipe: bubble (PP/2-1)(F&B+B-3W), two copies of the parameters, PP+1 activations per device") {
  for (int pp : {4, 8, 16}) {
    for (int m : {2 * pp, 4 * pp}) {
      CAPTURE(pp);
      CAPTURE(m);
      const PassTimes t{1, 1, 1};
      const double f = t.forward, b_ds = t.backward + t.weight, w = t.weight, fb = f + b_ds;
      const auto dualpipe = shape_of(Schedule::dualpipe, pp, m, t);
      CHECK(makespan_bubble(dualpipe, 1) == doctest::Approx((pp / 2 - 1) * (fb + b_ds - 3 * w)));
      CHECK(peak_in_flight(dualpipe) == pp + 1);
      // Unequal passes: at most the report's figure, which rounds the F&B steps' fit up.
      const PassTimes u{1.0, 1.2, 0.7};
      const double ub = u.backward + u.weight;
      const double bound = (pp / 2 - 1) * (u.forward + ub + ub - 3 * u.weight);
      const double bubble = makespan_bubble(shape_of(Schedule::dualpipe, pp, m, u), 1);
      CHECK(bubble <= bound + 1e-9);
      CHECK(bubble >= 0.85 * bound);
    }
  }
  Plan p;
  p.schedule = Schedule::dualpipe;
  p.pp = 8;
  p.global_batch = 32;
  // Stage s holds chunk s (micro-batches from stage 0) and chunk 7 - s (from stage 7).
  CHECK(stage_chunks(p, 2) == std::vector<int>{2, 5});
  CHECK(stage_chunks(p, 5) == std::vector<int>{2, 5});
  CHECK(chunk_stage(p, 2, 0) == 2);
  CHECK(chunk_stage(p, 2, 16) == 5);
  CHECK(mirror_stage(p, 2) == 5);
}

TEST_CASE("DualPipe-V: DualPipe's bubble over PP/2 devices, each holding two chunks in a V") {
  for (int devices : {2, 4, 8}) {
    const int chunks = 2 * devices;  // DualPipe's PP
    for (int m : {2 * devices, 4 * devices}) {
      CAPTURE(devices);
      CAPTURE(m);
      const PassTimes t{1, 1, 1};
      const double b_ds = t.backward + t.weight, fb = t.forward + b_ds;
      const auto v = shape_of(Schedule::dualpipe_v, devices, m, t, 2);
      CHECK(makespan_bubble(v, 2) == doctest::Approx((chunks / 2 - 1) * (fb + b_ds - 3 * t.weight)));
      CHECK(peak_in_flight(v) == chunks + 1);
    }
  }
  Plan p;
  p.schedule = Schedule::dualpipe_v;
  p.pp = 4;
  p.vpp = 2;
  CHECK(stage_chunks(p, 0) == std::vector<int>{0, 7});
  CHECK(stage_chunks(p, 3) == std::vector<int>{3, 4});
  CHECK(holds_embedding(p, 0));
  CHECK(holds_head(p, 0));
}

TEST_CASE("with the expert all-to-all overlap, 1F1B's steady forwards and backwards pair up after one more warm-up forward") {
  PipelineShape s = shape_of(Schedule::interleaved_1f1b, 4, 8, {}, 2);
  s.pair_forward_backward = true;
  const auto stages = pipeline_schedule(s);
  // Stage 3: Megatron-LM's warm-up of (4-3-1)·2 + (2-1)·4 = 4 forwards, one more with the overlap.
  int warmup = 0;
  while (stages[3][static_cast<std::size_t>(warmup)].pass == Pass::forward && !stages[3][static_cast<std::size_t>(warmup)].overlaps_next) ++warmup;
  CHECK(warmup == 5);
  int paired = 0;
  for (const auto& st : stages[3]) paired += st.overlaps_next;
  CHECK(paired == 16 - 5);
  // Without pipelining (pp 1): F0, then F(i+1)&B(i), then the last backward (Megatron-LM's
  // combined 1F1B without pipelining).
  PipelineShape one = shape_of(Schedule::one_f_one_b, 1, 4, {});
  one.pair_forward_backward = true;
  const auto steps = pipeline_schedule(one)[0];
  REQUIRE(steps.size() == 8);
  CHECK_FALSE(steps[0].overlaps_next);
  CHECK(steps[1].overlaps_next);
  CHECK(steps[2].pass == Pass::backward);
  CHECK(steps[2].microbatch == 0);
  CHECK(steps[7].pass == Pass::backward);
}
