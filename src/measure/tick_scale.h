// SPDX-License-Identifier: Apache-2.0
// Ticks to nanoseconds by one fixed-point multiply and shift, exact to the rounding of the
// multiplier (< 1 ppb for 25 MHz..10 GHz) and safe for any 64-bit delta thanks to a 128-bit
// product. Immutable after construction: share it freely between threads.
#pragma once

#include <cmath>
#include <cstdint>

namespace jitterd {

class TickScale {
 public:
  TickScale() = default;
  explicit TickScale(double hertz);

  double hertz() const { return hertz_; }
  std::uint64_t to_ns(std::uint64_t ticks) const {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(ticks) * mult_) >> shift_);
  }
  // Nanoseconds as a double, not rounded down to whole ones: a double of the 128-bit product keeps
  // 1e-16 relative precision, even for deltas of days.
  double to_fractional_ns(std::uint64_t ticks) const {
    return std::ldexp(static_cast<double>(static_cast<unsigned __int128>(ticks) * mult_),
                      -static_cast<int>(shift_));
  }
  double to_seconds(std::uint64_t ticks) const { return to_fractional_ns(ticks) * 1e-9; }
  std::uint64_t from_ns(std::uint64_t ns) const;

 private:
  double hertz_ = 1e9;
  std::uint64_t mult_ = 1;
  unsigned shift_ = 0;
};

}  // namespace jitterd
