// How many ticks per second the counter runs at, and how that was learned. On aarch64 the
// architecture states it (cntfrq_el0); elsewhere it is measured against CLOCK_MONOTONIC_RAW,
// which NTP never slews. Blocking (sleeps for `window`): call from a sampler or housekeeping
// thread before sampling starts, never from the hot loop.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "measure/tick.h"

namespace jitterd {

struct CounterFrequency {
  double hertz = 0;
  std::string source;          // "cntfrq_el0", "calibrated_monotonic_raw", "steady_clock_ns"
  double uncertainty_ppm = 0;  // bound from the bracketing of the clock reads; 0 when stated
};

// One pairing of a clock read with counter reads taken just before and after it.
struct ClockTickPair {
  std::int64_t clock_ns = 0;
  std::uint64_t tick = 0;        // midpoint of the two counter reads
  std::uint64_t bracket = 0;     // ticks between the two counter reads: the pairing's error
};

ClockTickPair pair_clock_with_ticks(TickMethod method, int attempts = 32);

// Counter ticks per second over `window`, measured against CLOCK_MONOTONIC_RAW.
CounterFrequency calibrate_against_monotonic_raw(TickMethod method, std::chrono::nanoseconds window);

// The frequency the architecture declares, where it declares one (cntfrq_el0 on aarch64).
std::optional<double> architectural_counter_hertz();

// The frequency to convert ticks with: declared if the architecture declares it, 1 GHz for the
// steady_clock fallback (it counts nanoseconds), else calibrated.
CounterFrequency counter_frequency(TickMethod method, std::chrono::nanoseconds window);

}  // namespace jitterd
