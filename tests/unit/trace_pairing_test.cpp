// SPDX-License-Identifier: Apache-2.0
// The tracepoints method's pairing (watch/trace_pairing.h) on literal event sequences, against
// the figures the BPF program keeps for the same sequence: one interruption's length, nesting
// counted once, NMIs inside a frame, a call-function IPI that flushed the TLB, preemptions by the
// class of the task that took the CPU (with interrupts meanwhile taken out), voluntary switches
// not counted, exits without entries, lost records, nesting too deep, tick-stop failures by
// dependency, the outlier threshold and its bound per reading, other CPUs ignored, the idle task,
// marks (entries without exits), and the records kept for a loop or a sampled CPU (down to the
// threshold it wants, bounded, taken once).
#include "watch/trace_pairing.h"

#include <catch2/catch.hpp>

#include "watch/bpf/watch_bpf.h"

using jitterd::InterruptionPairing;
using jitterd::PairedCpuFigures;
using jitterd::PairedReading;
using jitterd::PairingRole;
using jitterd::PairingTracepoint;
using jitterd::PreempterFacts;
using jitterd::TraceEvent;

namespace {

constexpr int kWatched = 3;
constexpr int kApp = 100;

struct PairingFixture {
  InterruptionPairing pairing{{kWatched}, 10'000, 555};
  std::map<int, PreempterFacts> known;  // by tid; absent: a task gone (a stray of no process)

  PairingFixture() { pairing.set_application({kApp, kApp + 1}); }

  void event(std::uint64_t at, PairingRole role, std::size_t source, int number = 0, std::int64_t value = 0,
             int cpu = kWatched) {
    TraceEvent e;
    e.cpu = cpu;
    e.time_ns = at;
    e.number = number;
    e.value = value;
    pairing.add(e, PairingTracepoint{role, source}, [&](int tid) {
      const auto found = known.find(tid);
      return found == known.end() ? PreempterFacts{} : found->second;
    });
  }
  void enter(std::uint64_t at, std::size_t source, int number = 0) {
    event(at, PairingRole::entry, source, number);
  }
  void leave(std::uint64_t at, std::size_t source, int number = 0) {
    event(at, PairingRole::exit, source, number);
  }
  // prev_state 0x100: "R+", preempted; 1: sleeping (S).
  void switch_to(std::uint64_t at, int prev, int next, std::string name, std::int64_t prev_state = 0x100) {
    TraceEvent e;
    e.cpu = kWatched;
    e.time_ns = at;
    e.prev_tid = prev;
    e.number = next;
    e.name = std::move(name);
    e.value = prev_state;
    pairing.add(e, PairingTracepoint{PairingRole::sched_switch, 0}, [&](int tid) {
      const auto found = known.find(tid);
      return found == known.end() ? PreempterFacts{} : found->second;
    });
  }
  PairedReading take() { return pairing.take_reading(); }
};

const PairedCpuFigures& watched(const PairedReading& r) {
  REQUIRE(r.cpus.size() == 1);
  return r.cpus[0];
}

}  // namespace

TEST_CASE("one interruption is booked at its length, in its log2 bucket", "[trace_pairing]") {
  PairingFixture f;
  f.enter(1'000, JD_SRC_LOCAL_TIMER, 236);
  f.leave(4'000, JD_SRC_LOCAL_TIMER, 236);
  const PairedReading r = f.take();
  const auto& timer = watched(r).sources[JD_SRC_LOCAL_TIMER];
  CHECK(timer.count == 1);
  CHECK(timer.ns == 3'000);
  CHECK(timer.max_ns == 3'000);
  CHECK(timer.buckets[11] == 1);  // 2048 <= 3000 < 4096
  CHECK(r.outliers.empty());      // under the 10 us threshold
}

TEST_CASE("nested time counts once, as the innermost's, and device IRQs keep their name", "[trace_pairing]") {
  PairingFixture f;
  TraceEvent irq;
  f.enter(0, JD_SRC_SOFTIRQ_FIRST, 3);  // NET_RX
  irq.cpu = kWatched;
  irq.time_ns = 100;
  irq.number = 36;
  irq.name = "virtio0-input.0-with-a-long-name";
  f.pairing.add(irq, {PairingRole::entry, JD_SRC_DEVICE_IRQ}, [](int) { return PreempterFacts{}; });
  f.leave(20'100, JD_SRC_DEVICE_IRQ, 36);
  f.leave(21'000, JD_SRC_SOFTIRQ_FIRST, 3);
  const PairedReading r = f.take();
  const PairedCpuFigures& c = watched(r);
  CHECK(c.sources[JD_SRC_DEVICE_IRQ].ns == 20'000);
  CHECK(c.sources[JD_SRC_SOFTIRQ_FIRST + 3].ns == 1'000);  // 21,000 less the IRQ's 20,000
  REQUIRE(c.device_irqs.count(36) == 1);
  CHECK(c.device_irqs.at(36).count == 1);
  CHECK(c.device_irqs.at(36).ns == 20'000);
  REQUIRE(r.outliers.size() == 1);
  CHECK(r.outliers[0].source == JD_SRC_DEVICE_IRQ);
  CHECK(r.outliers[0].id == 36);
  CHECK(r.outliers[0].name == "virtio0-input.0");  // 15 characters, as the kernel's copy
  CHECK(r.outliers[0].start_ns == 100);
  CHECK(r.outliers[0].end_ns == 20'100);
}

TEST_CASE("an NMI inside a frame is its own, and a call-function IPI that flushed the TLB is tlb",
          "[trace_pairing]") {
  PairingFixture f;
  f.enter(0, JD_SRC_CALL_FUNCTION, 252);
  f.event(500, PairingRole::nmi, JD_SRC_NMI, 0, 300);
  f.event(600, PairingRole::tlb_flush, 0, 1);  // TLB_REMOTE_SHOOTDOWN
  f.leave(2'000, JD_SRC_CALL_FUNCTION, 252);
  f.enter(3'000, JD_SRC_CALL_FUNCTION_SINGLE, 251);
  f.event(3'100, PairingRole::tlb_flush, 0, 0);  // a local flush: not a shootdown
  f.leave(4'000, JD_SRC_CALL_FUNCTION_SINGLE, 251);
  const PairedCpuFigures c = watched(f.take());
  CHECK(c.sources[JD_SRC_NMI].count == 1);
  CHECK(c.sources[JD_SRC_NMI].ns == 300);
  CHECK(c.sources[JD_SRC_TLB].count == 1);
  CHECK(c.sources[JD_SRC_TLB].ns == 1'700);
  CHECK(c.sources[JD_SRC_CALL_FUNCTION].count == 0);
  CHECK(c.sources[JD_SRC_CALL_FUNCTION_SINGLE].count == 1);
}

TEST_CASE(
    "a preemption lasts from the switch away to the switch back, less the interrupts meanwhile, "
    "booked to the class of the task that took the CPU",
    "[trace_pairing]") {
  PairingFixture f;
  f.known[200] = {200, false, false};  // a stray process
  f.known[300] = {0, true, true};      // a per-CPU kernel thread
  f.known[400] = {555, false, false};  // one of jitterd's threads
  f.switch_to(10'000, kApp, 200, "noise_injector");
  f.enter(12'000, JD_SRC_LOCAL_TIMER);
  f.leave(13'000, JD_SRC_LOCAL_TIMER);
  f.switch_to(60'000, 200, kApp, "busyapp");
  f.switch_to(70'000, kApp, 300, "ksoftirqd/3");
  f.switch_to(75'000, 300, kApp, "busyapp");
  f.switch_to(80'000, kApp, 400, "jitterd-watch");
  f.switch_to(81'000, 400, kApp, "busyapp");
  f.switch_to(90'000, kApp, kApp + 1, "busyapp-2");
  f.switch_to(91'000, kApp + 1, kApp, "busyapp", 1);    // the other thread sleeps: not counted itself
  f.switch_to(95'000, kApp, 200, "noise_injector", 1);  // the application sleeps: voluntary
  f.switch_to(99'000, 200, kApp, "busyapp");
  const PairedReading r = f.take();
  const PairedCpuFigures& c = watched(r);
  CHECK(c.sources[JD_SRC_PREEMPT_STRAY].count == 1);
  CHECK(c.sources[JD_SRC_PREEMPT_STRAY].ns == 49'000);  // 50 us less the 1 us timer
  CHECK(c.sources[JD_SRC_PREEMPT_KERNEL_PERCPU].ns == 5'000);
  CHECK(c.sources[JD_SRC_PREEMPT_JITTERD].ns == 1'000);
  CHECK(c.sources[JD_SRC_PREEMPT_APPLICATION].ns == 1'000);
  REQUIRE(r.outliers.size() == 1);
  const auto& o = r.outliers[0];
  CHECK(o.source == JD_SRC_PREEMPT_STRAY);
  CHECK(o.name == "noise_injector");
  CHECK(o.id == 200);
  CHECK(o.tgid == 200);
  CHECK(o.start_ns == 10'000);
  CHECK(o.end_ns == 60'000);
  CHECK(o.duration_ns == 49'000);
}

TEST_CASE("a task gone before the reader asked is a stray", "[trace_pairing]") {
  PairingFixture f;
  f.switch_to(0, kApp, 777, "short-lived");
  f.switch_to(20'000, 777, kApp, "busyapp");
  const PairedReading r = f.take();
  CHECK(watched(r).sources[JD_SRC_PREEMPT_STRAY].count == 1);
  REQUIRE(r.outliers.size() == 1);
  CHECK(r.outliers[0].tgid == 0);
}

TEST_CASE("the idle task (pid 0, in no /proc) is a per-CPU kernel thread, as the BPF program finds it",
          "[trace_pairing]") {
  PairingFixture f;  // `known` has no pid 0: were it asked, the idle task would be a stray
  f.switch_to(0, kApp, 0, "swapper/3");
  f.switch_to(20'000, 0, kApp, "busyapp");
  CHECK(watched(f.take()).sources[JD_SRC_PREEMPT_KERNEL_PERCPU].count == 1);
}

TEST_CASE("a mark (an entry whose exit perf refuses) books nothing and is a record of length 0 where wanted",
          "[trace_pairing]") {
  PairingFixture f;
  f.event(1'000, PairingRole::mark, JD_SRC_IRQ_WORK, 246);  // no records wanted yet: nothing kept
  f.pairing.want_records(kWatched, 2'000);
  f.event(5'000, PairingRole::mark, JD_SRC_IRQ_WORK, 246);
  const jitterd::PairedRecords records = f.pairing.take_records(kWatched);
  REQUIRE(records.events.size() == 1);
  CHECK(records.events[0].source == JD_SRC_IRQ_WORK);
  CHECK(records.events[0].start_ns == 5'000);
  CHECK(records.events[0].end_ns == 5'000);
  CHECK(records.events[0].duration_ns == 0);
  const PairedReading r = f.take();
  CHECK(watched(r).sources[JD_SRC_IRQ_WORK].count == 0);  // no length: the figures leave it out
  CHECK(r.outliers.empty());
}

TEST_CASE("exits without their entry, lost records and a switch inside a frame start the CPU afresh",
          "[trace_pairing]") {
  PairingFixture f;
  f.leave(100, JD_SRC_LOCAL_TIMER);  // the recording began mid-interrupt
  f.enter(200, JD_SRC_RESCHEDULE);
  f.leave(300, JD_SRC_LOCAL_TIMER);  // not what was entered: an entry was lost
  f.enter(400, JD_SRC_LOCAL_TIMER);
  f.switch_to(500, 1, 2, "other", 1);  // no switch happens inside an interrupt
  f.enter(600, JD_SRC_LOCAL_TIMER);
  f.pairing.lost(kWatched, 5);
  f.leave(700, JD_SRC_LOCAL_TIMER);
  const PairedCpuFigures c = watched(f.take());
  CHECK(c.unmatched_exits == 4);
  CHECK(c.outliers_lost == 5);
  CHECK(c.sources[JD_SRC_LOCAL_TIMER].count == 0);
  CHECK(c.sources[JD_SRC_RESCHEDULE].count == 0);
}

// Each frame a kind that may nest in the one below (PREEMPT_RT: a vector in a threaded device IRQ
// handler, a device IRQ's entry in a vector's frame is kept as well).
std::size_t nesting_source(std::uint64_t i) { return i % 2 == 0 ? JD_SRC_DEVICE_IRQ : JD_SRC_LOCAL_TIMER; }

TEST_CASE("nesting beyond the stack is counted, and the frames below it still pair", "[trace_pairing]") {
  PairingFixture f;
  const std::uint64_t depth = jitterd::kMaxPairingDepth + 1;
  for (std::uint64_t i = 0; i < depth; ++i) f.enter(i * 10, nesting_source(i));
  for (std::uint64_t i = depth; i-- > 0;) f.leave(1'000 + (depth - i) * 10, nesting_source(i));
  const PairedCpuFigures c = watched(f.take());
  CHECK(c.too_deep == 1);
  CHECK(c.sources[JD_SRC_LOCAL_TIMER].count + c.sources[JD_SRC_DEVICE_IRQ].count == jitterd::kMaxPairingDepth);
  CHECK(c.unmatched_exits == 0);
}

TEST_CASE("an entry of a kind that cannot nest in the frame on top ends that frame as an exit lost",
          "[trace_pairing]") {
  PairingFixture f;
  // The recording starts: perf installs each event with a function-call IPI to the CPU, whose
  // entry is recorded before its exit's event exists.
  for (std::uint64_t i = 0; i < 20; ++i) f.enter(i * 100, JD_SRC_CALL_FUNCTION_SINGLE);
  f.enter(5'000, JD_SRC_LOCAL_TIMER);
  f.leave(6'000, JD_SRC_LOCAL_TIMER);
  f.enter(7'000, JD_SRC_SOFTIRQ_FIRST, 1);  // TIMER softirq
  f.enter(7'500, JD_SRC_SOFTIRQ_FIRST, 9);  // RCU cannot run inside it: TIMER lost its exit
  f.leave(8'000, JD_SRC_SOFTIRQ_FIRST, 9);
  f.enter(9'000, JD_SRC_SOFTIRQ_FIRST, 1);
  f.enter(9'100, JD_SRC_LOCAL_TIMER);  // a vector in a softirq: nests
  f.leave(9'300, JD_SRC_LOCAL_TIMER);
  f.leave(10'000, JD_SRC_SOFTIRQ_FIRST, 1);
  const PairedCpuFigures c = watched(f.take());
  CHECK(c.too_deep == 0);
  CHECK(c.unmatched_exits == 21);  // 20 IPIs and the first TIMER softirq
  CHECK(c.sources[JD_SRC_LOCAL_TIMER].count == 2);
  CHECK(c.sources[JD_SRC_LOCAL_TIMER].ns == 1'200);
  CHECK(c.sources[JD_SRC_SOFTIRQ_FIRST + 9].ns == 500);
  CHECK(c.sources[JD_SRC_SOFTIRQ_FIRST + 1].count == 1);
  CHECK(c.sources[JD_SRC_SOFTIRQ_FIRST + 1].ns == 800);  // 1,000 less the nested timer's 200
}

TEST_CASE("tick-stop failures count by their highest dependency bit", "[trace_pairing]") {
  PairingFixture f;
  f.event(0, PairingRole::tick_stop, 0, 0, 4);       // SCHED
  f.event(1, PairingRole::tick_stop, 0, 0, 4 | 1);   // SCHED and POSIX_TIMER: the highest
  f.event(2, PairingRole::tick_stop, 0, 0, 0);       // no bit
  f.event(3, PairingRole::tick_stop, 0, 0, 1 << 9);  // beyond the eight kept
  f.event(4, PairingRole::tick_stop, 0, 1, 4);       // success: not a failure
  const PairedCpuFigures c = watched(f.take());
  CHECK(c.tick_stop_failures[2] == 2);
  CHECK(c.tick_stop_failures_unknown == 2);
}

TEST_CASE("figures are cumulative, outliers are taken once and bounded per reading, other CPUs are ignored",
          "[trace_pairing]") {
  PairingFixture f;
  for (std::uint64_t i = 0; i < jitterd::kMaxOutliersPerReading + 5; ++i) {
    f.enter(i * 100'000, JD_SRC_LOCAL_TIMER);
    f.leave(i * 100'000 + 20'000, JD_SRC_LOCAL_TIMER);
  }
  f.enter(0, JD_SRC_LOCAL_TIMER, 0);
  f.event(1, PairingRole::exit, JD_SRC_LOCAL_TIMER, 0, 0, kWatched + 1);  // another CPU's exit
  const PairedReading first = f.take();
  CHECK(first.outliers.size() == jitterd::kMaxOutliersPerReading);
  CHECK(first.outliers_dropped == 5);
  f.leave(30'000, JD_SRC_LOCAL_TIMER);
  const PairedReading second = f.take();
  CHECK(second.outliers.size() == 1);
  CHECK(second.outliers_dropped == 0);
  CHECK(watched(second).sources[JD_SRC_LOCAL_TIMER].count == jitterd::kMaxOutliersPerReading + 6);
  CHECK(watched(second).unmatched_exits == 0);
}

TEST_CASE("records: a CPU's interruptions down to the threshold wanted, besides the outliers, taken once",
          "[trace_pairing]") {
  PairingFixture f;
  CHECK(f.pairing.take_records(kWatched).events.empty());  // none wanted yet
  f.enter(1'000, JD_SRC_LOCAL_TIMER);
  f.leave(4'000, JD_SRC_LOCAL_TIMER);  // 3 us: under both thresholds but the one wanted next
  CHECK(f.pairing.take_records(kWatched).events.empty());
  f.pairing.want_records(kWatched, 2'000);
  f.pairing.want_records(kWatched, 5'000);      // a second loop's: the lower threshold holds
  f.pairing.want_records(kWatched + 1, 2'000);  // not a CPU of the pairing: nothing kept
  f.enter(10'000, JD_SRC_LOCAL_TIMER);
  f.leave(11'000, JD_SRC_LOCAL_TIMER);  // 1 us: under the records' threshold
  f.enter(20'000, JD_SRC_LOCAL_TIMER, 236);
  f.leave(23'000, JD_SRC_LOCAL_TIMER, 236);  // 3 us: a record, not an outlier
  f.known[200] = {200, false, false};
  f.switch_to(30'000, kApp, 200, "noise_injector");
  f.switch_to(60'000, 200, kApp, "busyapp");  // 30 us: a record and an outlier
  const jitterd::PairedRecords records = f.pairing.take_records(kWatched);
  REQUIRE(records.events.size() == 2);
  CHECK(records.events[0].source == JD_SRC_LOCAL_TIMER);
  CHECK(records.events[0].start_ns == 20'000);
  CHECK(records.events[0].duration_ns == 3'000);
  CHECK(records.events[1].source == JD_SRC_PREEMPT_STRAY);
  CHECK(records.events[1].name == "noise_injector");
  CHECK(records.events[1].duration_ns == 30'000);
  CHECK(records.dropped == 0);
  CHECK(f.pairing.take_records(kWatched).events.empty());  // taken once
  CHECK(f.pairing.take_records(kWatched + 1).events.empty());
  const PairedReading r = f.take();  // the outliers keep the pairing's own threshold
  REQUIRE(r.outliers.size() == 1);
  CHECK(r.outliers[0].source == JD_SRC_PREEMPT_STRAY);
}

TEST_CASE("records are bounded per CPU between two takes: the oldest go, counted", "[trace_pairing]") {
  PairingFixture f;
  f.pairing.want_records(kWatched, 500);
  const std::uint64_t n = jitterd::kMaxSampledEventsPerCpu + 3;
  for (std::uint64_t i = 0; i < n; ++i) {
    f.enter(i * 10'000, JD_SRC_LOCAL_TIMER);
    f.leave(i * 10'000 + 1'000, JD_SRC_LOCAL_TIMER);
  }
  const jitterd::PairedRecords records = f.pairing.take_records(kWatched);
  CHECK(records.events.size() == jitterd::kMaxSampledEventsPerCpu);
  CHECK(records.dropped == 3);
  CHECK(records.events.front().start_ns == 3 * 10'000);  // the three oldest went
  CHECK(f.pairing.take_records(kWatched).dropped == 0);
}
