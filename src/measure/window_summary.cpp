// SPDX-License-Identifier: Apache-2.0
#include "measure/window_summary.h"

#include <algorithm>

namespace jitterd {

WindowSummary summarize(const HistogramSnapshot& snapshot, std::uint64_t max_ticks, const TickScale& scale) {
  WindowSummary s;
  s.samples = snapshot.total();
  if (s.samples == 0) return s;
  s.valid = true;
  s.max = scale.to_seconds(max_ticks);
  // One pass for the four (quantile() would scan the buckets twice for each).
  static constexpr double kQuantiles[] = {0.5, 0.99, 0.999, 0.9999};
  std::uint64_t ticks[4];
  snapshot.quantiles(kQuantiles, ticks, 4);
  // A bucket's upper edge can exceed the true maximum; the maximum is exact, so cap by it.
  auto q = [&](std::uint64_t t) {
    if (max_ticks != 0) t = std::min(t, max_ticks);
    return scale.to_seconds(t);
  };
  s.p50 = q(ticks[0]);
  s.p99 = q(ticks[1]);
  s.p999 = q(ticks[2]);
  s.p9999 = q(ticks[3]);
  return s;
}

}  // namespace jitterd
