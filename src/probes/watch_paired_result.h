// SPDX-License-Identifier: Apache-2.0
// What the watch probe exports from its BPF engine (watch/bpf_watch.h), beside the counts: per
// watched CPU and cause, the interruptions the kernel paired entry to exit and the time each
// took (nested time once), the preemptions of the application by the class of the task that took
// the CPU, a histogram of single interruptions, the longest per cause, timer:tick_stop failures
// by dependency, and the latest outliers with who caused them. Plain data in, metrics and tables
// out; one thread at a time (the watch probe's).
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "probes/probe.h"
#include "watch/bpf_watch.h"
#include "watch/counts_engine.h"
#include "watch/kernel_watch.h"

namespace jitterd {

// IPI senders exported by name per watched CPU; the others are summed as sender="other".
inline constexpr std::size_t kMaxIpiSendersPerCpu = 16;

// The outliers the status page and `report watch` list, newest last.
inline constexpr std::size_t kRecentOutliers = 32;

// An outlier as people read it: which cause, which source, and who.
struct NamedOutlier {
  PairedOutlier outlier;
  std::string cause;       // attribution's vocabulary, "preempted" for a task
  std::string task_class;  // a preemption's: jitterd, kernel_percpu, application, stray
  std::string who;         // "irq 36 virtio0-input", "noise_injector[1234] (stray)", "local_timer"
};

NamedOutlier name_outlier(const PairedOutlier& outlier);

// What the probe keeps between readings for the BPF part of its result.
struct WatchPairedHistory {
  std::deque<NamedOutlier> recent;                                // at most kRecentOutliers
  std::map<std::pair<int, std::string>, std::uint64_t> outliers;  // (cpu, cause) -> since start
  std::uint64_t outliers_dropped = 0;  // drained beyond kMaxOutliersPerReading in one reading
  void add(const PairedReading& reading);
};

// Adds the kernel engine's metrics and tables (bpf or tracepoints, named in the tables' titles).
// `counts`: the counts reading of the same window (for the device IRQs' names); `before`: the
// previous reading, for the last window's rates (none for the first); `engine`: its method, the
// optional tracepoints this kernel lacks and the application's threads it could not track.
void add_paired_result(const PairedReading& now, const PairedReading* before, const WatchReading& counts,
                       const WatchPairedHistory& history, const KernelWatch& engine, ProbeResult& result);

// The tracepoints method's own cost: per watched CPU, the irq_work interrupts perf's wakeups took.
void add_tracer_wakeups(const std::map<int, std::uint64_t>& wakeups, ProbeResult& result);

// The senders of IPIs to one CPU, the kMaxIpiSendersPerCpu busiest by name (ties by name) and the
// rest summed as "other" with `other` (the IPIs of names the loader did not keep), busiest first.
std::vector<std::pair<std::string, std::uint64_t>> top_ipi_senders(
    const std::map<std::string, std::uint64_t>& senders, std::uint64_t other = 0);

}  // namespace jitterd
