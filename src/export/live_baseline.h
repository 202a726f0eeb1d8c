// SPDX-License-Identifier: Apache-2.0
// The daemon's live baseline, the download on kBaselineDownloadPath (status_page.h): a pure
// function of a StatusSnapshot (what Collector::status() takes at request time) and the samplers'
// rolling windows, recorded by the one recorder (report/baseline_recorder.h) like every baseline.
// Safe from any thread.
#pragma once

#include <vector>

#include "export/collector.h"
#include "report/baseline_file.h"

namespace jitterd {

// What the posture probe last read of the machine (its typed reading, not its exported metrics),
// or nullptr when it has not run successfully.
const MachineReading* machine_reading(const StatusSnapshot& status);

// A baseline of the current rolling windows: per CPU the window's gaps, its counters and one
// sub-window per window update (`windows`, per sampler as Collector::window_parts gives them), the
// probes' last successful tables, the fingerprint of what the posture probe last read (all but
// the hostname unknown if it has not run). Recorded by report/baseline_recorder.h like every
// baseline: its sub-windows are the daemon's window updates, kSubWindowSeconds as in a file.
Baseline live_baseline(const StatusSnapshot& status, const std::vector<WindowParts>& windows);

}  // namespace jitterd
