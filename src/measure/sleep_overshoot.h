// SPDX-License-Identifier: Apache-2.0
// How much longer than asked a relative sleep lasts: timer slack, the tick, wake-up and
// scheduling latency together, as seen by any thread that sleeps to pace itself. Measured with
// CLOCK_MONOTONIC around clock_nanosleep(CLOCK_MONOTONIC, relative); the first sample is
// discarded. Blocks for about samples * requested: call from a probe worker or housekeeping
// thread, never a sampler's hot loop. Safe from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace jitterd {

struct SleepOvershoot {
  std::chrono::nanoseconds requested{0};
  std::size_t samples = 0;
  // Overshoot = actual - requested, nearest-rank order statistics over `samples`.
  std::int64_t median_ns = 0;
  std::int64_t p99_ns = 0;
  std::int64_t max_ns = 0;
  std::int64_t sum_ns = 0;  // of all samples, for a mean
};

// Throws std::invalid_argument for a negative request, std::system_error if the sleep fails
// (a signal only resumes it: the time asleep still counts from the first call).
SleepOvershoot measure_sleep_overshoot(std::chrono::nanoseconds requested, std::size_t samples);

}  // namespace jitterd
