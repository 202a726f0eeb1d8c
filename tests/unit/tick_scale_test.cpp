// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "measure/tick_scale.h"

using namespace jitterd;

TEST_CASE("ticks become ns within 1 ns + 1 ppb from 25 MHz to 4 GHz, even for long deltas", "[tick_scale]") {
  const double rates[] = {25e6, 54e6, 100e6, 1e9, 1.8e9, 2.1e9, 2.4e9, 3.0e9, 3.6e9, 4.0e9};
  const std::uint64_t deltas[] = {0,
                                  1,
                                  7,
                                  1000,
                                  123456789,
                                  1'000'000'000,
                                  3'600ull * 4'000'000'000ull,
                                  std::uint64_t{1} << 50,
                                  std::uint64_t{1} << 62,
                                  std::numeric_limits<std::uint64_t>::max() / 4};
  for (double hz : rates) {
    const TickScale scale(hz);
    for (std::uint64_t ticks : deltas) {
      const long double exact = static_cast<long double>(ticks) * 1e9L / static_cast<long double>(hz);
      if (exact > 1.8e19L) continue;  // beyond 64-bit nanoseconds
      const long double got = scale.to_ns(ticks);
      INFO("hz=" << hz << " ticks=" << ticks);
      REQUIRE(std::fabs(static_cast<double>(got - exact)) <= 1.0 + static_cast<double>(exact) * 1e-9);
      REQUIRE(scale.to_seconds(ticks) == Approx(static_cast<double>(exact * 1e-9L)).epsilon(1e-9).margin(1e-9));
    }
  }
}

TEST_CASE("from_ns inverts to_ns", "[tick_scale]") {
  for (double hz : {25e6, 1e9, 2.9e9, 4e9}) {
    const TickScale scale(hz);
    for (std::uint64_t ns : {1000ull, 1'000'000ull, 60'000'000'000ull}) {
      const auto ticks = scale.from_ns(ns);
      CHECK(static_cast<double>(scale.to_ns(ticks)) == Approx(static_cast<double>(ns)).margin(1.0 + 1e9 / hz));
    }
  }
}

TEST_CASE("1 GHz is the identity (the steady_clock fallback counts ns)", "[tick_scale]") {
  const TickScale scale(1e9);
  CHECK(scale.to_ns(123456789) == 123456789);
  CHECK(scale.to_ns(std::numeric_limits<std::uint64_t>::max() / 2) ==
        std::numeric_limits<std::uint64_t>::max() / 2);
}

TEST_CASE("absurd frequencies are refused", "[tick_scale]") {
  CHECK_THROWS_AS(TickScale(0.0), std::invalid_argument);
  CHECK_THROWS_AS(TickScale(std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(TickScale(1e12), std::invalid_argument);
}
