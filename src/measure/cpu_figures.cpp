// SPDX-License-Identifier: Apache-2.0
#include "measure/cpu_figures.h"

#include <algorithm>

namespace jitterd {

CpuFigures summarize(const HistogramSnapshot& snapshot, std::uint64_t max_ticks, const TickScale& scale) {
  CpuFigures f;
  f.samples = snapshot.total();
  if (f.samples == 0) return f;
  f.valid = true;
  f.max_ns = scale.to_fractional_ns(max_ticks);
  // One pass for the four (quantile() would scan the buckets twice for each).
  static constexpr double kQuantiles[] = {0.5, 0.99, 0.999, 0.9999};
  std::uint64_t ticks[4];
  snapshot.quantiles(kQuantiles, ticks, 4);
  // A bucket's upper edge can exceed the true maximum; the maximum is exact, so cap by it.
  auto q = [&](std::uint64_t t) {
    if (max_ticks != 0) t = std::min(t, max_ticks);
    return scale.to_fractional_ns(t);
  };
  f.p50_ns = q(ticks[0]);
  f.p99_ns = q(ticks[1]);
  f.p999_ns = q(ticks[2]);
  f.p9999_ns = q(ticks[3]);
  return f;
}

void set_counted(CpuFigures& figures, std::uint64_t sampled_ticks, std::uint64_t interruptions,
                 std::uint64_t interrupted_ticks, const TickScale& scale) {
  figures.sampled_seconds = scale.to_seconds(sampled_ticks);
  figures.interruptions = interruptions;
  figures.stolen_seconds = scale.to_seconds(interrupted_ticks);
}

void set_limits(CpuFigures& figures, std::uint64_t floor_ticks, std::uint64_t threshold_ticks,
                const TickScale& scale) {
  figures.floor_ns = scale.to_fractional_ns(floor_ticks);
  figures.threshold_ns = scale.to_fractional_ns(threshold_ticks);
}

CpuFigures cpu_figures(const GapCountsTicks& counts, std::uint64_t max_ticks, const TickScale& scale) {
  CpuFigures f = summarize(counts.gaps, max_ticks, scale);
  set_counted(f, counts.sampled_ticks, counts.interruptions, counts.interrupted_ticks, scale);
  return f;
}

}  // namespace jitterd
