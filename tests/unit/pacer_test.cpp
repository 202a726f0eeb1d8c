// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "measure/counter_calibration.h"
#include "measure/pacer.h"

using namespace jitterd;

namespace {

// A schedule clock that returns the scripted values in order, one per read.
struct ScriptedClock {
  std::vector<std::uint64_t> values;
  std::size_t reads = 0;
  std::uint64_t operator()() {
    REQUIRE(reads < values.size());
    return values[reads++];
  }
};

long double exact_due(std::uint64_t start, double units_per_second, double rate, std::uint64_t k) {
  return static_cast<long double>(start) +
         static_cast<long double>(k) * static_cast<long double>(units_per_second) / static_cast<long double>(rate);
}

}  // namespace

TEST_CASE("due(k) stays within one unit of start + k / rate up to k = 1e9", "[pacer]") {
  struct Case {
    double units_per_second, rate;
  };
  // A fractional counter rate at 1M/s, the ns clock at rates that do not divide it, a slow rate.
  const Case cases[] = {{2445427984.7, 1e6}, {1e9, 3.0}, {1e9, 7e3}, {3.1e9, 100.0}, {2445427984.7, 0.3}};
  const std::uint64_t start = 987'654'321'000ull;
  for (const Case& c : cases) {
    const PacingSlots slots(start, c.units_per_second, c.rate);
    for (std::uint64_t k : {0ull, 1ull, 2ull, 3ull, 7ull, 1000ull, 999'999ull, 1'000'000ull, 123'456'789ull,
                            999'999'999ull, 1'000'000'000ull}) {
      const long double exact = exact_due(start, c.units_per_second, c.rate, k);
      INFO("units/s=" << c.units_per_second << " rate=" << c.rate << " k=" << k);
      REQUIRE(std::fabs(static_cast<double>(static_cast<long double>(slots.due(k)) - exact)) < 1.0);
    }
    for (std::uint64_t k = 0; k <= 1'000'000'000ull; k += 9'999'991ull) {
      const long double exact = exact_due(start, c.units_per_second, c.rate, k);
      REQUIRE(std::fabs(static_cast<double>(static_cast<long double>(slots.due(k)) - exact)) < 1.0);
    }
  }
}

TEST_CASE("an integral interval gives exact slots", "[pacer]") {
  const PacingSlots slots(5, 1e9, 1000);
  CHECK(slots.due(0) == 5);
  CHECK(slots.due(1) == 1'000'005);
  CHECK(slots.due(1'000'000'000ull) == 1'000'000'000'000'005ull);
  CHECK(slots.interval_units() == 1e6);
}

TEST_CASE("slots reject rates that are not finite and positive", "[pacer]") {
  CHECK_THROWS_AS(PacingSlots(0, 1e9, 0), std::invalid_argument);
  CHECK_THROWS_AS(PacingSlots(0, 1e9, -5), std::invalid_argument);
  CHECK_THROWS_AS(PacingSlots(0, 0, 100), std::invalid_argument);
  CHECK_THROWS_AS(PacingSlots(0, 1e9, std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(PacingSlots(0, 1e300, 1e-300), std::invalid_argument);
}

TEST_CASE("run_pacer waits for each slot, sends at once and records the lateness", "[pacer]") {
  // Slots of 100 units from 1000: due 1000, 1100, 1200, 1300.
  const PacingSlots slots(1000, 1e9, 1e7);
  ScriptedClock clock{{990, 1000, 1105, 1150, 1199, 1230, 1310}};
  std::vector<std::size_t> reads_at_send;
  const PacingResult r = run_pacer(
      clock, [&] { reads_at_send.push_back(clock.reads); }, slots, 4);
  // Each send follows the read that found its slot due, with no read in between.
  CHECK(reads_at_send == std::vector<std::size_t>{2, 3, 6, 7});
  CHECK(clock.reads == 7);
  CHECK(r.sends == 4);
  CHECK(r.max_lateness == 30);
  // Values below 32 have a bucket each: 0, 5, 30, 10.
  CHECK(r.lateness.total() == 4);
  CHECK(r.lateness.counts[histogram_bucket_index(0)] == 1);
  CHECK(r.lateness.counts[histogram_bucket_index(5)] == 1);
  CHECK(r.lateness.counts[histogram_bucket_index(10)] == 1);
  CHECK(r.lateness.counts[histogram_bucket_index(30)] == 1);
  CHECK(r.target_per_second == 1e7);
  // Three intervals from due(0) = 1000 to the last send at 1310.
  CHECK(r.achieved_per_second == Approx(3e9 / 310.0).epsilon(1e-12));
  CHECK(r.ratio == Approx(300.0 / 310.0).epsilon(1e-12));
}

TEST_CASE("a sender late by a constant holds the rate: lateness is the constant", "[pacer]") {
  const PacingSlots slots(0, 1e9, 1e7);
  std::vector<std::uint64_t> times;
  for (std::uint64_t k = 0; k < 50; ++k) times.push_back(slots.due(k) + 7);
  ScriptedClock clock{times};
  const PacingResult r = run_pacer(
      clock, [] {}, slots, 50);
  CHECK(r.sends == 50);
  CHECK(r.max_lateness == 7);
  CHECK(r.lateness.counts[histogram_bucket_index(7)] == 50);
  CHECK(r.lateness.quantile(0.5) == 7);
  // The rate counts from due(0), so only the last send's 7 units stretch 49 slots of 100.
  CHECK(r.achieved_per_second == Approx(49e9 / 4907.0).epsilon(1e-12));
  CHECK(r.ratio == Approx(4900.0 / 4907.0).epsilon(1e-12));
  CHECK(r.ratio == Approx(1.0).epsilon(2e-3));
}

TEST_CASE("a late start the sender recovers from costs no rate", "[pacer]") {
  // Slots 1000, 1100, 1200, 1300; the first send is 60 late, the rest on time.
  const PacingSlots slots(1000, 1e9, 1e7);
  ScriptedClock clock{{1060, 1100, 1200, 1300}};
  const PacingResult r = run_pacer(
      clock, [] {}, slots, 4);
  CHECK(r.max_lateness == 60);
  CHECK(r.achieved_per_second == 1e7);
  CHECK(r.ratio == 1.0);
}

TEST_CASE("a sender slower than the slots falls behind: ratio below 1, lateness grows", "[pacer]") {
  // Each send takes 150 units; slots are 100 apart, so send k happens at 150 k, late by 50 k.
  const PacingSlots slots(0, 1e9, 1e7);
  std::uint64_t clock = 0;
  const PacingResult r = run_pacer([&] { return clock; }, [&] { clock += 150; }, slots, 11);
  CHECK(r.sends == 11);
  CHECK(r.max_lateness == 500);
  CHECK(r.lateness.total() == 11);
  CHECK(r.achieved_per_second == Approx(1e9 / 150.0).epsilon(1e-12));
  CHECK(r.ratio == Approx(100.0 / 150.0).epsilon(1e-12));
}

TEST_CASE("fewer than two sends give no rate", "[pacer]") {
  const PacingSlots slots(0, 1e9, 1e7);
  ScriptedClock clock{{0}};
  const PacingResult one = run_pacer(
      clock, [] {}, slots, 1);
  CHECK(one.sends == 1);
  CHECK(one.achieved_per_second == 0);
  CHECK(one.ratio == 0);
  ScriptedClock none{{}};
  const PacingResult zero = run_pacer(
      none, [] {}, slots, 0);
  CHECK(zero.sends == 0);
  CHECK(zero.lateness.empty());
}

TEST_CASE("unthrottled_rate counts back-to-back sends over the window", "[pacer]") {
  SECTION("the window ends exactly on a read") {
    std::uint64_t clock = 0;
    std::uint64_t sends = 0;
    const double rate = unthrottled_rate([&] { return clock; },
                                         [&] {
                                           ++sends;
                                           clock += 10;
                                         },
                                         100, 1e9);
    CHECK(sends == 10);
    CHECK(rate == Approx(10 * 1e9 / 100).epsilon(1e-12));
  }
  SECTION("the last send overruns the window and its time counts") {
    ScriptedClock clock{{0, 30, 60, 90, 120}};
    std::uint64_t sends = 0;
    const double rate = unthrottled_rate(
        clock, [&] { ++sends; }, 100, 1e9);
    CHECK(sends == 4);
    CHECK(clock.reads == 5);
    CHECK(rate == Approx(4 * 1e9 / 120).epsilon(1e-12));
  }
}

TEST_CASE("real pacers on the counter and on CLOCK_MONOTONIC send every slot", "[pacer]") {
  const TickMethod method = default_tick_method();
  const CounterFrequency f = counter_frequency(method, std::chrono::milliseconds(20));
  std::uint64_t sent = 0;
  dispatch_tick_method(method, [&]<TickMethod M>() {
    const PacingSlots slots(read_ticks<M>(), f.hertz, 10'000);
    const PacingResult r = run_pacer([] { return read_ticks<M>(); }, [&] { ++sent; }, slots, 100);
    CHECK(r.sends == 100);
    CHECK(r.lateness.total() == 100);
    CHECK(r.ratio > 0);
  });
  CHECK(sent == 100);
  const PacingSlots slots(monotonic_ns(), 1e9, 10'000);
  const PacingResult r = run_pacer(
      monotonic_ns, [] {}, slots, 100);
  CHECK(r.sends == 100);
  CHECK(r.ratio > 0);
  // The histogram's top bucket holds the exact max.
  CHECK(r.lateness.quantile(1.0) >= r.max_lateness);
  const std::uint64_t a = monotonic_ns();
  CHECK(monotonic_ns() >= a);
  CHECK(unthrottled_rate(
            monotonic_ns, [] {}, 1'000'000, 1e9) > 0);
}
