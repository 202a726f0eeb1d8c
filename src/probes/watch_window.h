// SPDX-License-Identifier: Apache-2.0
// One watched CPU's figures between two readings of the watch's engines (the watch probe's,
// probes/watch_probe.h), typed: what a baseline records per sub-window
// (report/baseline_recorder.h), what the watch probe keeps as its history for the daemon's live
// download (probes/application_windows.h) and what its bpf glance table shows per second, all
// from these functions, so each means the same. Per method:
//
// - counts (watch/counts_engine.h): interruptions are the hard IRQs, IPIs and softirqs the kernel
//   counted on the CPU, preemptions the application's involuntary switches there, stolen its
//   run-queue wait. No lengths: the longest and the tail counts are unknown.
// - bpf (watch/bpf_watch.h): interruptions are every interruption paired entry to exit (each
//   source but the preemptions), preemptions the application's by any task, stolen their time
//   (nested once). The longest is exact where one at or above the outlier threshold happened
//   in the window (the outliers carry their lengths) or the all-time longest grew in it; the count
//   at or above a tail threshold is exact from the outliers when the outlier threshold is at or
//   below it and none was lost (the ring full, or drained beyond kMaxOutliersPerReading) in the
//   window, and unknown otherwise, with why.
//
// Pure functions; any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "measure/watched_figures.h"
#include "probes/stolen_series.h"
#include "watch/bpf_watch.h"
#include "watch/counts_engine.h"

namespace jitterd {

// The figures between two readings (seconds 0: no window), of one CPU, with why a count is unknown.
struct WatchWindow : WatchedFigures {
  int cpu = 0;
  std::string tail_unknown;  // "" when every count is known
};

// The sum of a counts reading's map (its interrupts or softirqs by cause).
std::uint64_t total_of(const std::map<std::string, std::uint64_t>& counts);

// The counts method's windows, one per CPU of `now`, against `before` (the previous reading's
// totals; a CPU not there has no window). `thresholds_ns`: the tail thresholds (all unknown).
std::vector<WatchWindow> counts_windows(const WatchReading& now, const std::vector<WatchedCpu>& before,
                                        const std::vector<double>& thresholds_ns);

// The bpf method's windows, one per CPU of `now`, against `before` (the previous BPF reading),
// over `seconds` (the counts reading's window, taken with it). `outlier_threshold_ns`: the
// program's (watch.outlier_threshold).
std::vector<WatchWindow> paired_windows(const PairedReading& now, const PairedReading& before, double seconds,
                                        double outlier_threshold_ns, const std::vector<double>& thresholds_ns);

// What one watched CPU's window stole, by cause (probes/stolen_series.h), from the same
// differences as its WatchWindow's stolen_seconds, so the causes add up to it: the bpf method's
// time per source booked to the source's cause (watch/bpf_watch.h watch_source_cause), the counts
// method's run-queue wait as `preempted` (the only time it measures).
StolenNs paired_stolen_by_cause(const PairedCpuFigures& now, const PairedCpuFigures& before);
StolenNs counts_stolen_by_cause(const WatchedCpu& now, const WatchedCpu& before);

}  // namespace jitterd
