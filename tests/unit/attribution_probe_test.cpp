// SPDX-License-Identifier: Apache-2.0
// The attribution probe on a scratch /proc whose interrupt counts move between windows and a
// SamplerShared whose counters the test sets: the window-delta method, exactly.
#include "probes/attribution_probe.h"

#include <catch2/catch.hpp>

#include <algorithm>

#include "fixture_tree.h"
#include "probe_result_lookup.h"

using namespace jitterd;
using jitterd::testing::named;
using jitterd::testing::value;

namespace {

std::string interrupts(int loc_cpu1, int nic_cpu1) {
  return "           CPU0       CPU1       \n"
         " 45:          0 " +
         std::to_string(nic_cpu1) +
         "  IR-PCI-MSI 1572868-edge      eth0-rx-1\n"
         "LOC:       1000 " +
         std::to_string(loc_cpu1) +
         "   Local timer interrupts\n"
         "RES:          5          5   Rescheduling interrupts\n";
}

const char* softirqs =
    "                    CPU0       CPU1       \n"
    "          HI:          0          0\n"
    "       TIMER:         10         10\n";

}  // namespace

TEST_CASE("attribution by window deltas: interruptions shared among the window's interrupts",
          "[attribution_probe]") {
  jitterd::testing::ScratchTree sys, proc;
  proc.write("interrupts", interrupts(500, 7));
  proc.write("softirqs", softirqs);
  SamplerShared shared(16, 1'000'000, 16);
  ProbeContext context;
  context.host = HostReader(sys.root(), proc.root());
  context.method = TickMethod::steady_clock;
  context.frequency.hertz = 1e9;
  context.sampled = {1};
  context.sampler_of = [&](int cpu) { return cpu == 1 ? &shared : nullptr; };
  AttributionProbe probe(AttributionSettings{true, std::chrono::seconds(10), true, 1});  // no tracefs here

  const ProbeResult baseline = probe.run(context);
  CHECK(value(baseline, "jitterd_attribution_method_info", {{"method", "window_deltas"}}) == 1);
  // Asked for and unavailable: the method line says so, as a warning, on every run (the daemon
  // logs it when it changes).
  CHECK(baseline.warnings.empty());
  REQUIRE(baseline.states.count("method") == 1);
  CHECK(baseline.states.at("method").warning);
  CHECK(baseline.states.at("method").line.rfind("window_deltas (tracepoints unavailable: ", 0) == 0);

  // One window: 10 timer ticks and 2 NIC interrupts on cpu 1, and 15 interruptions of 1 us each.
  proc.write("interrupts", interrupts(510, 9));
  shared.interruption_count = 15;
  shared.interrupted_ticks = 15'000;
  const ProbeResult first = probe.run(context);
  CHECK(value(first, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "timer"}}) == 10);
  CHECK(value(first, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "device_irq"}}) == 2);
  CHECK(value(first, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "unexplained"}}) == 3);
  // Window deltas give nothing to softirqs: only the six hard-IRQ causes and unexplained.
  CHECK(named(first, "jitterd_attribution_interruptions_total").size() == 7);
  CHECK(named(first, "jitterd_attribution_stolen_seconds_total").size() == 7);
  CHECK(value(first, "jitterd_attribution_coincident_interruptions_total", {{"cpu", "1"}}) == 12);
  CHECK(value(first, "jitterd_attribution_stolen_seconds_total", {{"cpu", "1"}, {"cause", "timer"}}) ==
        Approx(10e-6));
  // What fired, by category: every category of the cpu, zero or not.
  CHECK(value(first, "jitterd_attribution_events_total",
              {{"cpu", "1"}, {"kind", "irq"}, {"cause", "device_irq"}}) == 2);
  CHECK(value(first, "jitterd_attribution_events_total", {{"cpu", "1"}, {"kind", "irq"}, {"cause", "timer"}}) ==
        10);
  CHECK(value(first, "jitterd_attribution_events_total",
              {{"cpu", "1"}, {"kind", "softirq"}, {"cause", "timer"}}) == 0);
  CHECK(named(first, "jitterd_attribution_events_total").size() == 10);
  // ...and by source for the one with the most (source_detail: 1), the NIC's 2 left out.
  CHECK(value(first, "jitterd_attribution_source_events_total",
              {{"cpu", "1"}, {"kind", "irq"}, {"source", "LOC"}, {"name", "Local timer interrupts"}}) == 10);
  CHECK(named(first, "jitterd_attribution_source_events_total").size() == 1);

  // A quiet window: counters carry on, nothing is added.
  const ProbeResult second = probe.run(context);
  CHECK(value(second, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "timer"}}) == 10);
  CHECK(value(second, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "unexplained"}}) == 3);
}

TEST_CASE("cause of an overlap: a hard IRQ before a softirq before a task switch", "[attribution_probe]") {
  std::vector<TraceEvent> events(3);
  events[0].kind = TraceEventKind::sched_switch;
  events[1].kind = TraceEventKind::softirq;
  events[1].name = "NET_RX";
  events[2].kind = TraceEventKind::local_timer;
  CHECK(cause_of_overlap(events, {0, 3}) == "timer");
  CHECK(cause_of_overlap(events, {0, 2}) == "softirq_net");
  CHECK(cause_of_overlap(events, {0, 1}) == "preempted");
  CHECK(cause_of_overlap(events, {1, 1}) == "unexplained");
}

TEST_CASE("attribution with tracepoints off: the method line says so, not as a warning", "[attribution_probe]") {
  jitterd::testing::ScratchTree sys, proc;
  proc.write("interrupts", interrupts(500, 7));
  proc.write("softirqs", softirqs);
  SamplerShared shared(16, 1'000'000, 16);
  ProbeContext context;
  context.host = HostReader(sys.root(), proc.root());
  context.frequency.hertz = 1e9;
  context.sampled = {1};
  context.sampler_of = [&](int cpu) { return cpu == 1 ? &shared : nullptr; };
  AttributionProbe probe(AttributionSettings{});  // the default: tracepoints off
  for (int run = 0; run < 2; ++run) {
    const ProbeResult result = probe.run(context);
    CHECK(value(result, "jitterd_attribution_method_info", {{"method", "window_deltas"}}) == 1);
    CHECK(result.warnings.empty());
    REQUIRE(result.states.count("method") == 1);
    CHECK(result.states.at("method") ==
          ProbeState{"window_deltas (tracepoints: false in the configuration)", false});
  }
}
