// SPDX-License-Identifier: Apache-2.0
// The watch and loops probes' rolling history of typed per-reading figures, as long as the
// samplers' window (sampler.window): what the daemon's live download (export/live_baseline.h)
// records as the watched CPUs and loops of its baseline, one sub-window per reading. The watch's
// windows come from probes/watch_window.h, a loop's from the difference of two readings of its
// segment's counters, as `jitterd baseline` records them. Plain data, shared immutable once
// published (ProbeResult::application_windows).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "loops/loop_window.h"
#include "probes/watch_window.h"

namespace jitterd {

// One loop: what its counters added per step (kLoopWindowStepNs, a second: the sub-windows of a
// baseline), oldest first, and what it says of itself.
struct LoopWindows {
  std::string name;
  int cpu = 0;
  double counter_hertz = 0;
  std::vector<LoopStepCounts> added;
  std::uint64_t floor_ticks = 0, threshold_ticks = 0;
  std::uint64_t max_ticks = 0;  // the exact largest gap over the span `added` covers
  std::string error;            // why it is down ("" while up)
  std::string file;             // its segment's file name
};

struct ApplicationWindows {
  // The watch probe's: its method ("bpf", "tracepoints" or "counts"), outlier threshold, and per reading the
  // windows of every watched CPU, oldest first.
  std::string watch_method;
  std::string watch_reason;  // why that method ("as configured", "auto: the BPF program loaded", why not)
  double outlier_threshold_ns = 0;
  std::vector<std::vector<WatchWindow>> watch;
  // The loops probe's, by loop.
  std::vector<LoopWindows> loops;
};

}  // namespace jitterd
