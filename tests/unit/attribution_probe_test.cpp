// SPDX-License-Identifier: Apache-2.0
// The attribution probe on a scratch /proc whose interrupt counts move between windows and a
// SamplerShared whose counters the test sets: the window-delta method, exactly.
#include "probes/attribution_probe.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>

#include "fixture_tree.h"
#include "probe_result_lookup.h"
#include "watch/bpf/watch_bpf.h"
#include "watch/trace_pairing.h"

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

// A scratch /sys and /proc (cpu 1: 500 timer ticks, 7 NIC interrupts, its softirqs) and a context
// that samples cpu 1 with a sampler whose counters the test sets.
struct SampledCpu1 {
  jitterd::testing::ScratchTree sys, proc;
  SamplerShared shared{16, 1'000'000, 16};
  ProbeContext context;

  SampledCpu1() {
    proc.write("interrupts", interrupts(500, 7));
    proc.write("softirqs", softirqs);
    context.host = HostReader(sys.root(), proc.root());
    context.method = TickMethod::steady_clock;
    context.frequency.hertz = 1e9;
    context.sampled = {1};
    context.sampler_of = [this](int cpu) { return cpu == 1 ? &shared : nullptr; };
    context.msr_pmu = read_msr_pmu(context.host);  // none in this tree, as the daemon reads it
  }
  SampledCpu1(const SampledCpu1&) = delete;
  SampledCpu1& operator=(const SampledCpu1&) = delete;
};

}  // namespace

TEST_CASE_METHOD(SampledCpu1, "attribution by window deltas: interruptions shared among the window's interrupts",
                 "[attribution_probe]") {
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
  // Window deltas give nothing to softirqs: only the six hard-IRQ causes, smi, hypervisor and
  // unexplained.
  CHECK(named(first, "jitterd_attribution_interruptions_total").size() == 9);
  CHECK(named(first, "jitterd_attribution_stolen_seconds_total").size() == 9);
  // No /proc/stat and no SMI counter here: nothing below the kernel is exported or explained.
  CHECK(named(first, "jitterd_smi_total").empty());
  CHECK(named(first, "jitterd_cpu_steal_seconds_total").empty());
  CHECK(value(first, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "smi"}}) == 0);
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

TEST_CASE_METHOD(SampledCpu1,
                 "attribution below the kernel: the window's SMIs, then its steal, take the unexplained gaps",
                 "[attribution_probe]") {
  proc.write("stat", "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 0 0 9 0 0 0 4 0 0\ncpu1 1 0 0 9 0 0 0 40 0 0\n");
  shared.smi_count = 7;
  shared.smi_in_spans = 5;  // the other 2 came while the sampler slept
  shared.smi_counted = true;
  AttributionProbe probe(AttributionSettings{true, std::chrono::seconds(10), false, 0});
  const ProbeResult baseline = probe.run(context);
  const double user_hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  CHECK(value(baseline, "jitterd_smi_total", {{"cpu", "1"}}) == 7);
  CHECK(value(baseline, "jitterd_cpu_steal_seconds_total", {{"cpu", "1"}}) == Approx(40 / user_hz));
  // One state line, at info level, saying what the machine below the kernel lets jitterd count.
  REQUIRE(baseline.states.count("below_kernel") == 1);
  CHECK_FALSE(baseline.states.at("below_kernel").warning);
  CHECK(baseline.states.at("below_kernel").line ==
        "msr PMU: no SMI counter (no msr PMU at " + (sys.root() / "bus/event_source/devices/msr").string() +
            "); no APERF/MPERF (no msr PMU at " + (sys.root() / "bus/event_source/devices/msr").string() +
            "; most guests hide them), so frequency drops are not measured; steal time from /proc/stat in 1/" +
            std::to_string(static_cast<int>(user_hz)) + " s ticks");

  // A window of 10 ticks and 2 NIC interrupts, 17 interruptions of 1 us: 5 unexplained; 2 SMIs
  // while the sampler spun (of 4 on the CPU) and steal in the window make them 2 smi and 3
  // hypervisor.
  proc.write("interrupts", interrupts(510, 9));
  proc.write("stat", "cpu0 1 0 0 9 0 0 0 4 0 0\ncpu1 1 0 0 9 0 0 0 43 0 0\n");
  shared.smi_count = 11;
  shared.smi_in_spans = 7;
  shared.interruption_count = 17;
  shared.interrupted_ticks = 17'000;
  const ProbeResult first = probe.run(context);
  CHECK(value(first, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "smi"}}) == 2);
  CHECK(value(first, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "hypervisor"}}) == 3);
  CHECK(value(first, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "unexplained"}}) == 0);
  CHECK(value(first, "jitterd_attribution_stolen_seconds_total", {{"cpu", "1"}, {"cause", "smi"}}) ==
        Approx(2e-6));
  CHECK(value(first, "jitterd_smi_total", {{"cpu", "1"}}) == 11);
  CHECK(value(first, "jitterd_cpu_steal_seconds_total", {{"cpu", "1"}}) == Approx(43 / user_hz));

  // No steal and no SMI in the next window: its unexplained gaps stay so.
  shared.interruption_count = 20;
  shared.interrupted_ticks = 20'000;
  const ProbeResult second = probe.run(context);
  CHECK(value(second, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "unexplained"}}) == 3);
  CHECK(value(second, "jitterd_attribution_interruptions_total", {{"cpu", "1"}, {"cause", "hypervisor"}}) == 3);
}

