#include "sim/fluid.hpp"

#include <algorithm>
#include <cmath>

namespace parasim::sim {

FluidModel::ResourceId FluidModel::add_resource(double capacity) {
  resources_.push_back({capacity, {}});
  resource_stamp_.push_back(0);
  resource_slot_.push_back(0);
  return static_cast<ResourceId>(resources_.size() - 1);
}

FluidModel::ActivityId FluidModel::start(double amount, std::span<const Usage> usage, double cap, double efficiency) {
  ActivityId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<ActivityId>(activities_.size());
    activities_.emplace_back();
    activity_stamp_.push_back(0);
    queued_at_.push_back(kNotQueued);
  }
  // A reused id keeps its usage vector's storage: a collective's start allocates nothing.
  Activity& act = activities_[id];
  act.cap = cap;
  act.efficiency = efficiency;
  act.share = 0;
  act.rate = 0;
  act.left_then = amount;
  act.since = now_;
  act.running = true;
  act.dirty = true;
  act.usage.assign(usage.begin(), usage.end());
  for (const auto& u : act.usage) resources_[u.resource].users.push_back(id);
  ++running_;
  if (!act.usage.empty()) {
    mark_dirty(id);
    // Until its first solve it moves at rate 0; work of nothing is done at once.
    if (amount <= 0) schedule_finish(id);
  } else {
    act.dirty = false;
    act.share = std::isfinite(act.cap) ? act.cap : 0.0;
    act.rate = act.share * act.efficiency;
    schedule_finish(id);
  }
  return id;
}

void FluidModel::set_cap(ActivityId a, double cap) {
  auto& act = activities_[a];
  if (act.cap == cap) return;
  act.cap = cap;
  // An activity that uses no resource shares nothing: its rate is its cap.
  if (act.usage.empty() && !act.dirty) {
    act.share = cap;
    set_rate(a, cap * act.efficiency);
    return;
  }
  mark_dirty(a);
}

void FluidModel::set_efficiency(ActivityId a, double efficiency) {
  auto& act = activities_[a];
  if (act.efficiency == efficiency) return;
  act.efficiency = efficiency;
  // Efficiency scales the activity's own progress after the allocation; others are unaffected.
  set_rate(a, act.share * efficiency);
}

void FluidModel::set_rate(ActivityId a, double rate) {
  auto& act = activities_[a];
  if (!act.running) {
    act.rate = rate;
    return;
  }
  if (rate == act.rate) return;  // its finish time holds
  act.left_then -= act.rate * (now_ - act.since);
  act.since = now_;
  act.rate = rate;
  schedule_finish(a);
}

// Moves the activity in the finish queue to its finish time at its current rate.
void FluidModel::schedule_finish(ActivityId a) {
  const auto& act = activities_[a];
  const double when = act.left_then <= 0 ? act.since : act.rate > 0 ? act.since + act.left_then / act.rate : kUnlimited;
  if (!std::isfinite(when)) return unqueue(a);
  const std::uint32_t pos = queued_at_[a];
  if (pos == kNotQueued) {
    finishes_.push_back({when, a});
    return sift_up(static_cast<std::uint32_t>(finishes_.size() - 1));
  }
  finishes_[pos].time = when;
  sift_up(pos);
  if (queued_at_[a] == pos) sift_down(pos);
}

void FluidModel::unqueue(ActivityId a) {
  const std::uint32_t pos = queued_at_[a];
  if (pos == kNotQueued) return;
  queued_at_[a] = kNotQueued;
  const Finish last = finishes_.back();
  finishes_.pop_back();
  if (last.activity == a) return;
  place(pos, last);
  sift_up(pos);
  sift_down(queued_at_[last.activity]);
}

void FluidModel::sift_up(std::uint32_t pos) {
  const Finish f = finishes_[pos];
  while (pos > 0) {
    const std::uint32_t parent = (pos - 1) / 2;
    if (!(f < finishes_[parent])) break;
    place(pos, finishes_[parent]);
    pos = parent;
  }
  place(pos, f);
}

void FluidModel::sift_down(std::uint32_t pos) {
  const Finish f = finishes_[pos];
  const auto n = static_cast<std::uint32_t>(finishes_.size());
  for (;;) {
    std::uint32_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && finishes_[child + 1] < finishes_[child]) ++child;
    if (!(finishes_[child] < f)) break;
    place(pos, finishes_[child]);
    pos = child;
  }
  place(pos, f);
}

double FluidModel::remaining(ActivityId a) const {
  if (!running(a)) return 0.0;
  const auto& act = activities_[a];
  return std::max(0.0, act.left_then - act.rate * (now_ - act.since));
}

void FluidModel::mark_dirty(ActivityId a) {
  activities_[a].dirty = true;
  dirty_.push_back(a);
  any_dirty_ = true;
}

double FluidModel::rate(ActivityId a) {
  solve();
  return activities_[a].rate;
}

void FluidModel::solve() {
  if (!any_dirty_) return;
  any_dirty_ = false;
  ++stamp_;
  auto& stack = scratch_.stack;
  stack.swap(dirty_);
  dirty_.clear();
  collect_component(stack);
  fill_component();
}

