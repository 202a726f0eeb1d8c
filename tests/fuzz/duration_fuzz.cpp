// SPDX-License-Identifier: Apache-2.0
// Durations ("100ms", "1h30m"): any text parses or is refused; a parsed one formats to a text
// that parses back to the same duration.
#include "config/duration.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jitterd;
  if (const std::optional<Duration> parsed = parse_duration(fuzz::as_text(data, size))) {
    const std::string text = format_duration(*parsed);
    const std::optional<Duration> again = parse_duration(text);
    fuzz::require(again.has_value() && *again == *parsed);
  }
  return 0;
}
