// SPDX-License-Identifier: Apache-2.0
// Tick arithmetic shared by the measure/ tests that inject gaps of a known length.
#pragma once

#include <chrono>
#include <cstdint>

#include "measure/counter_calibration.h"
#include "measure/tick_scale.h"

namespace jitterd::testing {

// `ns` nanoseconds in ticks of `method`, at the frequency measured over 10 ms.
inline std::uint64_t ticks_for(TickMethod method, std::uint64_t ns) {
  return TickScale(counter_frequency(method, std::chrono::milliseconds(10)).hertz).from_ns(ns);
}

}  // namespace jitterd::testing
