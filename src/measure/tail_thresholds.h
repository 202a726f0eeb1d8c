// SPDX-License-Identifier: Apache-2.0
// The fixed tail thresholds of baselines: gaps (and a watched CPU's interruptions) at or above
// each are counted per sub-window, and compare judges the tail by these rates
// (report/baseline_file.h, docs/before-and-after.md). Here, below report/, so that the probes
// that keep a baseline's history (probes/application_windows.h) count by the same ones.
#pragma once

#include <algorithm>
#include <set>
#include <vector>

namespace jitterd {

inline const std::vector<double> kTailThresholdsNs{10'000, 20'000, 50'000, 100'000, 1'000'000};

// The thresholds a tail is counted above where only a histogram's bucket bounds are known (the
// exported le bounds, ns): for each of kTailThresholdsNs, the first bound at or above it, each once.
inline std::vector<double> tail_bounds(const std::set<double>& bounds_ns) {
  std::vector<double> out;
  for (double threshold : kTailThresholdsNs)
    if (const auto at = bounds_ns.lower_bound(threshold);
        at != bounds_ns.end() && std::find(out.begin(), out.end(), *at) == out.end())
      out.push_back(*at);
  return out;
}

}  // namespace jitterd
