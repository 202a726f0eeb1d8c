// SPDX-License-Identifier: Apache-2.0
// The time ranges of `jitterd compare --prometheus`: START/END, each RFC 3339 or unix seconds.
// Pure functions, safe from any thread.
#pragma once

#include <optional>
#include <string>

namespace jitterd {

// [start, end] in unix seconds; `text` as given, for messages.
struct TimeRange {
  double start = 0, end = 0;
  std::string text;
};

// "START/END", each RFC 3339 (2026-11-25T10:00:00Z, 2026-11-25T11:00:00.5+01:00) or unix
// seconds (1795600000, 1795600000.25). nullopt and *error when it is neither, or END <= START.
std::optional<TimeRange> parse_time_range(const std::string& text, std::string* error);
// One instant, as above.
std::optional<double> parse_instant(const std::string& text);

}  // namespace jitterd
