// SPDX-License-Identifier: Apache-2.0
// A watched CPU's figures over a stretch (between two readings, a baseline's sub-window or run):
// interruptions counted by cause, no gap histogram, so not a CpuFigures. A watch reading
// (probes/watch_window.h WatchWindow) and a baseline's watched CPU (report/baseline_file.h
// BaselineWatched) build on it, so a reading becomes a sub-window without a copy.
// interruptions: hard IRQs, IPIs and softirqs; preemptions: the application's, by another task;
// stolen_seconds: their time (paired methods: each one's own time; counts: the run-queue wait);
// longest_ns (paired methods) and over_threshold (per tail threshold, those at least that long):
// none where unknown. Plain data; any thread.
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
