// SPDX-License-Identifier: Apache-2.0
// Noise below the kernel on the watched CPUs and the loops' CPUs: what the watch exports of each
// watched CPU's SMIs and APERF/MPERF (read by the CPU itself through the BPF engine,
// watch/bpf_smi.h) and steal time (/proc/stat), and which of a loop's gaps no kernel record explains were an SMI's or the
// hypervisor's. The sampled CPUs' are the attribution probe's (probes/attribution_probe.h), by the
// same rule (host/attribution.h split_below_kernel). Pure functions but add_watched_below_kernel,
// which reads /proc/stat; called from one probe's thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/posture_parse.h"
#include "host/trace_format.h"
#include "probes/probe.h"
#include "watch/bpf_smi.h"

namespace jitterd {

// The cause of each of a window's unexplained gaps (`gaps`, CLOCK_MONOTONIC): `smi` for a gap
// that overlaps (within `slack_ns`) an interval in which its CPU's SMI count grew, each SMI
// explaining one gap, the longest first; else `hypervisor` where `steal` says the window had
// steal time; else `unexplained`.
std::vector<std::string_view> below_kernel_causes(const std::vector<TimedInterval>& gaps,
                                                  const std::vector<SmiWindow>& windows, bool steal,
                                                  std::uint64_t slack_ns);

// Each CPU's steal (USER_HZ ticks) where /proc/stat has it, from `host`.
std::map<int, std::uint64_t> read_steal_ticks(const HostReader& host);

// What one CPU, sampled or watched, counted below the kernel, where it did.
struct BelowKernelCounts {
  std::optional<std::uint64_t> smis;         // the msr PMU's smi counter
  std::optional<std::uint64_t> steal_ticks;  // /proc/stat steal, USER_HZ ticks
  std::optional<CycleCounts> cycles;         // APERF and MPERF
};

// The series of `counts` for `cpu`: jitterd_smi_total, jitterd_cpu_steal_seconds_total (ticks over
// `user_hz`), jitterd_cpu_actual_cycles_total and jitterd_cpu_reference_cycles_total.
void push_below_kernel_series(const std::string& cpu, const BelowKernelCounts& counts, double user_hz,
                              std::vector<ProbeMetric>& metrics);

// The CPUs' frequencies over their last window (actual over reference cycles), a row per CPU, into
// `result`'s tables; nothing for none. A table, not the state line: the figures change with every
// window, and a state line is logged at each change.
void add_frequency_table(const std::map<int, double>& ratios, ProbeResult& result);

// What the watch's BPF engine read of the watched CPUs below the kernel (empty without it), and
// why a counter the PMU has is not read ("" where it is, or none asked).
struct WatchedBelowKernel {
  std::map<int, SmiReading> smis;
  std::map<int, CycleCounts> cycles;
  std::string smi_why_not, frequency_why_not;
};

// The series of push_below_kernel_series for the watched CPUs that are not sampled, and the state
// line "below_kernel" saying what is counted and why not, with each CPU's frequency since the
// previous call (`previous`: the cycles then, updated).
void add_watched_below_kernel(const ProbeContext& context, const std::vector<int>& watched,
                              const WatchedBelowKernel& read, std::map<int, CycleCounts>& previous,
                              ProbeResult& result);

}  // namespace jitterd
