// SPDX-License-Identifier: Apache-2.0
// --range and --before/--after (compare/time_range.h): any text parses or is refused with a
// reason; a parsed range is finite and not empty, its relative ends taken from a fixed now.
#include <cmath>

#include "compare/time_range.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  const std::string text(fuzz::as_text(data, size));
  std::string error;
  constexpr double kNow = 1800000000;
  if (const std::optional<TimeRange> range = parse_time_range(text, &error, kNow)) {
    fuzz::require(std::isfinite(range->start) && std::isfinite(range->end) && range->start < range->end);
    fuzz::require(range->text == text);
  } else {
    fuzz::require(!error.empty());
  }
  if (const std::optional<double> seconds = parse_prometheus_duration(text))
    fuzz::require(*seconds > 0 && *seconds <= 100 * 365 * 86400.0);
  return 0;
}
