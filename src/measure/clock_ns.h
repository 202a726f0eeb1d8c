// SPDX-License-Identifier: Apache-2.0
// A kernel clock read as nanoseconds: the one conversion of a timespec the measurement code
// uses (CLOCK_MONOTONIC_RAW for calibration, CLOCK_MONOTONIC for sleeps and pacing); and the
// wall clock as Unix seconds for exported timestamps. Safe from
// any thread; a vDSO call, no syscall, for the clocks used here.
#pragma once

#include <time.h>

#include <chrono>
#include <cstdint>

namespace jitterd {

inline std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Now as Unix time in seconds, for the timestamps jitterd exports.
inline double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace jitterd
