#include "workload/microbatch_group.hpp"

#include <algorithm>

namespace parasim::workload {

int smallest_microbatch_group(int micro_batches, int pp) {
  for (int n = pp; n <= micro_batches; ++n) {
    if (micro_batches % n == 0 || micro_batches % n >= pp) return n;
  }
  return 0;
}

int pytorch_interleaved_group(int micro_batches, int pp) {
  if (micro_batches < 1 || pp < 1) return 0;
  const int rounds = std::max(1, micro_batches / pp);
  return micro_batches % rounds == 0 ? micro_batches / rounds : 0;
}

}  // namespace parasim::workload
