// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include "measure/rolling_window.h"

using namespace jitterd;

namespace {
HistogramSnapshot with(std::size_t bucket, std::uint64_t count, HistogramSnapshot base = {}) {
  base.counts[bucket] += count;
  return base;
}
}  // namespace

TEST_CASE("the window holds the changes of the last window_ticks only", "[rolling_window]") {
  RollingWindow w(10);
  HistogramSnapshot cumulative;
  w.push(cumulative, 0);
  CHECK(w.window().total() == 0);
  cumulative = with(3, 5, cumulative);
  w.push(cumulative, 4);  // delta 0..4: 5 in bucket 3
  cumulative = with(7, 2, cumulative);
  w.push(cumulative, 8);  // delta 4..8: 2 in bucket 7
  CHECK(w.window().total() == 7);
  CHECK(w.start_tick() == 0);
  cumulative = with(3, 1, cumulative);
  w.push(cumulative, 12);  // delta 8..12; delta 0..4 started 12 ticks ago: out
  const auto window = w.window();
  CHECK(window.total() == 3);
  CHECK(window.counts[3] == 1);
  CHECK(window.counts[7] == 2);
  CHECK(w.start_tick() == 4);
  CHECK(w.end_tick() == 12);
}

TEST_CASE("deltas store only the buckets that changed", "[rolling_window]") {
  RollingWindow w(1000);
  HistogramSnapshot cumulative;
  for (std::uint64_t t = 0; t < 100; ++t) {
    cumulative = with(t % 50, 1, cumulative);
    w.push(cumulative, t);
  }
  CHECK(w.window().total() == 99);  // the first push is the baseline
}

TEST_CASE("the window's parts are its pushes one by one and sum to the window", "[rolling_window]") {
  RollingWindow w(10);
  CHECK(w.parts().empty());
  HistogramSnapshot cumulative;
  w.push(cumulative, 0);
  CHECK(w.parts().empty());  // one push: no step yet
  cumulative = with(3, 5, cumulative);
  w.push(cumulative, 4);
  cumulative = with(7, 2, cumulative);
  w.push(cumulative, 8);
  cumulative = with(3, 1, cumulative);
  w.push(cumulative, 12);  // the 0..4 step leaves the window
  const auto parts = w.parts();
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].from_tick == 4);
  CHECK(parts[0].to_tick == 8);
  CHECK(parts[0].added.counts[7] == 2);
  CHECK(parts[0].added.total() == 2);
  CHECK(parts[1].from_tick == 8);
  CHECK(parts[1].to_tick == 12);
  CHECK(parts[1].added.counts[3] == 1);
  HistogramSnapshot sum;
  for (const auto& p : parts) sum.add(p.added);
  CHECK(sum.counts == w.window().counts);
}

TEST_CASE("the window kept as deltas come and go equals the sum of the deltas it holds", "[rolling_window]") {
  // Pushes at uneven steps over many buckets, so deltas leave one, two or none at a time; at every
  // step the incrementally kept window must be exactly what summing the kept steps gives.
  RollingWindow w(60);
  HistogramSnapshot cumulative;
  std::uint64_t tick = 0, state = 12345;
  for (int step = 0; step < 400; ++step) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    for (int k = 0; k < 1 + static_cast<int>(state >> 60); ++k)
      cumulative = with((state >> (k * 3)) % kHistogramBuckets, 1 + k, cumulative);
    tick += 1 + (state >> 58) % 9;
    w.push(cumulative, tick);
    HistogramSnapshot sum;
    for (const auto& part : w.parts()) sum.add(part.added);
    REQUIRE(sum.counts == w.window().counts);
  }
  CHECK(w.window().total() > 0);
}
