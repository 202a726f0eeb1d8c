// SPDX-License-Identifier: Apache-2.0
#include "probes/below_kernel.h"

#include <catch2/catch.hpp>

#include "fixture_tree.h"
#include "probe_result_lookup.h"

using jitterd::below_kernel_causes;
using jitterd::SmiWindow;
using jitterd::TimedInterval;
using jitterd::testing::named;
using jitterd::testing::value;

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

TEST_CASE("add_watched_below_kernel: the watched cpus' cycles exported as read, their frequency per window",
          "[below_kernel]") {
  jitterd::testing::ScratchTree sys, proc;
  sys.write("bus/event_source/devices/msr/type", "12\n");
  sys.write("bus/event_source/devices/msr/events/smi", "event=0x04\n");
  sys.write("bus/event_source/devices/msr/events/aperf", "event=0x01\n");
  sys.write("bus/event_source/devices/msr/events/mperf", "event=0x02\n");
  proc.write("stat", "cpu2 1 0 0 9 0 0 0 4 0 0\ncpu3 1 0 0 9 0 0 0 8 0 0\ncpu4 1 0 0 9 0 0 0 8 0 0\n");
  jitterd::ProbeContext context;
  context.host = jitterd::HostReader(sys.root(), proc.root());
  context.msr_pmu = jitterd::read_msr_pmu(context.host);
  context.sampled = {4};  // sampled and watched: the attribution probe's to export
  jitterd::WatchedBelowKernel read;
  read.cycles = {{2, {1'000, 2'000}}, {4, {1, 1}}};  // cpu 3's refused
  read.frequency_why_not = "perf_event_open: Permission denied";
  std::map<int, jitterd::CycleCounts> previous;
  jitterd::ProbeResult first;
  add_watched_below_kernel(context, {2, 3, 4}, read, previous, first);
  CHECK(value(first, "jitterd_cpu_actual_cycles_total", {{"cpu", "2"}}) == 1'000);
  CHECK(value(first, "jitterd_cpu_reference_cycles_total", {{"cpu", "2"}}) == 2'000);
  CHECK(named(first, "jitterd_cpu_actual_cycles_total").size() == 1);  // not cpu 3's, nor the sampled 4's
  CHECK(first.states.at("below_kernel")
            .line.find("APERF/MPERF not counted on watched cpus 3 (perf_event_open: Permission denied)") !=
        std::string::npos);
  CHECK(first.tables.empty());  // one reading: no window yet

  read.cycles[2] = {4'000, 4'000};  // 3,000 actual cycles in 2,000 reference ones: 1.5, turbo
  jitterd::ProbeResult second;
  add_watched_below_kernel(context, {2, 3, 4}, read, previous, second);
  REQUIRE(second.tables.size() == 1);
  CHECK(second.tables[0].title == "frequency over the last window (APERF/MPERF)");
  REQUIRE(second.tables[0].rows.size() == 1);
  CHECK(second.tables[0].rows[0][0].integer == 2);
  CHECK(second.tables[0].rows[0][1].number == Approx(1.5));
}
