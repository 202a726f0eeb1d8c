// SPDX-License-Identifier: Apache-2.0
#include "measure/pacer.h"

#include "measure/clock_ns.h"

#include <cmath>
#include <ctime>
#include <stdexcept>
#include <string>

namespace jitterd {

namespace {
bool finite_positive(double value) { return std::isfinite(value) && value > 0; }
}  // namespace

PacingSlots::PacingSlots(std::uint64_t start_units, double units, double rate)
    : start(start_units), units_per_second(units), rate_per_second(rate), interval_fixed(0) {
  if (!finite_positive(units) || !finite_positive(rate)) {
    throw std::invalid_argument("pacing: units per second and rate must be finite and > 0, got " +
                                std::to_string(units) + " units/s and " + std::to_string(rate) + "/s");
  }
  // The quotient in long double keeps the interval's own rounding far below 2^-32 units.
  const long double interval = static_cast<long double>(units) / static_cast<long double>(rate);
  if (interval >= 0x1p63L) {
    throw std::invalid_argument("pacing: one slot of " + std::to_string(static_cast<double>(interval)) +
                                " units is longer than 2^63 units (rate " + std::to_string(rate) + "/s)");
  }
  interval_fixed = static_cast<unsigned __int128>(std::roundl(std::ldexp(interval, 32)));
}

double PacingSlots::interval_units() const { return std::ldexp(static_cast<double>(interval_fixed), -32); }

std::uint64_t monotonic_ns() { return static_cast<std::uint64_t>(clock_ns(CLOCK_MONOTONIC)); }

}  // namespace jitterd
