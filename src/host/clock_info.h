// SPDX-License-Identifier: Apache-2.0
// What the kernel says about clocks: the clocksource it keeps time with (a KVM guest on
// kvm-clock instead of tsc is the classic regression), and from /proc/cpuinfo the CPU flags that
// say whether the counter can be trusted (constant_tsc, nonstop_tsc, tsc_known_freq; aarch64's
// "Features") and the frequency each CPU reports. The clock probe checks its calibration against
// these and the posture report shows them. Pure parse plus a thin read through HostReader, so
// tests use fixture trees; the results are plain values, safe to share once built.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/host_reader.h"

namespace jitterd {

struct ClocksourceInfo {
  std::string current;                 // e.g. "tsc", "kvm-clock", "arch_sys_counter"
  std::vector<std::string> available;  // in the kernel's order
};

// Reads devices/system/clocksource/clocksource0/{current_clocksource,available_clocksource}.
// std::nullopt, with a line in `problems` naming the path, when the current clocksource is
// missing or empty; a missing available list is a problem line and an empty list. `problems`
// may be null.
std::optional<ClocksourceInfo> read_clocksource(const HostReader& host, std::vector<std::string>* problems);

struct CpuinfoClock {
  std::set<std::string> flags;              // first processor's x86 "flags" or aarch64 "Features"
  std::vector<std::pair<int, double>> mhz;  // (cpu, its "cpu MHz") for each processor giving one
  std::string model_name;                   // the first "model name"; empty if none (aarch64)
  bool x86_flags = false;                   // the flags came from an x86 "flags" line
};

// Whether the CPU says it runs under a hypervisor: "yes" or "no" from the x86 flag "hypervisor"
// (set by every mainstream hypervisor: KVM, Xen HVM, VMware, Hyper-V), "" when it cannot say
// (no x86 flags line: aarch64 has no such flag).
std::string hypervisor_flag(const CpuinfoClock& cpuinfo);

// Parses /proc/cpuinfo text. Tolerant: missing fields stay empty, unparsable "cpu MHz" values
// and lines without a colon are skipped.
CpuinfoClock parse_cpuinfo_clock(std::string_view cpuinfo_text);

// Reads <procfs>/cpuinfo; std::nullopt, with a line in `problems` naming the path, when it is
// missing. `problems` may be null.
std::optional<CpuinfoClock> read_cpuinfo_clock(const HostReader& host, std::vector<std::string>* problems);

// Whether the first processor lists `flag`, e.g. "tsc_known_freq", "constant_tsc", "nonstop_tsc".
bool has_flag(const CpuinfoClock& cpuinfo, std::string_view flag);

}  // namespace jitterd
