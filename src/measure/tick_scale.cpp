// SPDX-License-Identifier: Apache-2.0
#include "measure/tick_scale.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace jitterd {

TickScale::TickScale(double hertz) : hertz_(hertz) {
  if (!(hertz >= 1e3 && hertz <= 1e11)) {
    throw std::invalid_argument("counter frequency out of range 1 kHz..100 GHz: " + std::to_string(hertz));
  }
  // Largest shift that keeps the multiplier below 2^63: ticks (< 2^64) times it fits in 128 bits.
  const double ns_per_tick = 1e9 / hertz;
  unsigned shift = 0;
  while (shift < 62 && std::ldexp(ns_per_tick, static_cast<int>(shift + 1)) < 9.2e18) ++shift;
  shift_ = shift;
  mult_ = static_cast<std::uint64_t>(std::llround(std::ldexp(ns_per_tick, static_cast<int>(shift))));
}

std::uint64_t TickScale::from_ns(std::uint64_t ns) const {
  return static_cast<std::uint64_t>(std::llround(static_cast<long double>(ns) * hertz_ / 1e9L));
}

}  // namespace jitterd
