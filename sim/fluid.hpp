#pragma once
// Fluid sharing of capacities among running activities (SimGrid's lmm contract): each activity
// has an amount of work left and uses resources with a weight per unit of its rate; rates are the
// weighted max-min fair allocation (progressive filling), optionally capped per activity and scaled
// by a per-activity efficiency. The model answers "when does the next activity finish?" and
// "advance by dt"; the engine owns the clock. Rates are recomputed only for the activities that
// share resources (transitively) with one whose set or cap changed. Each activity's finish time is
// kept in a queue and moved only when its rate changes: an event costs what changed at it, not
// a pass over every running activity.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <vector>

namespace parasim::sim {

class FluidModel {
 public:
  using ResourceId = std::uint32_t;
  using ActivityId = std::uint32_t;
  struct Usage {
    ResourceId resource;
    double weight;  ///< capacity consumed per unit of the activity's rate
  };
  static constexpr double kUnlimited = std::numeric_limits<double>::infinity();

  ResourceId add_resource(double capacity);
  double capacity(ResourceId r) const { return resources_[r].capacity; }

  /// Starts an activity with `amount` units of work. Without usage its rate is its cap. Ids of
  /// finished activities are reused, but not before the advance() after the one that reported them.
  ActivityId start(double amount, std::span<const Usage> usage, double cap = kUnlimited, double efficiency = 1.0);
  ActivityId start(double amount, std::initializer_list<Usage> usage, double cap = kUnlimited, double efficiency = 1.0) {
    return start(amount, std::span<const Usage>(usage.begin(), usage.size()), cap, efficiency);
  }
  void set_cap(ActivityId a, double cap);
  void set_efficiency(ActivityId a, double efficiency);
  bool running(ActivityId a) const { return a < activities_.size() && activities_[a].running; }
  /// Work left: 0 once finished.
  double remaining(ActivityId a) const;
  /// Current rate (units per second), after sharing, cap and efficiency.
  double rate(ActivityId a);

  /// Seconds until the first running activity finishes; kUnlimited when none runs (or none moves).
  double next_completion();
  /// Moves every running activity on by dt seconds. Activities left with less than `tolerance`
  /// seconds of work at their rate finish; their ids are appended to `done` in ascending order.
  void advance(double dt, std::vector<ActivityId>& done, double tolerance = 1e-12);
  std::size_t running_count() const { return running_; }

 private:
  struct Resource {
    double capacity = 0;
    std::vector<ActivityId> users;  // running activities, in start order
  };
  struct Activity {
    double cap = kUnlimited;
    double efficiency = 1.0;
    double share = 0;  // max-min allocation before efficiency
    double rate = 0;   // after efficiency
    // Work left at time `since` (the last start or rate change): the work left now is
    // left_then - rate·(now - since), so an advance touches no activity whose rate held.
    double left_then = 0;
    double since = 0;
    bool running = false;
    bool dirty = true;
    std::vector<Usage> usage;
  };
  static constexpr std::uint32_t kNotQueued = std::numeric_limits<std::uint32_t>::max();
  void mark_dirty(ActivityId a);
  /// Sets a running activity's rate from now on, settling the work it did at the old one.
  void set_rate(ActivityId a, double rate);
  // The finish queue: a binary min-heap of the running activities with a finite finish time,
  // ordered by (finish, id), each activity knowing its position so a rate change moves it in place.
  // Entries carry their key: a sift reads the heap's own array, not the activities.
  struct Finish {
    double time;
    ActivityId activity;
    bool operator<(const Finish& o) const { return time != o.time ? time < o.time : activity < o.activity; }
  };
  void schedule_finish(ActivityId a);
  void unqueue(ActivityId a);
  void place(std::uint32_t pos, const Finish& f) {
    finishes_[pos] = f;
    queued_at_[f.activity] = pos;
  }
  void sift_up(std::uint32_t pos);
  void sift_down(std::uint32_t pos);
  void solve();
  void collect_component(std::vector<ActivityId>& stack);
  void fill_component();

  std::vector<Resource> resources_;
  std::vector<Activity> activities_;
  double now_ = 0;  // the sum of the advances
  std::vector<Finish> finishes_;
  std::vector<std::uint32_t> queued_at_;  // per activity: its position in finishes_, or kNotQueued
  std::size_t running_ = 0;
  bool any_dirty_ = false;
  std::vector<ActivityId> dirty_;
  std::vector<ActivityId> free_;  // finished activities' ids, reused by start()
  // Ids finished in the last advance(): reusable only from the next one, so the caller can still
  // map the ids it was handed in `done` to its own tasks while it starts new activities.
  std::vector<ActivityId> finished_last_;
  // Visit stamps for solve(): no per-call clearing, so a solve costs what its component costs.
  std::vector<std::uint32_t> activity_stamp_, resource_stamp_;
  std::vector<std::uint32_t> resource_slot_;  // position in the current solve's scratch arrays
  std::uint32_t stamp_ = 0;
  // solve()'s and advance()'s working arrays, kept between calls: a solve runs at every event, and
  // allocating them each time cost as much as the filling itself.
  struct Scratch {
    std::vector<ActivityId> stack, component, finished;
    std::vector<ResourceId> touched;
    std::vector<double> left, weight;
    std::vector<int> users_left;
    std::vector<char> fixed, saturated;
    std::vector<double> limit;  // per component activity: its cap and the resources it alone uses
    struct Use {
      std::uint32_t slot;  // a shared resource's position in left / weight
      double weight;
    };
    std::vector<Use> uses;               // the component's shared uses, activity after activity
    std::vector<std::size_t> first_use;  // where each activity's run of uses starts
  } scratch_;
};

}  // namespace parasim::sim
