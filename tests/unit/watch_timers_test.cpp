// SPDX-License-Identifier: Apache-2.0
#include "probes/watch_timers.h"

#include <catch2/catch.hpp>

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
  add_timer_starts(reading, counts, result);

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
