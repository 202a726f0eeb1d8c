// SPDX-License-Identifier: Apache-2.0
// The upper bounds, in seconds, of every exported gap histogram (the samplers' and the loop
// probes'): 10 ns to 100 ms in 1-2.5-5 steps, so a loop's histogram and a sampled CPU's line up
// bucket for bucket. Safe from any thread.
#pragma once

#include <vector>

namespace jitterd {

inline const std::vector<double>& gap_bounds_seconds() {
  static const std::vector<double> bounds = {1e-8,   2.5e-8, 5e-8,   1e-7,   2.5e-7, 5e-7,   1e-6, 2.5e-6,
                                             5e-6,   1e-5,   2.5e-5, 5e-5,   1e-4,   2.5e-4, 5e-4, 1e-3,
                                             2.5e-3, 5e-3,   1e-2,   2.5e-2, 5e-2,   1e-1};
  return bounds;
}

}  // namespace jitterd
