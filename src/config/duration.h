// SPDX-License-Identifier: Apache-2.0
// Durations as people write them in the configuration file ("250ns", "10us", "1.5ms", "2s", "5m",
// "1h") and as jitterd writes them back in messages. Parsing and formatting are exact in whole
// nanoseconds, so format_duration's output always parses back to the same value. Pure functions,
// safe from any thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace jitterd {

using Duration = std::chrono::nanoseconds;

// A non-negative decimal number immediately followed by one unit: ns, us (or µs), ms, s, m, h.
// nullopt if malformed, negative, finer than a nanosecond, or too large for Duration.
std::optional<Duration> parse_duration(std::string_view text);

// The shortest exact spelling with at least 1 of its unit: 100ms, 1s, 250us, 1.5ms, 1m.
std::string format_duration(Duration duration);

}  // namespace jitterd
