// SPDX-License-Identifier: Apache-2.0
// The perf `msr` PMU (arch/x86/events/msr.c): free-running model-specific registers exposed as
// perf events, among them `smi` (MSR_SMI_COUNT: System Management Interrupts taken by a CPU),
// `aperf` and `mperf` (actual and reference cycles: the frequency a CPU ran at). Read from
// <sysfs>/bus/event_source/devices/msr/ (`type`, and one file per event in events/, "event=0x04"),
// so fixture trees stand for machines without the PMU or with some events only. Most guests have
// `smi` and `tsc` only: absence is data, said once by availability_line(). Pure parsing over text
// and a thin read through HostReader: safe from any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "host/host_reader.h"

namespace jitterd {

// One event of a dynamic PMU as perf_event_open(2) takes it.
struct PmuEvent {
  std::uint32_t type = 0;    // perf_event_attr.type: the PMU's `type` file
  std::uint64_t config = 0;  // perf_event_attr.config
  bool operator==(const PmuEvent&) const = default;
};

// The config of one events/<name> file of a PMU whose format is `event` in config bits 0-63 (the
// msr PMU's "event=0x04"): terms are comma-separated `term=value` with a hexadecimal ("0x") or
// decimal value. nullopt for any other term, a missing or malformed value, or an empty text,
// with the reason in *why when given.
std::optional<std::uint64_t> parse_pmu_event_config(std::string_view text, std::string* why = nullptr);

struct MsrPmu {
  std::optional<PmuEvent> smi, aperf, mperf;
  // Both frequency counters: one without the other measures nothing.
  bool has_frequency() const { return aperf && mperf; }
  // Why an event is absent ("no msr PMU at /sys/bus/event_source/devices/msr", "the msr PMU has
  // no aperf event"), "" where it is present.
  std::string smi_why = "the msr PMU was not read", aperf_why = smi_why, mperf_why = smi_why;
};

// The msr PMU's smi, aperf and mperf events as the sysfs root shows them.
MsrPmu read_msr_pmu(const HostReader& host);

// One line for the log and the probes' notes: what the msr PMU gives and what it does not, e.g.
// "msr PMU: smi counted per cpu; no APERF/MPERF (the msr PMU has no aperf event: most guests hide
// it), so frequency drops are not measured".
std::string msr_pmu_line(const MsrPmu& pmu);

// A CPU's APERF and MPERF counts since they were opened: cycles at the frequency it actually ran
// at and at its base (reference) frequency, both counted only while it runs (not in idle states).
struct CycleCounts {
  std::uint64_t actual = 0, reference = 0;
  bool operator==(const CycleCounts&) const = default;
};

// The frequency a CPU ran at between two readings as a fraction of its base frequency (actual over
// reference cycles: 1 at base, above with turbo, below when throttled or capped); nullopt where the
// reference did not advance (the CPU never ran) or a count went back (reopened counters).
std::optional<double> frequency_ratio(const CycleCounts& before, const CycleCounts& now);

}  // namespace jitterd
