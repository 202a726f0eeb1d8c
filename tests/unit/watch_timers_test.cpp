// SPDX-License-Identifier: Apache-2.0
#include "probes/watch_timers.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "probe_result_lookup.h"

using namespace jitterd;
using jitterd::testing::named;
using jitterd::testing::value;

TEST_CASE("timer starts: the 16 most started per cpu and kind, the rest as other, after the tick-stop table",
          "[watch_timers]") {
  TimerStartsReading reading;
  for (int i = 0; i < 20; ++i)
    reading.starts.push_back({5, "hrtimer", "fn" + std::to_string(i), static_cast<std::uint64_t>(100 - i)});
  reading.starts.push_back({6, "timer", "process_timeout", 3});
  reading.untracked = 2;
  WatchReading counts;
  counts.cpus.resize(2);
  counts.cpus[0].cpu = 5;
  counts.cpus[1].cpu = 6;
  ProbeResult result;
  result.tables.push_back({"glance", {}, {}});
  result.tables.push_back({"tick stop failures by dependency (bpf)", {}, {}});
  result.tables.push_back({"ipi senders", {}, {}});
  TimerFunctionsShown shown;
  add_timer_starts(reading, counts, shown, result);

  CHECK(named(result, "jitterd_watch_timer_starts_total").size() == 16 + 1 + 1);
  CHECK(value(result, "jitterd_watch_timer_starts_total",
              {{"cpu", "5"}, {"kind", "hrtimer"}, {"function", "fn0"}}) == 100);
  // fn16..fn19: 84 + 83 + 82 + 81.
  CHECK(value(result, "jitterd_watch_timer_starts_total",
              {{"cpu", "5"}, {"kind", "hrtimer"}, {"function", "other"}}) == 330);
  CHECK(value(result, "jitterd_watch_timer_starts_total",
              {{"cpu", "6"}, {"kind", "timer"}, {"function", "process_timeout"}}) == 3);
  CHECK(value(result, "jitterd_watch_timer_starts_untracked_total", {}) == 2);
  REQUIRE(result.tables.size() == 4);
  CHECK(result.tables[2].title.starts_with("timers started on the watched cpus by function"));
  CHECK(result.tables[2].rows.size() == 18);
  // No watched CPU is nohz_full: the note says what the timers mean there.
  REQUIRE(result.notes.size() == 1);
  CHECK(result.notes[0].starts_with("no watched cpu is nohz_full"));
}

TEST_CASE("timer starts: a function once shown keeps its series and other only grows", "[watch_timers]") {
  WatchReading counts;
  counts.cpus.resize(1);
  counts.cpus[0].cpu = 5;
  TimerFunctionsShown shown;
  const auto read = [&](std::uint64_t late_count) {
    TimerStartsReading reading;
    // fn0..fn16 start 100 - i times; "late" climbs from the bottom to the top between readings.
    for (int i = 0; i < 17; ++i)
      reading.starts.push_back({5, "hrtimer", "fn" + std::to_string(i), static_cast<std::uint64_t>(100 - i)});
    reading.starts.push_back({5, "hrtimer", "late", late_count});
    std::sort(reading.starts.begin(), reading.starts.end(),
              [](const TimerStarts& a, const TimerStarts& b) { return a.count > b.count; });
    ProbeResult result;
    add_timer_starts(reading, counts, shown, result);
    return result;
  };
  const ProbeResult first = read(1);
  const double other_first =
      value(first, "jitterd_watch_timer_starts_total", {{"cpu", "5"}, {"kind", "hrtimer"}, {"function", "other"}});
  CHECK(other_first == 84 + 1);  // fn16 and late
  const ProbeResult second = read(500);
  // late is now the most started, but fn0..fn15 hold the 16 series: it stays in other.
  CHECK(named(second, "jitterd_watch_timer_starts_total").size() == 17);
  CHECK(value(second, "jitterd_watch_timer_starts_total",
              {{"cpu", "5"}, {"kind", "hrtimer"}, {"function", "fn0"}}) == 100);
  const double other_second = value(second, "jitterd_watch_timer_starts_total",
                                    {{"cpu", "5"}, {"kind", "hrtimer"}, {"function", "other"}});
  CHECK(other_second == 84 + 500);
  CHECK(other_second >= other_first);
}
