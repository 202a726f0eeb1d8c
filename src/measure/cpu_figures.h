// SPDX-License-Identifier: Apache-2.0
// The one per-CPU figures type: what one CPU's gaps came to over a span (a rolling window, a
// baseline's sub-window or whole run, a `jitterd report` run), every field named with its unit:
// gaps in nanoseconds, time in seconds, the units the baseline file has always held (its keys are
// these names), so a file reads and writes without a conversion. The samplers' counters are in
// ticks (GapCountsTicks, SamplerShared); they become figures here, by summarize and
// cpu_figures, and the pages convert to seconds only where their format needs seconds
// (ns_to_seconds). Pure functions of plain values; safe from any thread.
#pragma once

#include <cstdint>

#include "measure/gap_counts.h"
#include "measure/histogram.h"
#include "measure/tick_scale.h"

namespace jitterd {

struct CpuFigures {
  bool valid = false;       // false: no figures yet (a rolling window before its second snapshot)
  double span_seconds = 0;  // wall time the figures cover (a rolling window's; 0 where not kept)
  std::uint64_t samples = 0;
  double sampled_seconds = 0;                                // time sampled within the span
  double p50_ns = 0, p99_ns = 0, p999_ns = 0, p9999_ns = 0;  // upper edge of the bucket, <= max_ns
  double max_ns = 0;                                         // exact
  std::uint64_t interruptions = 0;
  double stolen_seconds = 0;              // time the interruptions took
  double floor_ns = 0, threshold_ns = 0;  // the sampler's loop floor and interruption threshold
};

// Nanoseconds as seconds, at the output edge: for a value from TickScale::to_fractional_ns, the same
// double TickScale::to_seconds gives.
inline double ns_to_seconds(double ns) { return ns * 1e-9; }

// The gap figures of `snapshot`: samples, quantiles from the buckets clamped by the exact max,
// and the max; valid when it holds a gap.
CpuFigures summarize(const HistogramSnapshot& snapshot, std::uint64_t max_ticks, const TickScale& scale);

// The counters' figures: sampled time, interruptions and the time they took.
void set_counted(CpuFigures& figures, std::uint64_t sampled_ticks, std::uint64_t interruptions,
                 std::uint64_t interrupted_ticks, const TickScale& scale);
// The sampler's loop floor and interruption threshold.
void set_limits(CpuFigures& figures, std::uint64_t floor_ticks, std::uint64_t threshold_ticks,
                const TickScale& scale);

// Every figure of `counts` (what a CPU's counters added over a span) whose exact max is `max_ticks`.
CpuFigures cpu_figures(const GapCountsTicks& counts, std::uint64_t max_ticks, const TickScale& scale);

}  // namespace jitterd
