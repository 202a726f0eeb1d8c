// SPDX-License-Identifier: Apache-2.0
// "Who took my CPU?" for the watched CPUs, after the latest outliers have scrolled away: per
// watched CPU, the top preempting tasks and the top interruption sources, by count and by time,
// over the rolling window (sampler.window) and since the watch began, each bounded (the top
// kTopRows plus "other", probes/name_tally.h), so the rows add up to the watch's own totals.
//
// Fed by the kernel engines' readings (bpf, tracepoints: watch/kernel_watch.h), as they are:
// - sources: every interruption is counted and timed per source (a vector, a softirq, a device
//   IRQ by number), so their rows are exact;
// - preempters: the engines count every preemption by the preempting task's class, but name the
//   task only in the outliers (a preemption at or above watch.outlier_threshold); a preemption
//   under it, or an outlier lost (the ring full, more than kMaxOutliersPerReading in a reading),
//   is counted in the "unnamed" row.
// The counts method names no preempter (the kernel's counters say how often and how long, not who).
//
// One thread at a time (the watch probe's).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "host/host_reader.h"
#include "probes/name_tally.h"
#include "probes/probe.h"
#include "watch/bpf_watch.h"
#include "watch/counts_engine.h"

namespace jitterd {

// A preempter's name in a tally: its comm and its class (jitterd, kernel_percpu, application,
// stray), which no comm can contain (the kernel's comm ends at its first NUL).
std::string preempter_key(std::string_view comm, std::string_view task_class);
// The comm and class back.
std::pair<std::string, std::string> preempter_of(const std::string& key);

// One watched CPU's or one loop's tallies: over the window (a part per reading) and since start.
struct TopTallies {
  NameTally preempters_since{kTallyNames}, sources_since{kTallyNames};
  RollingTally preempters_window, sources_window;
  explicit TopTallies(std::uint64_t window_ns) : preempters_window(window_ns), sources_window(window_ns) {}
  // One reading's parts, which ended at `now_ns` (monotonic).
  void push(std::uint64_t now_ns, NameTally preempters, NameTally sources);
};

class WatchTop {
 public:
  explicit WatchTop(std::uint64_t window_ns) : window_ns_(window_ns) {}
  // One reading: `now` against `before` (the previous reading of the same engine), the outliers
  // `now` drained, at `now_ns` (monotonic); `counts` names the device IRQs.
  void add(const PairedReading& now, const PairedReading& before, const WatchReading& counts,
           std::uint64_t now_ns);
  const std::map<int, TopTallies>& cpus() const { return cpus_; }
  std::uint64_t window_ns() const { return window_ns_; }

 private:
  std::uint64_t window_ns_;
  std::map<int, TopTallies> cpus_;
};

// A source's name in a sources tally: the engine's ("local_timer", "softirq_NET_RX"), a device
// IRQ's number and name ("irq 36 virtio0-input").
std::string source_key(const PairedOutlier& record);

// A loop's interruption that took `ns`, by the engine's record matched with it (nullptr: none): a
// preemption by the task that took the CPU, anything else by its source, none as `unmatched` (a
// loop's cause for it: smi, hypervisor or unexplained, probes/below_kernel.h).
void tally_matched(const PairedOutlier* record, std::uint64_t ns, NameTally& preempters, NameTally& sources,
                   std::string_view unmatched = "unexplained");

// The tables the watch and the loops show, their rows led by `lead` (the cpu; the loop and cpu),
// over "window" or "since_start"; a preempter's pid shown only while that task runs under its
// name (`host`); `unnamed`: what the row of unnamed preemptions is called.
ProbeTable preempters_table(std::string title, std::vector<std::string> lead_columns);
void add_preempter_rows(ProbeTable& table, const std::vector<Cell>& lead, const char* over, const TopTally& top,
                        const HostReader& host, const std::string& unnamed);
ProbeTable sources_table(std::string title, std::vector<std::string> lead_columns);
void add_source_rows(ProbeTable& table, const std::vector<Cell>& lead, const char* over, const TopTally& top);

// The gauges `seconds` and `preemptions` (names) of a window's top preempters, labelled `lead` and
// rank ("1" to kTopRows by time, "other", "unnamed"), task (the comm, printable) and class.
void add_preempter_series(const std::string& seconds, const std::string& preemptions, const std::string& whose,
                          const ProbeLabels& lead, const TopTally& top, std::vector<ProbeMetric>& out);

// "60 s", "250 ms", "10 us".
std::string duration_words(double ns);

// The tables (top preempters, top sources, each over the window and since start) and the window's
// top preempters as series (jitterd_watch_top_preempter_seconds and _preemptions: rank 1 to
// kTopRows by time, "other" and "unnamed"). `host`: to show a preempter's pid only while that
// task still runs under its name; `outlier_threshold_ns`: what "unnamed" means.
void add_top_result(const WatchTop& top, std::string_view method, const HostReader& host,
                    double outlier_threshold_ns, ProbeResult& result);

// Whether thread `tid` of process `pid` runs now under the name `comm` (/proc/PID/task/TID/comm).
bool task_alive_as(const HostReader& host, std::uint32_t pid, std::uint32_t tid, std::string_view comm);

}  // namespace jitterd