// The running activities connected to the dirty ones through shared resources, in a deterministic
// order (the users' start order). A resource only one activity uses limits it as a cap does (it
// saturates when that activity reaches capacity / weight): it is folded into the activity's limit
// here, and the filling runs over the shared resources alone. A ring collective's activity uses
// every link of its ring, most of them its own, and is solved again each time a neighbour changes.
void FluidModel::collect_component(std::vector<ActivityId>& stack) {
  auto& c = scratch_;
  c.component.clear();
  c.touched.clear();
  c.limit.clear();
  c.uses.clear();
  c.first_use.clear();
  while (!stack.empty()) {
    const ActivityId a = stack.back();
    stack.pop_back();
    if (activity_stamp_[a] == stamp_ || !activities_[a].running) continue;
    activity_stamp_[a] = stamp_;
    const Activity& act = activities_[a];
    c.component.push_back(a);
    c.first_use.push_back(c.uses.size());
    double limit = act.cap;
    for (const auto& u : act.usage) {
      const Resource& res = resources_[u.resource];
      if (res.users.size() == 1) {
        if (u.weight > 1e-300) limit = std::min(limit, std::max(0.0, res.capacity) / u.weight);
        continue;
      }
      if (resource_stamp_[u.resource] != stamp_) {
        resource_stamp_[u.resource] = stamp_;
        resource_slot_[u.resource] = static_cast<std::uint32_t>(c.touched.size());
        c.touched.push_back(u.resource);
        for (ActivityId b : res.users) {
          if (activity_stamp_[b] != stamp_) stack.push_back(b);
        }
      }
      c.uses.push_back({resource_slot_[u.resource], u.weight});
    }
    c.limit.push_back(limit);
  }
  c.first_use.push_back(c.uses.size());
}

// Weighted progressive filling over the component: every unfixed activity's rate rises together; a
// shared resource saturates at level C_r / W_r (remaining capacity over the weights of its unfixed
// users); its users are fixed at that level, as is an activity that reaches its limit first.
void FluidModel::fill_component() {
  auto& c = scratch_;
  const std::size_t shared = c.touched.size(), n = c.component.size();
  c.left.resize(shared);
  c.weight.assign(shared, 0.0);
  c.users_left.assign(shared, 0);
  c.saturated.resize(shared);
  c.fixed.assign(n, 0);
  for (std::size_t i = 0; i < shared; ++i) c.left[i] = resources_[c.touched[i]].capacity;
  // Unfixed users per resource: a resource whose users are all fixed limits nothing, whatever
  // rounding leaves in its weight (a residue of 1e-16 over a capacity left at 0 would otherwise set
  // the level to 0 and fix no one, starving the rest).
  for (const auto& u : c.uses) {
    c.weight[u.slot] += u.weight;
    ++c.users_left[u.slot];
  }
  std::size_t unfixed = n;
  while (unfixed > 0) {
    double level = kUnlimited;
    for (std::size_t i = 0; i < shared; ++i) {
      if (c.users_left[i] > 0 && c.weight[i] > 1e-300) level = std::min(level, std::max(0.0, c.left[i]) / c.weight[i]);
    }
    for (std::size_t k = 0; k < n; ++k) {
      if (!c.fixed[k]) level = std::min(level, c.limit[k]);
    }
    // Fix what saturates at this level: users of resources at it, and activities limited at it.
    for (std::size_t i = 0; i < shared; ++i) {
      c.saturated[i] = c.users_left[i] > 0 && c.weight[i] > 1e-300 && std::max(0.0, c.left[i]) / c.weight[i] <= level * (1 + 1e-12);
    }
    bool progress = false;
    for (std::size_t k = 0; k < n; ++k) {
      if (c.fixed[k]) continue;
      bool fix = c.limit[k] <= level * (1 + 1e-12);
      for (std::size_t j = c.first_use[k]; !fix && j < c.first_use[k + 1]; ++j) fix = c.saturated[c.uses[j].slot];
      if (!fix) continue;
      c.fixed[k] = 1;
      --unfixed;
      progress = true;
      Activity& act = activities_[c.component[k]];
      act.share = std::isfinite(level) ? level : 0.0;
      act.dirty = false;
      set_rate(c.component[k], act.share * act.efficiency);
      for (std::size_t j = c.first_use[k]; j < c.first_use[k + 1]; ++j) {
        const auto i = c.uses[j].slot;
        c.left[i] -= c.uses[j].weight * level;
        c.weight[i] -= c.uses[j].weight;
        if (--c.users_left[i] == 0) c.weight[i] = 0;
      }
    }
    if (!progress) break;  // nothing limits the rest: unbounded (no usage, no cap)
  }
  for (std::size_t k = 0; k < n; ++k) {
    if (c.fixed[k]) continue;
    auto& act = activities_[c.component[k]];
    act.share = 0.0;
    act.dirty = false;
    set_rate(c.component[k], 0.0);
  }
}

double FluidModel::next_completion() {
  solve();
  return finishes_.empty() ? kUnlimited : std::max(0.0, finishes_.front().time - now_);
}

void FluidModel::advance(double dt, std::vector<ActivityId>& done, double tolerance) {
  free_.insert(free_.end(), finished_last_.begin(), finished_last_.end());
  finished_last_.clear();
  solve();
  now_ += dt;
  // Done: less than `tolerance` seconds of work left at its rate.
  auto& finished = scratch_.finished;
  finished.clear();
  while (!finishes_.empty() && finishes_.front().time <= now_ + tolerance) {
    finished.push_back(finishes_.front().activity);
    unqueue(finishes_.front().activity);
  }
  if (finished.empty()) return;
  std::sort(finished.begin(), finished.end());
  for (ActivityId a : finished) {
    auto& act = activities_[a];
    act.running = false;
    act.left_then = 0;
    --running_;
    for (const auto& u : act.usage) {
      auto& users = resources_[u.resource].users;
      users.erase(std::find(users.begin(), users.end(), a));
      // The remaining users of a freed resource may speed up.
      for (ActivityId b : users) mark_dirty(b);
    }
    act.usage.clear();
    done.push_back(a);
  }
  for (ActivityId a : finished) finished_last_.push_back(a);
}

}  // namespace parasim::sim
