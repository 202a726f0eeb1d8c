// SPDX-License-Identifier: Apache-2.0
// What the watch counted on one watched CPU over a stretch (between two readings, a baseline's
// sub-window or whole run): the one type of a watched CPU's figures, which the watch probe's
// readings (probes/watch_window.h WatchWindow) and the baseline file (report/baseline_file.h
// BaselineWatched) both build on, so a reading becomes a sub-window without a copy. A watched CPU
// has interruptions counted by cause and no gap histogram, so it is not a CpuFigures
// (measure/cpu_figures.h). interruptions: hard IRQs, IPIs and softirqs; preemptions: the
// application's, by another task; stolen_seconds: the time these took (paired methods: each
// interruption's own time and the preemptions; counts: the application's run-queue wait).
// longest_ns (paired methods): the longest single interruption or preemption, none where it is
// unknown (counts; a stretch without one at or above the outlier threshold). over_threshold: per
// tail threshold, interruptions and preemptions at least that long, none where unknown. Plain
// data; safe from any thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace jitterd {

struct WatchedFigures {
  double seconds = 0;  // 0: no stretch (a reading's first, or the CPU offline)
  std::uint64_t interruptions = 0, preemptions = 0;
  double stolen_seconds = 0;
  std::optional<double> longest_ns;                          // none: unknown
  std::vector<std::optional<std::uint64_t>> over_threshold;  // per threshold asked; none: unknown
};

// Adds the stretch `w` to `total` (a stretch's figures are additive): the counts and times summed,
// the longest the larger known, each tail count of `total` known while both are (one `total`
// lacks stays absent). The one sum of a watched CPU's stretches: a baseline's totals, the glance.
inline void add_stretch(WatchedFigures& total, const WatchedFigures& w) {
  total.seconds += w.seconds;
  total.interruptions += w.interruptions;
  total.preemptions += w.preemptions;
  total.stolen_seconds += w.stolen_seconds;
  if (w.longest_ns) total.longest_ns = std::max(total.longest_ns.value_or(0), *w.longest_ns);
  for (std::size_t t = 0; t < total.over_threshold.size(); ++t)
    total.over_threshold[t] = t < w.over_threshold.size() && w.over_threshold[t] && total.over_threshold[t]
                                  ? std::optional<std::uint64_t>(*total.over_threshold[t] + *w.over_threshold[t])
                                  : std::nullopt;
}

}  // namespace jitterd
