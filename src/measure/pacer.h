// SPDX-License-Identifier: Apache-2.0
// Rate-limiter accuracy, the kernel of the pacing probe (the "packet rate" study): a sender must
// hit a target rate, and we measure the rate it achieved and how late each send was. Sends are
// scheduled on absolute slots (start + k / rate), never "previous send + interval", so one late
// send does not push every later one back and nothing drifts. The schedule clock is a seam:
// the tick counter for the counter pacer, CLOCK_MONOTONIC ns for the clock_gettime pacer, or a
// script in tests.
//
// PacingSlots is immutable after construction: share it freely. run_pacer and unthrottled_rate
// busy-wait on the calling thread (a probe worker, never a sampler's hot loop); they allocate only
// before their loop.
#pragma once

#include <cstdint>
#include <memory>

#include "measure/histogram.h"

namespace jitterd {

// Slot k is due at start + k / rate seconds, expressed in schedule units.
struct PacingSlots {
  // Throws std::invalid_argument unless both rates are finite and positive and one slot is
  // shorter than 2^63 units.
  PacingSlots(std::uint64_t start, double units_per_second, double rate_per_second);

  // The interval is fixed-point with 32 fractional bits and k times it is a 128-bit product, so
  // due(k) is within one unit of the exact time for k up to 1e9 and beyond: no float error
  // accumulates. Valid for every k whose due time fits in 64 bits.
  std::uint64_t due(std::uint64_t k) const {
    const unsigned __int128 offset = (static_cast<unsigned __int128>(k) * interval_fixed + kHalfUnit) >> 32;
    return start + static_cast<std::uint64_t>(offset);
  }
  double interval_units() const;

  static constexpr unsigned __int128 kHalfUnit = static_cast<unsigned __int128>(1) << 31;

  std::uint64_t start;
  double units_per_second;
  double rate_per_second;
  unsigned __int128 interval_fixed;  // units per slot, times 2^32, rounded to nearest
};

struct PacingResult {
  double target_per_second = 0;
  // (sends - 1) * units_per_second / (last send - due(0)): the rate since the schedule began.
  // At most the target, up to the rounding of a slot to whole units (no send is early); a late
  // start the sender recovers from costs nothing, a late last send lowers it. 0 with fewer than
  // two sends or no time between due(0) and the last send.
  double achieved_per_second = 0;
  double ratio = 0;  // achieved / target
  std::uint64_t sends = 0;
  std::uint64_t max_lateness = 0;  // units, exact
  HistogramSnapshot lateness;      // per send: actual send time - due time, in units
};

// For each of `count` slots: reads now() until the slot is due, then calls send(). The read that
// found the slot due is the actual send time (the last clock read before send()). The wait has
// no pause instruction: pausing would add its own latency to the lateness being measured.
template <typename Now, typename Send>
PacingResult run_pacer(Now&& now, Send&& send, const PacingSlots& slots, std::uint64_t count) {
  // Allocated and zeroed before the loop: record() then only stores into it.
  auto histogram = std::make_unique<GapHistogram>();
  std::uint64_t last_send = 0, max_lateness = 0;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t due = slots.due(k);
    std::uint64_t t = now();
    while (t < due) t = now();
    send();
    const std::uint64_t lateness = t - due;
    histogram->record(lateness);
    if (lateness > max_lateness) max_lateness = lateness;
    last_send = t;
  }
  PacingResult result;
  result.target_per_second = slots.rate_per_second;
  result.sends = count;
  result.max_lateness = max_lateness;
  histogram->snapshot(result.lateness);
  if (count >= 2 && last_send > slots.due(0)) {
    result.achieved_per_second =
        static_cast<double>(count - 1) * slots.units_per_second / static_cast<double>(last_send - slots.due(0));
    result.ratio = result.achieved_per_second / result.target_per_second;
  }
  return result;
}

// Calls send() back to back until `window` units have passed (reading now() after every send);
// returns sends per second: the fastest rate the sender can reach at all, the ceiling any target
// rate must stay under. 0 if no time passed.
template <typename Now, typename Send>
double unthrottled_rate(Now&& now, Send&& send, std::uint64_t window, double units_per_second) {
  const std::uint64_t start = now();
  std::uint64_t sends = 0;
  std::uint64_t t = start;
  do {
    send();
    ++sends;
    t = now();
  } while (t - start < window);
  if (t == start) return 0;
  return static_cast<double>(sends) * units_per_second / static_cast<double>(t - start);
}

// CLOCK_MONOTONIC in ns via clock_gettime (the vDSO): the clock_gettime pacer's now().
std::uint64_t monotonic_ns();

}  // namespace jitterd
