// SPDX-License-Identifier: Apache-2.0
// A loop's rolling window is bounded by the window's time, not by its readings: the largest window
// the configuration allows (sampler.window 1h) read at the shortest interval (loops.interval
// 100 ms), for two hours of readings, holds at most 2 * 3600 + 3 parts and the bytes
// docs/loops.md states, with every bucket changing at every reading (the worst a writer can do)
// and with a loop's usual few; the history it gives the live baseline sums to the window's.
#include <catch2/catch.hpp>

#include <chrono>

#include "loops/loop_window.h"
#include "measure/histogram.h"

using namespace jitterd;
using namespace std::chrono_literals;

namespace {

// The counters of a loop that adds `per_reading` gaps per reading spread over `buckets` buckets.
struct FakeLoop {
  GapCountsTicks counts;
  std::size_t buckets;
  std::size_t next = 0;
  void advance() {
    for (std::size_t i = 0; i < buckets; ++i) counts.gaps.counts[(next + i) % kHistogramBuckets] += 1;
    next += buckets;
    counts.sampled_ticks += 100'000'000;
    counts.interruptions += 1;
    counts.interrupted_ticks += 1000;
  }
};

// docs/loops.md, "Bounds": parts <= 2 * window / 1 s + 3; per part 88 bytes and 16 per bucket it
// changed, plus the window's two histograms.
std::size_t bound_bytes(std::size_t parts, std::size_t buckets) {
  return parts * (88 + 16 * buckets) + 2 * sizeof(HistogramSnapshot) + 1024;
}

void run(std::chrono::nanoseconds interval, std::size_t buckets, std::uint64_t jitter_ns) {
  LoopWindow window(1, 1h, interval);
  FakeLoop loop{{}, buckets};
  const std::size_t max_parts = 2 * 3600 + 3;
  std::uint64_t now = 1'000'000'000, readings = 0;
  std::size_t most = 0;
  while (now < 1'000'000'000 + 2 * 3600 * 1'000'000'000ULL) {
    loop.advance();
    window.add(loop.counts, now);
    ++readings;
    most = std::max(most, window.parts());
    // Jitter: readings early and late by up to `jitter_ns`, alternately.
    now += static_cast<std::uint64_t>(interval.count()) + ((readings % 2) != 0U ? jitter_ns : -jitter_ns);
  }
  INFO("interval " << interval.count() << " ns, " << buckets << " buckets a reading, " << readings << " readings");
  CHECK(most <= max_parts);
  CHECK(window.memory_bytes() <= bound_bytes(window.parts(), std::min(buckets * 10, kHistogramBuckets)));
  // The history holds the window: its steps sum to what the window's figures count.
  std::uint64_t sampled = 0;
  for (const LoopStepCounts& step : window.steps()) sampled += step.sampled_ticks;
  CHECK(window.steps().size() == window.parts());
  CHECK(sampled > 0);
}

}  // namespace

TEST_CASE("loop window: an hour's window read every 100 ms holds an hour of seconds, not of readings", "[loop]") {
  LoopWindow window(1, 1h, 100ms);
  FakeLoop loop{{}, 40};
  std::uint64_t now = 0;
  for (int i = 0; i < 2 * 36'000; ++i) {  // two hours of 100 ms readings
    loop.advance();
    window.add(loop.counts, now += 100'000'000);
  }
  CHECK(window.parts() <= 3601);  // one part per second of the hour: 36,000 readings are not kept
  CHECK(window.parts() >= 3599);
  // Per reading 40 buckets changed: 400 per one-second step.
  CHECK(window.memory_bytes() <= bound_bytes(window.parts(), 400));
  INFO(window.memory_bytes());
  CHECK(window.memory_bytes() < 30'000'000);
}

TEST_CASE("loop window: the bound holds for any reading pattern, a writer changing every bucket included",
          "[loop]") {
  run(100ms, 40, 0);
  run(1s, 40, 400'000'000);  // 1 s readings 0.6 s and 1.4 s apart
  run(100ms, kHistogramBuckets, 30'000'000);
}

TEST_CASE("loop window: the first two readings make a window, then one part per step", "[loop]") {
  LoopWindow window(1, 60s, 100ms);
  FakeLoop loop{{}, 3};
  loop.advance();
  window.add(loop.counts, 1000);
  loop.advance();
  window.add(loop.counts, 2000);  // a microsecond later: the window exists
  CHECK(window.parts() == 1);
  loop.advance();
  window.add(loop.counts, 500'000'000);  // within the step: left for a later reading
  CHECK(window.parts() == 1);
  loop.advance();
  window.add(loop.counts, 1'000'002'000);
  CHECK(window.parts() == 2);
  CHECK(window.steps().back().sampled_ticks == 2 * 100'000'000ULL);  // both readings' gaps, none lost
}

TEST_CASE("loop window: the steps' max covers the span the steps cover, not what came before", "[loop_window]") {
  // Slots of 1,000 ticks: a 50,000-tick gap in slot 2 (before the first reading), 7,000 in slot 11.
  LoopSegmentReading reading;
  reading.header.slot_ticks = 1000;
  reading.slots = {{2, 50'000}, {11, 7'000}};
  FakeLoop loop{{}, 4};
  LoopWindow window(1, 1h, 1s);
  loop.advance();
  window.add(loop.counts, 1'000'000'000, 5'000);  // the first reading: heartbeat at tick 5,000
  loop.advance();
  reading.heartbeat_tick = 12'000;
  window.add(loop.counts, 2'000'000'000, reading.heartbeat_tick);
  CHECK(window.steps().size() == 1);
  CHECK(window.steps_max_ticks(reading) == 7'000);
  // The window's own figures look back over its whole span, the earlier gap included.
  CHECK(reading.max_between(0, reading.heartbeat_tick) == 50'000);
}
