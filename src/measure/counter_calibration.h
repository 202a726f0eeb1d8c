// SPDX-License-Identifier: Apache-2.0
// How many ticks per second the counter runs at, and how that was learned. On aarch64 the
// architecture states it (cntfrq_el0); elsewhere it is measured against CLOCK_MONOTONIC_RAW,
// which NTP never slews, either sleeping across the window or busy-waiting through it; on x86-64
// the CPU may also state it (CPUID 15h/16h), which the clock probe compares with the measured
// value. Blocking (sleeps or spins for `window`): call from a sampler, probe or housekeeping
// thread before sampling starts or while it is paused, never from the hot loop.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "measure/tick.h"

namespace jitterd {

struct CounterFrequency {
  double hertz = 0;
  std::string source;          // "cntfrq_el0", "calibrated_monotonic_raw", "pause_loop_monotonic_raw",
                               // "steady_clock_ns"
  double uncertainty_ppm = 0;  // bound from the bracketing of the clock reads; 0 when stated
};

// One pairing of a clock read with counter reads taken just before and after it.
struct ClockTickPair {
  std::int64_t clock_ns = 0;
  std::uint64_t tick = 0;     // midpoint of the two counter reads
  std::uint64_t bracket = 0;  // ticks between the two counter reads: the pairing's error
};

// Counter ticks to the time of the clock two pairings were taken with, at the rate measured between
// them (`from` the earlier, `to` the later; at `hertz` when they are one pairing), counted from
// `to`; a time before the clock's zero is 0. The one mapping of a sampler's or a loop's
// interruptions onto the time line of the kernel's events (tracepoints, the BPF engine's records).
struct TickToClock {
  ClockTickPair from, to;
  double hertz = 1e9;

  std::uint64_t operator()(std::uint64_t tick) const {
    const double rate = to.tick > from.tick ? static_cast<double>(to.clock_ns - from.clock_ns) /
                                                  static_cast<double>(to.tick - from.tick)
                                            : 1e9 / hertz;
    const std::int64_t ns =
        to.clock_ns + static_cast<std::int64_t>(rate * (static_cast<double>(tick) - static_cast<double>(to.tick)));
    return static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0));
  }
};

ClockTickPair pair_clock_with_ticks(TickMethod method, int attempts = 32);
// The same with another clock: CLOCK_MONOTONIC, the clock BPF programs stamp events with
// (bpf_ktime_get_ns), for matching a sampler's gaps with them.
ClockTickPair pair_other_clock_with_ticks(TickMethod method, clockid_t clock, int attempts = 32);

// Counter ticks per second over `window`, measured against CLOCK_MONOTONIC_RAW.
CounterFrequency calibrate_against_monotonic_raw(TickMethod method, std::chrono::nanoseconds window);

// The same bracketing, but busy-waiting (with a pause/yield hint) on CLOCK_MONOTONIC_RAW until
// `window` has passed instead of sleeping: the CPU stays awake at its running frequency, so a
// counter that is not invariant shows up as disagreement with the sleeping method.
// Source "pause_loop_monotonic_raw".
CounterFrequency calibrate_pause_loop(TickMethod method, std::chrono::nanoseconds window);

// x86-64 CPUID leaf 15h: TSC Hz = crystal Hz (ECX) * EBX / EAX. nullopt when the CPU's maximum
// leaf is below 15h or any of the three is 0 (many CPUs and most VMs state no crystal), and on
// other architectures.
std::optional<double> cpuid_15h_hertz();
// x86-64 CPUID leaf 16h: the processor base frequency (EAX, MHz) in Hz; nullopt if absent or 0.
std::optional<double> cpuid_16h_base_hertz();

// Relative drift of the counter at `hertz` against CLOCK_MONOTONIC_RAW between two pairings
// taken far apart: (ticks / hertz) / elapsed - 1 (positive: the counter runs fast). NaN unless
// `later` is after `earlier` and hertz > 0.
double counter_drift(const ClockTickPair& earlier, const ClockTickPair& later, double hertz);

// The frequency the architecture declares, where it declares one (cntfrq_el0 on aarch64).
std::optional<double> architectural_counter_hertz();

// The frequency to convert ticks with: declared if the architecture declares it, 1 GHz for the
// steady_clock fallback (it counts nanoseconds), else calibrated.
CounterFrequency counter_frequency(TickMethod method, std::chrono::nanoseconds window);

}  // namespace jitterd
