// SPDX-License-Identifier: Apache-2.0
// The gap statistics jitterd reports for a stretch of samples: quantiles from a histogram
// snapshot, capped by the exact maximum. A pure function of plain values; safe from any thread.
#pragma once

#include <cstdint>

#include "measure/histogram.h"
#include "measure/tick_scale.h"

namespace jitterd {

struct WindowSummary {
  bool valid = false;  // false until the window has two snapshots
  double seconds = 0;  // span the summary covers
  std::uint64_t samples = 0;
  double p50 = 0, p99 = 0, p999 = 0, p9999 = 0;  // seconds, upper edge of the bucket, <= max
  double max = 0;                                // seconds, exact
};

// Summary of `snapshot` in seconds: quantiles from the buckets, clamped by the exact max.
WindowSummary summarize(const HistogramSnapshot& snapshot, std::uint64_t max_ticks, const TickScale& scale);

}  // namespace jitterd
