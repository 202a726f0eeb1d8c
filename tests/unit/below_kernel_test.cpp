// SPDX-License-Identifier: Apache-2.0
#include "probes/below_kernel.h"

#include <catch2/catch.hpp>

using jitterd::below_kernel_causes;
using jitterd::SmiWindow;
using jitterd::TimedInterval;

TEST_CASE("below_kernel_causes: a gap inside a tick interval whose SMI count grew is the SMI's",
          "[below_kernel]") {
  // Ticks every 4 ms; the count grew by one between the ticks at 8 and 12 ms.
  const std::vector<SmiWindow> windows = {{8'000'000, 12'000'000, 1}};
  const std::vector<TimedInterval> gaps = {
      {1'000'000, 1'020'000},    // before the interval
      {9'000'000, 9'200'000},    // inside it, the longest
      {10'000'000, 10'030'000},  // inside it too, but the one SMI went to the longer gap
      {12'001'000, 12'050'000},  // just after, within the slack
  };
  const auto causes = below_kernel_causes(gaps, windows, false, 2000);
  CHECK(causes == std::vector<std::string_view>{"unexplained", "smi", "unexplained", "unexplained"});
  // Two SMIs in the interval: the next longest overlapping gap takes the second; the one within
  // the slack after the interval's end is the next candidate.
  const auto two = below_kernel_causes(gaps, {{8'000'000, 12'000'000, 3}}, false, 2000);
  CHECK(two == std::vector<std::string_view>{"unexplained", "smi", "smi", "smi"});
}

TEST_CASE("below_kernel_causes: steal in the window makes the rest the hypervisor's", "[below_kernel]") {
  const std::vector<TimedInterval> gaps = {{100, 200}, {5'000, 9'000}};
  CHECK(below_kernel_causes(gaps, {}, true, 0) == std::vector<std::string_view>{"hypervisor", "hypervisor"});
  CHECK(below_kernel_causes(gaps, {{4'000, 6'000, 1}}, true, 0) ==
        std::vector<std::string_view>{"hypervisor", "smi"});
  CHECK(below_kernel_causes({}, {{4'000, 6'000, 1}}, true, 0).empty());
}
