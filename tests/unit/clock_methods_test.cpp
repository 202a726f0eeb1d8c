// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "measure/counter_calibration.h"
#include "measure/sleep_overshoot.h"

using namespace jitterd;

TEST_CASE("busy-waiting and sleeping calibrations agree within 1000 ppm", "[clock_methods]") {
  const TickMethod method = default_tick_method();
  const CounterFrequency sleeping = calibrate_against_monotonic_raw(method, std::chrono::milliseconds(100));
  const CounterFrequency spinning = calibrate_pause_loop(method, std::chrono::milliseconds(100));
  CHECK(sleeping.source == "calibrated_monotonic_raw");
  CHECK(spinning.source == "pause_loop_monotonic_raw");
  REQUIRE(sleeping.hertz > 0);
  REQUIRE(spinning.hertz > 0);
  CHECK(spinning.uncertainty_ppm > 0);
  CHECK(std::fabs(spinning.hertz / sleeping.hertz - 1) < 1e-3);
}

TEST_CASE("counter_drift of constructed pairings", "[clock_methods]") {
  SECTION("on time") { CHECK(counter_drift({0, 1000, 0}, {1'000'000'000, 1'000'001'000, 0}, 1e9) == 0.0); }
  SECTION("1 ppm fast") {
    CHECK(counter_drift({0, 1000, 0}, {1'000'000'000, 1'000'002'000, 0}, 1e9) == Approx(1e-6).epsilon(1e-9));
  }
  SECTION("250 ppm slow at 2.5 GHz over 2 s") {
    CHECK(counter_drift({5, 0, 0}, {2'000'000'005, 4'998'750'000, 0}, 2.5e9) == Approx(-2.5e-4).epsilon(1e-9));
  }
  SECTION("3 ppb at 3 GHz over 100 s is not lost to cancellation") {
    CHECK(counter_drift({0, 0, 0}, {100'000'000'000, 300'000'000'900, 0}, 3e9) == Approx(3e-9).epsilon(1e-6));
  }
  SECTION("a counter that wraps between the pairings") {
    const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
    CHECK(counter_drift({0, max - 499, 0}, {1000, 500, 0}, 1e9) == 0.0);
  }
  SECTION("no elapsed time or no frequency: NaN") {
    CHECK(std::isnan(counter_drift({10, 0, 0}, {10, 5, 0}, 1e9)));
    CHECK(std::isnan(counter_drift({10, 0, 0}, {5, 5, 0}, 1e9)));
    CHECK(std::isnan(counter_drift({0, 0, 0}, {10, 5, 0}, 0)));
  }
}

TEST_CASE("real pairings around a calibration agree with it to 1%", "[clock_methods]") {
  const TickMethod method = default_tick_method();
  const ClockTickPair earlier = pair_clock_with_ticks(method);
  const CounterFrequency f = calibrate_pause_loop(method, std::chrono::milliseconds(20));
  const ClockTickPair later = pair_clock_with_ticks(method);
  REQUIRE(later.clock_ns > earlier.clock_ns);
  CHECK(later.tick > earlier.tick);
  const double drift = counter_drift(earlier, later, f.hertz);
  CHECK(std::isfinite(drift));
  CHECK(std::fabs(drift) < 1e-2);
}

TEST_CASE("CPUID frequencies, where the CPU states them, are 1..10 GHz", "[clock_methods]") {
  if (const auto hz = cpuid_15h_hertz()) {
    CHECK(*hz >= 1e9);
    CHECK(*hz <= 1e10);
  }
  if (const auto hz = cpuid_16h_base_hertz()) {
    CHECK(*hz >= 1e9);
    CHECK(*hz <= 1e10);
  }
#if !defined(__x86_64__)
  CHECK_FALSE(cpuid_15h_hertz().has_value());
  CHECK_FALSE(cpuid_16h_base_hertz().has_value());
#endif
}

TEST_CASE("sleeps never end early: median overshoot >= 0 for 100 us requests", "[clock_methods]") {
  const SleepOvershoot s = measure_sleep_overshoot(std::chrono::microseconds(100), 20);
  CHECK(s.requested == std::chrono::microseconds(100));
  CHECK(s.samples == 20);
  CHECK(s.median_ns >= 0);
  CHECK(s.median_ns <= s.p99_ns);
  CHECK(s.p99_ns <= s.max_ns);
  CHECK(s.sum_ns >= 0);
  CHECK(s.sum_ns <= s.max_ns * 20);
  CHECK_THROWS_AS(measure_sleep_overshoot(std::chrono::nanoseconds(-1), 1), std::invalid_argument);
  const SleepOvershoot none = measure_sleep_overshoot(std::chrono::nanoseconds(0), 0);
  CHECK(none.samples == 0);
  CHECK(none.max_ns == 0);
  CHECK(none.sum_ns == 0);
}
