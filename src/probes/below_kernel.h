// SPDX-License-Identifier: Apache-2.0
// Noise below the kernel on the watched CPUs and the loops' CPUs: what the watch exports of each
// watched CPU's SMIs (read by the CPU itself through the BPF engine, watch/bpf_smi.h) and steal
// time (/proc/stat), and which of a loop's gaps no kernel record explains were an SMI's or the
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

// jitterd_smi_total and jitterd_cpu_steal_seconds_total for the watched CPUs that are not sampled
// (`smis` from the BPF engine, empty without it), and the state line "below_kernel" saying what is
// counted and why not.
void add_watched_below_kernel(const ProbeContext& context, const std::vector<int>& watched,
                              const std::map<int, SmiReading>& smis, std::string_view smi_why_not,
                              ProbeResult& result);

}  // namespace jitterd
