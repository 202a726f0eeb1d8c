// SPDX-License-Identifier: Apache-2.0
// The time ranges of `jitterd compare --prometheus` and `jitterd fleet --range`: START/END, each
// RFC 3339, unix seconds, `now` or `now-DURATION` (Grafana's form: now-24h/now); or one DURATION,
// with or without a leading '-' (24h, -1h: the last 24 hours, ending now). A DURATION is
// Prometheus's: whole numbers with units y, w, d, h, m, s, ms, largest first, each at most once
// (1h30m, 90s, 2w), as in a PromQL range selector. Parsed strictly: anything else is refused with
// what was expected. Pure functions (now is an argument), safe from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace jitterd {

// [start, end] in unix seconds; `text` as given, for messages.
struct TimeRange {
  double start = 0, end = 0;
  std::string text;
};

// "START/END", each RFC 3339 (2026-11-25T10:00:00Z, 2026-11-25T11:00:00.5+01:00), unix seconds
// (1795600000, 1795600000.25), now or now-DURATION; or "DURATION" / "-DURATION", ending at
// `now` (unix seconds; the wall clock when not given). nullopt and *error when it is none of
// these, or END <= START.
std::optional<TimeRange> parse_time_range(const std::string& text, std::string* error,
                                          std::optional<double> now = std::nullopt);
// One absolute instant: RFC 3339 or unix seconds.
std::optional<double> parse_instant(const std::string& text);
// A Prometheus duration in seconds ("1h30m" 5400, "500ms" 0.5); nullopt when malformed, zero, or
// over 100 years.
std::optional<double> parse_prometheus_duration(std::string_view text);

}  // namespace jitterd
