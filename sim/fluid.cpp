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

FluidModel::ActivityId FluidModel::start(double amount, std::vector<Usage> usage, double cap, double efficiency) {
  ActivityId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<ActivityId>(activities_.size());
    activities_.emplace_back();
    activity_stamp_.push_back(0);
  }
  Activity a;
  a.remaining = amount;
  a.cap = cap;
  a.efficiency = efficiency;
  a.running = true;
  a.usage = std::move(usage);
  for (const auto& u : a.usage) resources_[u.resource].users.push_back(id);
  const bool shares = !a.usage.empty();
  activities_[id] = std::move(a);
  running_list_.push_back(id);
  ++running_;
  if (shares) {
    mark_dirty(id);
  } else {
    auto& act = activities_[id];
    act.dirty = false;
    act.share = std::isfinite(act.cap) ? act.cap : 0.0;
    act.rate = act.share * act.efficiency;
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
    act.rate = cap * act.efficiency;
    return;
  }
  mark_dirty(a);
}

void FluidModel::set_efficiency(ActivityId a, double efficiency) {
  auto& act = activities_[a];
  if (act.efficiency == efficiency) return;
  act.efficiency = efficiency;
  // Efficiency scales the activity's own progress after the allocation; others are unaffected.
  act.rate = act.share * efficiency;
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

// Weighted progressive filling over the activities connected (through shared resources) to the
// dirty ones. Every unfixed activity's rate rises together; a resource saturates at level
// C_r / W_r (remaining capacity over the weights of its unfixed users); its users are fixed at that
// level, as is an activity that reaches its cap first.
void FluidModel::solve() {
  if (!any_dirty_) return;
  any_dirty_ = false;
  std::vector<ActivityId> component;
  std::vector<ResourceId> touched;
  ++stamp_;
  std::vector<ActivityId> stack = std::move(dirty_);
  dirty_.clear();
  while (!stack.empty()) {
    const ActivityId a = stack.back();
    stack.pop_back();
    if (activity_stamp_[a] == stamp_ || !activities_[a].running) continue;
    activity_stamp_[a] = stamp_;
    component.push_back(a);
    for (const auto& u : activities_[a].usage) {
      if (resource_stamp_[u.resource] == stamp_) continue;
      resource_stamp_[u.resource] = stamp_;
      touched.push_back(u.resource);
      for (ActivityId b : resources_[u.resource].users) {
        if (activity_stamp_[b] != stamp_) stack.push_back(b);
      }
    }
  }
  if (component.size() == 1) {
    // Alone: the tightest of its resources, or its cap.
    auto& act = activities_[component.front()];
    double level = act.cap;
    for (const auto& u : act.usage) level = std::min(level, resources_[u.resource].capacity / u.weight);
    act.share = std::isfinite(level) ? level : 0.0;
    act.rate = act.share * act.efficiency;
    act.dirty = false;
    return;
  }
  // The traversal order is itself deterministic (start order of users), so no sort is needed.
  for (std::size_t i = 0; i < touched.size(); ++i) resource_slot_[touched[i]] = static_cast<std::uint32_t>(i);

  std::vector<double> left(touched.size()), weight(touched.size(), 0.0);
  auto slot = [&](ResourceId r) { return static_cast<std::size_t>(resource_slot_[r]); };
  for (std::size_t i = 0; i < touched.size(); ++i) left[i] = resources_[touched[i]].capacity;
  std::vector<char> fixed(component.size(), 0);
  // Unfixed users per resource: a resource whose users are all fixed limits nothing, whatever
  // rounding leaves in its weight (a residue of 1e-16 over a capacity left at 0 would otherwise set
  // the level to 0 and fix no one, starving the rest).
  std::vector<int> users_left(touched.size(), 0);
  for (ActivityId a : component) {
    for (const auto& u : activities_[a].usage) {
      weight[slot(u.resource)] += u.weight;
      ++users_left[slot(u.resource)];
    }
  }
  std::size_t unfixed = component.size();
  while (unfixed > 0) {
    double level = kUnlimited;
    for (std::size_t i = 0; i < touched.size(); ++i) {
      if (users_left[i] > 0 && weight[i] > 1e-300) level = std::min(level, std::max(0.0, left[i]) / weight[i]);
    }
    for (std::size_t k = 0; k < component.size(); ++k) {
      if (!fixed[k]) level = std::min(level, activities_[component[k]].cap);
    }
    // Fix what saturates at this level: users of resources at it, and activities capped at it.
    std::vector<char> saturated(touched.size(), 0);
    for (std::size_t i = 0; i < touched.size(); ++i) {
      if (users_left[i] > 0 && weight[i] > 1e-300 && std::max(0.0, left[i]) / weight[i] <= level * (1 + 1e-12)) saturated[i] = 1;
    }
    bool progress = false;
    for (std::size_t k = 0; k < component.size(); ++k) {
      if (fixed[k]) continue;
      Activity& act = activities_[component[k]];
      bool fix = act.cap <= level * (1 + 1e-12);
      for (const auto& u : act.usage) fix = fix || saturated[slot(u.resource)];
      if (!fix) continue;
      fixed[k] = 1;
      --unfixed;
      progress = true;
      act.share = std::isfinite(level) ? level : 0.0;
      act.rate = act.share * act.efficiency;
      act.dirty = false;
      for (const auto& u : act.usage) {
        const auto i = slot(u.resource);
        left[i] -= u.weight * level;
        weight[i] -= u.weight;
        if (--users_left[i] == 0) weight[i] = 0;
      }
    }
    if (!progress) break;  // nothing limits the rest: unbounded (no usage, no cap)
  }
  for (std::size_t k = 0; k < component.size(); ++k) {
    if (fixed[k]) continue;
    auto& act = activities_[component[k]];
    act.share = act.rate = 0.0;
    act.dirty = false;
  }
}

double FluidModel::next_completion() {
  solve();
  double best = kUnlimited;
  for (ActivityId a : running_list_) {
    const auto& act = activities_[a];
    if (act.rate > 0) best = std::min(best, act.remaining / act.rate);
  }
  return best;
}

void FluidModel::advance(double dt, std::vector<ActivityId>& done, double tolerance) {
  free_.insert(free_.end(), finished_last_.begin(), finished_last_.end());
  finished_last_.clear();
  solve();
  std::vector<ActivityId> finished;
  for (ActivityId a : running_list_) {
    auto& act = activities_[a];
    act.remaining -= act.rate * dt;
    if (act.remaining <= act.rate * tolerance || act.remaining <= 0) finished.push_back(a);
  }
  if (finished.empty()) return;
  std::sort(finished.begin(), finished.end());
  for (ActivityId a : finished) {
    auto& act = activities_[a];
    act.running = false;
    act.remaining = 0;
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
  running_list_.erase(std::remove_if(running_list_.begin(), running_list_.end(), [&](ActivityId a) { return !activities_[a].running; }),
                      running_list_.end());
}

}  // namespace parasim::sim
