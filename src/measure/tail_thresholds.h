// SPDX-License-Identifier: Apache-2.0
// The fixed tail thresholds of baselines: gaps (and a watched CPU's interruptions) at or above
// each are counted per sub-window, and compare judges the tail by these rates
// (report/baseline_file.h, docs/before-and-after.md). Here, below report/, so that the probes
// that keep a baseline's history (probes/application_windows.h) count by the same ones.
#pragma once

#include <vector>

namespace jitterd {

inline const std::vector<double> kTailThresholdsNs{10'000, 20'000, 50'000, 100'000, 1'000'000};

}  // namespace jitterd