TEST_CASE("attribution below the kernel: APERF/MPERF exported as read, the window's frequency in the line",
          "[attribution_probe]") {
  jitterd::testing::ScratchTree sys, proc;
  sys.write("bus/event_source/devices/msr/type", "12\n");
  for (const char* event : {"smi", "aperf", "mperf"})
    sys.write(std::string("bus/event_source/devices/msr/events/") + event, "event=0x01\n");
  proc.write("interrupts", interrupts(500, 7));
  proc.write("softirqs", softirqs);
  proc.write("stat", "cpu0 1 0 0 9 0 0 0 4 0 0\ncpu1 1 0 0 9 0 0 0 40 0 0\n");
  SamplerShared shared(16, 1'000'000, 16);
  ProbeContext context;
  context.host = HostReader(sys.root(), proc.root());
  context.frequency.hertz = 1e9;
  context.sampled = {1, 2};
  SamplerShared other(16, 1'000'000, 16);
  context.sampler_of = [&](int cpu) { return cpu == 1 ? &shared : cpu == 2 ? &other : nullptr; };
  context.sampler_counter_errors_of = [](int cpu) {
    return cpu == 2 ? SamplerCounterErrors{"", "perf_event_open: Permission denied"} : SamplerCounterErrors{};
  };
  context.msr_pmu = read_msr_pmu(context.host);
  REQUIRE(context.msr_pmu.has_frequency());
  AttributionProbe probe(AttributionSettings{true, std::chrono::seconds(10), false, 0});
  publish_cycles(shared, 5'000, 10'000);
  const ProbeResult baseline = probe.run(context);
  CHECK(value(baseline, "jitterd_cpu_actual_cycles_total", {{"cpu", "1"}}) == 5'000);
  CHECK(value(baseline, "jitterd_cpu_reference_cycles_total", {{"cpu", "1"}}) == 10'000);
  CHECK(named(baseline, "jitterd_cpu_actual_cycles_total").size() == 1);  // cpu 2's were refused
  const std::string& first_line = baseline.states.at("below_kernel").line;
  CHECK(first_line.find("APERF/MPERF counted per cpu") != std::string::npos);
  CHECK(first_line.find("APERF/MPERF not counted on cpus 2: perf_event_open: Permission denied") !=
        std::string::npos);
  CHECK(std::none_of(baseline.tables.begin(), baseline.tables.end(), [](const ProbeTable& t) {
    return t.title.starts_with("frequency over the last window");
  }));  // one reading: no window

  // The window: 1,800 actual cycles in 2,000 reference ones, 0.90 of the base frequency.
  publish_cycles(shared, 6'800, 12'000);
  const ProbeResult first = probe.run(context);
  CHECK(value(first, "jitterd_cpu_actual_cycles_total", {{"cpu", "1"}}) == 6'800);
  CHECK(value(first, "jitterd_cpu_reference_cycles_total", {{"cpu", "1"}}) == 12'000);
  // A table, not the state line (logged at each change): the figure changes with every window.
  CHECK(first.states.at("below_kernel").line == first_line);
  const auto table = std::find_if(first.tables.begin(), first.tables.end(), [](const ProbeTable& t) {
    return t.title == "frequency over the last window (APERF/MPERF)";
  });
  REQUIRE(table != first.tables.end());
  REQUIRE(table->rows.size() == 1);
  CHECK(table->rows[0][0].integer == 1);
  CHECK(table->rows[0][1].number == Approx(0.9));
}

namespace {

// A sampled CPU's tracepoints, through the tracepoints engine's pairing (watch/trace_pairing.h) as
// TraceWatch feeds it: the sampler (tid 100) is the application, records down to 1 us.
struct SampledPairing {
  static constexpr int kCpu = 1, kSampler = 100;
  InterruptionPairing pairing{{kCpu}, UINT64_MAX, 555};
  SampledPairing() {
    pairing.set_application({kSampler});
    pairing.want_records(kCpu, 1'000);
  }
  void add(std::uint64_t at, PairingRole role, std::size_t source, int number = 0, std::string name = {},
           int prev_tid = -1) {
    TraceEvent e;
    e.cpu = kCpu;
    e.time_ns = at;
    e.number = number;
    e.name = std::move(name);
    e.prev_tid = prev_tid;
    e.value = 0;  // a switch's prev_state: runnable, preempted
    pairing.add(e, PairingTracepoint{role, source}, [](int tid) {
      return tid == 200 ? PreempterFacts{200, false, false} : PreempterFacts{};
    });
  }
  void interrupt(std::uint64_t from, std::uint64_t to, std::size_t source, int number = 0, std::string name = {}) {
    add(from, PairingRole::entry, source, number, name);
    add(to, PairingRole::exit, source, number, name);
  }
  void preempt(std::uint64_t from, std::uint64_t to) {
    add(from, PairingRole::sched_switch, 0, 200, "stray-task", kSampler);
    add(to, PairingRole::sched_switch, 0, kSampler, "sampler", 200);
  }
};

}  // namespace

TEST_CASE("tracepoints' takers: the engine's paired records name a sampled CPU's gaps as bpf's do",
          "[attribution_probe]") {
  SampledPairing cpu;
  cpu.interrupt(1'000, 3'000, JD_SRC_LOCAL_TIMER);                            // wakes a task...
  cpu.preempt(3'100, 203'100);                                                // ...that runs 200 us
  cpu.interrupt(300'000, 301'000, JD_SRC_DEVICE_IRQ, 24, "virtio0-input.0");  // raises...
  cpu.interrupt(301'100, 360'000, JD_SRC_SOFTIRQ_FIRST, 3, "NET_RX");         // ...a softirq of 59 us
  cpu.interrupt(500'000, 505'000, JD_SRC_LOCAL_TIMER);                        // alone...
  cpu.add(502'000, PairingRole::mark, JD_SRC_IRQ_WORK, 246);  // ...but for an irq_work, of no known length
  cpu.preempt(800'000, 1'000'000);                            // a task runs 200 us...
  cpu.interrupt(820'000, 822'000, JD_SRC_LOCAL_TIMER);        // ...a tick inside its run
  cpu.interrupt(1'200'010, 1'205'010, JD_SRC_DEVICE_IRQ, 24, "virtio0-input.0");  // after a gap, within the slack
  cpu.interrupt(1'300'000, 1'300'500, JD_SRC_LOCAL_TIMER);      // under the records' threshold: no record
  cpu.add(1'400'000, PairingRole::mark, JD_SRC_IRQ_WORK, 246);  // irq_work: its exit perf refuses
  const PairedRecords records = cpu.pairing.take_records(SampledPairing::kCpu);
  const std::vector<std::optional<Taker>> takers = takers_from_records({{990, 203'200},
                                                                        {299'995, 360'050},
                                                                        {499'990, 505'100},
                                                                        {700'000, 710'000},
                                                                        {800'000, 1'000'050},
                                                                        {1'195'000, 1'200'000},
                                                                        {1'299'990, 1'300'600},
                                                                        {1'399'990, 1'400'900}},
                                                                       records.events, 20);
  REQUIRE(takers.size() == 8);
  REQUIRE(takers[0]);  // the task's run, not the timer interrupt that woke it
  CHECK(takers[0]->cause == "preempted");
  CHECK(takers[0]->source == "preempt_stray");
  CHECK(takers[0]->name == "stray-task");
  CHECK(takers[0]->task_class == "stray");  // the class, as bpf gives it
  REQUIRE(takers[1]);                       // the softirq, which took the most of the gap
  CHECK(takers[1]->cause == "softirq_net");
  CHECK(takers[1]->source == "softirq_NET_RX");
  REQUIRE(takers[2]);  // the timer's 5 us, not the irq_work mark of length 0 inside it
  CHECK(takers[2]->cause == "timer");
  CHECK(takers[2]->source == "local_timer");
  CHECK_FALSE(takers[3]);  // nothing the kernel traced
  REQUIRE(takers[4]);      // the task's 198 us of own time, not the tick inside it
  CHECK(takers[4]->cause == "preempted");
  REQUIRE(takers[5]);  // the IRQ that began within the slack after the gap
  CHECK(takers[5]->cause == "device_irq");
  CHECK(takers[5]->source == "device_irq");
  CHECK(takers[5]->name == "virtio0-input.0");
  CHECK_FALSE(takers[6]);
  REQUIRE(takers[7]);  // the gap an irq_work alone made, named though its length is unknown
  CHECK(takers[7]->cause == "other_irq");
  CHECK(takers[7]->source == "irq_work");
}

TEST_CASE_METHOD(SampledCpu1,
                 "attribution with tracepoints off and no BPF engine: the method line says so, not as a warning",
                 "[attribution_probe]") {
  AttributionProbe probe(AttributionSettings{});  // the default: bpf where it loads, tracepoints off
  for (int run = 0; run < 2; ++run) {
    const ProbeResult result = probe.run(context);
    CHECK(value(result, "jitterd_attribution_method_info", {{"method", "window_deltas"}}) == 1);
    CHECK(result.warnings.empty());
    REQUIRE(result.states.count("method") == 1);
    CHECK(result.states.at("method") ==
          ProbeState{"window_deltas (tracepoints: false in the configuration; no BPF engine in this context)",
                     false});
  }
}

namespace {

PairedOutlier record(std::uint64_t start_ns, std::uint64_t end_ns, std::uint64_t own_ns, std::string name) {
  PairedOutlier r;
  r.start_ns = start_ns;
  r.end_ns = end_ns;
  r.duration_ns = own_ns;
  r.name = std::move(name);
  return r;
}

}  // namespace

TEST_CASE("bpf records matched to gaps: the record that took most of the gap names it", "[attribution_probe]") {
  // A softirq (own 3 us) with a timer IRQ nested in it (own 10 us), in the order the program
  // emits them (the inner one ends first); a preemption of 50 us later; a record far away.
  const std::vector<PairedOutlier> records{
      record(1'000'000, 1'013'000, 10'000, "timer"),  // inner, emitted first
      record(999'000, 1'014'000, 3'000, "softirq"),   // its parent: earlier start, later end
      record(2'000'000, 2'050'000, 50'000, "stray-task"),
      record(9'000'000, 9'020'000, 20'000, "far"),
  };
  const std::vector<TimedInterval> gaps{
      {998'500, 1'014'500},    // the softirq and its IRQ
      {2'000'400, 2'050'100},  // the preemption, its edges within the slack
      {5'000'000, 5'030'000},  // nothing there: unexplained
  };
  const std::vector<const PairedOutlier*> matched = match_records(gaps, records, 2000);
  REQUIRE(matched.size() == 3);
  REQUIRE(matched[0] != nullptr);
  CHECK(matched[0]->name == "timer");  // 10 us of own time beats the softirq's 3 us
  REQUIRE(matched[1] != nullptr);
  CHECK(matched[1]->name == "stray-task");
  CHECK(matched[2] == nullptr);
  // The same as takers: the record's source named and caused as the watch does, the record kept.
  const std::vector<std::optional<Taker>> takers = takers_from_records(gaps, records, 2000);
  REQUIRE(takers.size() == 3);
  REQUIRE(takers[0]);
  CHECK(takers[0]->record == matched[0]);
  CHECK(takers[0]->name == "timer");
  CHECK(takers[0]->source == watch_source_name(matched[0]->source));
  CHECK(takers[0]->cause == watch_source_cause(matched[0]->source));
  CHECK_FALSE(takers[2]);
}

TEST_CASE("takers tallied by cause, source and name: most first, with the longest", "[attribution_probe]") {
  TakerTally tally;
  CHECK(tally.top(8).empty());
  const Taker timer{"timer", "local_timer", "", {}, nullptr};
  const Taker task{"preempted", "preempt_stray", "stray-task", "stray", nullptr};
  tally.add(task, 50'000);
  tally.add(timer, 3'000);
  tally.add(timer, 9'000);
  tally.add(timer, 4'000);
  const std::vector<TakerTally::Row> rows = tally.top(8);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].source == "local_timer");
  CHECK(rows[0].count == 3);
  CHECK(rows[0].longest_ns == 9'000);
  CHECK(rows[1].name == "stray-task");
  CHECK(rows[1].longest_ns == 50'000);
  CHECK(tally.top(1).size() == 1);
}

TEST_CASE(
    "carried records: a CPU's records for a match are those kept and those taken; the carry keeps what may "
    "still be read",
    "[attribution_probe]") {
  CarriedRecords carried;
  CHECK(carried.add(1, {record(1'000, 2'000, 1'000, "old"), record(95'000, 99'000, 4'000, "late")}).size() == 2);
  carried.carry(100'000, 2'000);  // "old" ended 98 us before the read; "late" 1 us before: kept
  CHECK(carried.add(2, {record(150'000, 151'000, 1'000, "other")}).size() == 1);  // another CPU's are its own
  carried.carry(10'000'000, 2'000);  // CPU 2's trimmed; CPU 1, not matched this time, keeps "late" whole
  const std::vector<PairedOutlier>& next = carried.add(1, {record(101'000, 102'000, 1'000, "new")});
  REQUIRE(next.size() == 2);
  CHECK(next[0].name == "late");
  CHECK(next[1].name == "new");
  CHECK(carried.add(2, {}).empty());
  // A gap in progress at the read is read next time: its device IRQ, which ended 500 us before the
  // read, is kept for it within the horizon.
  CarriedRecords straddled;
  straddled.add(3, {record(9'499'000, 9'500'000, 1'000, "irq"), record(1'000, 2'000, 1'000, "old")});
  straddled.carry(10'000'000, kCarryHorizonNs);
  REQUIRE(straddled.add(3, {}).size() == 2);  // both within a second
  straddled.carry(10'000'000 + kCarryHorizonNs + 9'499'000, kCarryHorizonNs);
  CHECK(straddled.add(3, {}).empty());
}

TEST_CASE("bpf records matched to gaps: the slack bounds an overlap on both sides", "[attribution_probe]") {
  const std::vector<PairedOutlier> records{record(10'000, 12'000, 2'000, "before"),
                                           record(30'500, 31'000, 500, "after")};
  // The gap [14'000, 28'000]: "before" ends 2 us before it starts, "after" begins 2.5 us after it ends.
  CHECK(match_records({{14'000, 28'000}}, records, 2000)[0]->name == "before");
  CHECK(match_records({{14'001, 28'000}}, records, 2000)[0] == nullptr);
  CHECK(match_records({{14'100, 28'600}}, records, 2000)[0]->name == "after");
  CHECK(match_records({{15'000, 28'000}}, records, 0)[0] == nullptr);
  CHECK(match_records({}, records, 2000).empty());
  CHECK(match_records({{0, 100}}, {}, 2000)[0] == nullptr);
}

TEST_CASE("a sampled CPU's outlier threshold: a quarter of its sampler's, within bounds", "[attribution_probe]") {
  CHECK(sampled_outlier_threshold_ns(20'000) == 5'000);
  CHECK(sampled_outlier_threshold_ns(400) == kSampledOutlierFloorNs);
  CHECK(sampled_outlier_threshold_ns(0) == kSampledOutlierDefaultNs);
  CHECK(sampled_outlier_threshold_ns(std::nullopt) == kSampledOutlierDefaultNs);
}

TEST_CASE("the BPF outlier ring: sized for the CPUs it covers, a power of two within bounds",
          "[attribution_probe]") {
  CHECK(bpf_ring_bytes(0, 0) == 256u << 10);
  CHECK(bpf_ring_bytes(1, 0) == 256u << 10);
  CHECK(bpf_ring_bytes(3, 0) == 1u << 20);
  CHECK(bpf_ring_bytes(0, 1) == 2u << 20);
  CHECK(bpf_ring_bytes(2, 3) == 8u << 20);
  CHECK(bpf_ring_bytes(1000, 1000) == 64u << 20);
}
