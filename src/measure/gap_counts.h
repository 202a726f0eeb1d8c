// SPDX-License-Identifier: Apache-2.0
// What one CPU's sampler counters hold, or added over a span (a sub-window, a window step, a
// whole run), in the counters' own unit, ticks: the gap histogram, the sampled ticks, the
// interruptions and the ticks they took. The one per-CPU figures type in ticks: the baseline
// recorder (report/baseline_recorder.h) turns it into nanoseconds and seconds. A plain value,
// read and written by housekeeping threads only (never by the sampler loop, whose counters are
// SamplerShared's atomics).
#pragma once

#include <algorithm>
#include <cstdint>

#include "measure/histogram.h"

namespace jitterd {

// What a cumulative counter added from its reading `then` to its reading `now`: 0 where it went
// down (a counter that restarted: a thread gone and its id reused, a CPU back online).
inline std::uint64_t counter_rise(std::uint64_t now, std::uint64_t then) { return now - std::min(now, then); }

struct GapCountsTicks {
  HistogramSnapshot gaps;
  std::uint64_t sampled_ticks = 0, interruptions = 0, interrupted_ticks = 0;

  // What was added between `older` (an earlier reading of the same counters) and this one.
  GapCountsTicks minus(const GapCountsTicks& older) const {
    return {gaps.minus(older.gaps), sampled_ticks - older.sampled_ticks, interruptions - older.interruptions,
            interrupted_ticks - older.interrupted_ticks};
  }
  void add(const GapCountsTicks& other) {
    gaps.add(other.gaps);
    sampled_ticks += other.sampled_ticks;
    interruptions += other.interruptions;
    interrupted_ticks += other.interrupted_ticks;
  }
};

}  // namespace jitterd
