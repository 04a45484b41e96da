#include "sim/fill_search.hpp"

#include <map>

namespace parasim::sim {
namespace {

using Choice = std::vector<int>;  // an index into each field's values

class JointSearch {
 public:
  JointSearch(const workload::Plan& given, const std::vector<FillField>& fields, const FillEvaluator& evaluator)
      : given_(given), fields_(fields), eval_(evaluator) {}

  FillOutcome run() {
    const Choice first(fields_.size(), 0);
    const auto start = probe(first, "given").fits ? std::optional<Choice>(first) : first_fit();
    if (!start) return least_memory();
    best_ = *start;
    simulate(best_, start == first ? "" : "start", true);
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t f = 0; f < fields_.size(); ++f) moved = move_field(f) || moved;
    }
    return outcome(best_);
  }

 private:
  workload::Plan plan_of(const Choice& c) const {
    workload::Plan p = given_;
    for (std::size_t f = 0; f < fields_.size(); ++f) fields_[f].values[static_cast<std::size_t>(c[f])](p);
    if (eval_.complete) eval_.complete(p);
    return p;
  }

  // The memory model's verdict, once per combination; the first look at a combination is a step.
  const FillProbe& probe(const Choice& c, const std::string& field) {
    auto it = probes_.find(c);
    if (it != probes_.end()) return it->second;
    it = probes_.emplace(c, eval_.probe(plan_of(c))).first;
    if (it->second.valid) {
      steps_.push_back({field, plan_of(c), it->second, std::nullopt, false});
      step_of_[c] = steps_.size() - 1;
    }
    return it->second;
  }

  const FillRun& simulate(const Choice& c, const std::string& field, bool kept) {
    auto it = runs_.find(c);
    if (it == runs_.end()) {
      it = runs_.emplace(c, eval_.run(plan_of(c))).first;
      auto& step = steps_[step_of_.at(c)];
      step.run = it->second;
      step.kept = kept;
      if (!field.empty()) step.field = field;
    }
    return it->second;
  }

  // Every combination in order, the first field the most significant (less recompute first where
  // the caller lists recompute first), until one fits.
  std::optional<Choice> first_fit() {
    Choice c(fields_.size(), 0);
    do {
      if (probe(c, "start").fits) return c;
    } while (next(c));
    return std::nullopt;
  }

  bool next(Choice& c) const {
    for (std::size_t f = fields_.size(); f-- > 0;) {
      if (++c[f] < static_cast<int>(fields_[f].values.size())) return true;
      c[f] = 0;
    }
    return false;
  }

  // Nothing fits: the valid combination needing the least memory, simulated, reported out of memory.
  FillOutcome least_memory() {
    std::optional<Choice> least;
    for (const auto& [c, p] : probes_) {
      if (p.valid && (!least || p.peak < probes_.at(*least).peak)) least = c;
    }
    if (!least) return FillOutcome{given_, {}, {}, steps_};
    simulate(*least, "least memory", true);
    return outcome(*least);
  }

  // Field f at each of its other values, the rest as in the best plan: the fastest that fits is kept.
  bool move_field(std::size_t f) {
    bool moved = false;
    const Choice from = best_;
    for (int v = 0; v < static_cast<int>(fields_[f].values.size()); ++v) {
      if (v == from[f]) continue;
      Choice c = from;
      c[f] = v;
      if (!probe(c, fields_[f].name).fits) continue;
      const bool faster = simulate(c, fields_[f].name, false).time < runs_.at(best_).time;
      if (faster) {
        best_ = c;
        steps_[step_of_.at(c)].kept = true;
        moved = true;
      }
    }
    return moved;
  }

  FillOutcome outcome(const Choice& c) const { return FillOutcome{plan_of(c), probes_.at(c), runs_.at(c), steps_}; }

  const workload::Plan& given_;
  const std::vector<FillField>& fields_;
  const FillEvaluator& eval_;
  std::map<Choice, FillProbe> probes_;
  std::map<Choice, FillRun> runs_;
  std::map<Choice, std::size_t> step_of_;
  std::vector<FillStep> steps_;
  Choice best_;
};

}  // namespace

FillOutcome joint_fill_search(const workload::Plan& given, const std::vector<FillField>& fields, const FillEvaluator& evaluator) {
  return JointSearch(given, fields, evaluator).run();
}

}  // namespace parasim::sim
