#pragma once
// Layer-wise recompute under a memory budget (Galvatron's layer-wise dynamic programming, over the
// recompute dimension): each layer of a stage keeps its activations, recomputes selectively, or
// recomputes in full; each choice costs time (the recompute) and holds bytes (what is kept, times
// the micro-batches in flight for that layer's chunk). The dynamic program over layers, with the
// bytes used so far as state (discretized into max(`resolution`, 16 per layer) steps, bytes
// rounded up so that a choice that fits the grid fits the budget), finds the fastest choice whose
// bytes fit.
#include <optional>
#include <vector>

namespace parasim::planner {

struct LayerOption {
  double seconds = 0;  ///< time this choice adds to an iteration
  double bytes = 0;    ///< memory it holds at the stage's peak
};

/// Index of the option chosen for each layer, or nullopt when even the smallest choices exceed the
/// budget. Ties go to the lower option index (the options are listed fastest first).
std::optional<std::vector<int>> choose_within_budget(const std::vector<std::vector<LayerOption>>& layers, double budget, int resolution = 512);

}  // namespace parasim::planner
