// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "measure/counter_calibration.h"
#include "measure/ping_pong.h"
#include "measure/tick_scale.h"
#include "tick_helpers.h"

using namespace jitterd;

namespace {

using jitterd::testing::ticks_for;

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

bool pin_this_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

std::uint64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since).count());
}

// Waits until `count` sides have checked in at the start barrier, for at most 30 s.
void wait_for_check_in(const PingPongLines& lines, int count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (lines.ready.load() < count && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
}

}  // namespace

TEST_CASE("to_string names both methods", "[ping_pong]") {
  CHECK(to_string(PingPongMethod::cas) == "cas");
  CHECK(to_string(PingPongMethod::two_lines) == "two_lines");
}

TEST_CASE("one_way_latency drops the warm-up and halves each round trip", "[ping_pong]") {
  // Warm-up 1'000'000 is ignored; the rest are 10 samples of 4 round trips: 8 one-way legs each.
  const std::vector<std::uint64_t> ticks = {1'000'000, 800, 160, 240, 400, 320, 480, 560, 640, 720, 80};
  const OneWayLatency l = one_way_latency(ticks, 4);
  CHECK(l.samples == 10);
  // One-way values, sorted: 10 20 30 40 50 60 70 80 90 100.
  CHECK(l.min_ticks == 10.0);
  CHECK(l.p10_ticks == 10.0);     // rank ceil(1.0) = 1
  CHECK(l.median_ticks == 50.0);  // rank 5
  CHECK(l.p90_ticks == 90.0);     // rank 9
  CHECK(l.sum_ticks == 550.0);
}

TEST_CASE("one_way_latency keeps fractions of a tick", "[ping_pong]") {
  const OneWayLatency l = one_way_latency({7, 3, 5, 1}, 2);  // one-way: 0.75 1.25 0.25
  CHECK(l.samples == 3);
  CHECK(l.min_ticks == 0.25);
  CHECK(l.p10_ticks == 0.25);     // rank ceil(0.3) = 1
  CHECK(l.median_ticks == 0.75);  // rank ceil(1.5) = 2
  CHECK(l.p90_ticks == 1.25);     // rank ceil(2.7) = 3
  CHECK(l.sum_ticks == 2.25);
}

TEST_CASE("one_way_latency with nothing to summarise is all zero", "[ping_pong]") {
  for (const auto& ticks : {std::vector<std::uint64_t>{}, std::vector<std::uint64_t>{500}}) {
    const OneWayLatency l = one_way_latency(ticks, 10);
    CHECK(l.samples == 0);
    CHECK(l.min_ticks == 0);
    CHECK(l.median_ticks == 0);
    CHECK(l.p90_ticks == 0);
  }
  CHECK(one_way_latency({10, 20, 30}, 0).samples == 0);
  const OneWayLatency one = one_way_latency({999, 40}, 10);  // one timed sample: every rank is it
  CHECK(one.samples == 1);
  CHECK(one.min_ticks == 2.0);
  CHECK(one.p10_ticks == 2.0);
  CHECK(one.median_ticks == 2.0);
  CHECK(one.p90_ticks == 2.0);
}

TEST_CASE("make_ping_pong_lines gives each line its own 128-byte slot", "[ping_pong]") {
  const std::unique_ptr<PingPongLines> lines = make_ping_pong_lines();
  REQUIRE(lines != nullptr);
  const auto first = reinterpret_cast<std::uintptr_t>(&lines->first);
  const auto second = reinterpret_cast<std::uintptr_t>(&lines->second);
  const auto ready = reinterpret_cast<std::uintptr_t>(&lines->ready);
  CHECK(first % 128 == 0);
  CHECK(second % 128 == 0);
  CHECK(second - first >= 128);
  CHECK(ready / 64 != first / 64);
  CHECK(ready / 64 != second / 64);
  CHECK(lines->first.value.load() == 0);
  CHECK(lines->second.value.load() == 0);
  CHECK(lines->ready.load() == 0);
  CHECK_FALSE(lines->abort.load());
  // The node depends on the machine (and emulators often can't tell): log it, don't assert it.
  const std::optional<int> node = numa_node_of(&lines->first);
  if (node) {
    CHECK(*node >= 0);
    WARN("ping-pong lines on NUMA node " << *node);
  } else {
    WARN("ping-pong lines: the kernel does not report a NUMA node here");
  }
  CHECK_FALSE(numa_node_of(nullptr).has_value());
}

TEST_CASE("both methods measure a positive latency between two pinned CPUs", "[ping_pong][concurrency]") {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) {
    WARN("skipped: this process may run on only " << cpus.size() << " CPU(s); a pair needs two");
    return;
  }
  const TickMethod tick = default_tick_method();
  const std::uint64_t ticks_per_ms = ticks_for(tick, 1'000'000);
  for (const PingPongMethod method : {PingPongMethod::cas, PingPongMethod::two_lines}) {
    DYNAMIC_SECTION(to_string(method)) {
      PingPongSettings settings;
      settings.method = method;
      settings.samples = 30;
      settings.round_trips = 500;
      // A stall this long means a bug, not noise: fail instead of hanging the suite.
      settings.timeout_ticks = 10'000 * ticks_per_ms;
      std::unique_ptr<PingPongLines> lines;
      std::optional<std::vector<std::uint64_t>> ticks;
      bool pinned_a = false, pinned_b = false, responded = false;
      std::thread initiator([&] {
        pinned_a = pin_this_thread(cpus[0]);
        lines = make_ping_pong_lines();  // owner: the initiator's CPU
        std::thread responder([&] {
          pinned_b = pin_this_thread(cpus[1]);
          responded = ping_pong_responder(tick, *lines, settings);
        });
        ticks = ping_pong_initiator(tick, *lines, settings);
        responder.join();
      });
      initiator.join();
      CHECK(pinned_a);
      CHECK(pinned_b);
      CHECK(responded);
      REQUIRE(ticks.has_value());
      CHECK(ticks->size() == settings.samples + 1);
      CHECK_FALSE(lines->abort.load());
      const OneWayLatency l = one_way_latency(*ticks, settings.round_trips);
      CHECK(l.samples == settings.samples);
      CHECK(l.min_ticks > 0);
      CHECK(l.min_ticks <= l.p10_ticks);
      CHECK(l.p10_ticks <= l.median_ticks);
      CHECK(l.median_ticks <= l.p90_ticks);
      const double ns_per_tick = 1e6 / static_cast<double>(ticks_per_ms);
      WARN(to_string(method) << " CPU " << cpus[0] << " -> " << cpus[1] << " one-way ns: min "
                             << l.min_ticks * ns_per_tick << " p10 " << l.p10_ticks * ns_per_tick << " median "
                             << l.median_ticks * ns_per_tick << " p90 " << l.p90_ticks * ns_per_tick);
    }
  }
}

TEST_CASE("an initiator whose responder never comes gives up and sets abort", "[ping_pong]") {
  // steady_clock ticks are nanoseconds of the same clock the test reads, so "gave up no earlier
  // than the timeout" is a logical property of the code, not a timing assumption.
  const std::uint64_t timeout_ns = 50'000'000;
  for (const PingPongMethod method : {PingPongMethod::cas, PingPongMethod::two_lines}) {
    DYNAMIC_SECTION(to_string(method)) {
      const auto lines = make_ping_pong_lines();
      PingPongSettings settings;
      settings.method = method;
      settings.samples = 5;
      settings.round_trips = 10;
      settings.timeout_ticks = timeout_ns;
      const auto start = std::chrono::steady_clock::now();
      const auto ticks = ping_pong_initiator(TickMethod::steady_clock, *lines, settings);
      const std::uint64_t waited = elapsed_ns(start);
      CHECK_FALSE(ticks.has_value());
      CHECK(lines->abort.load());
      CHECK(waited >= timeout_ns);
      WARN(to_string(method) << ": initiator gave up after " << waited / 1'000'000 << " ms (timeout "
                             << timeout_ns / 1'000'000 << " ms)");
    }
  }
}

TEST_CASE("a responder alone gives up and sets abort", "[ping_pong]") {
  const auto lines = make_ping_pong_lines();
  PingPongSettings settings;
  settings.timeout_ticks = 20'000'000;
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(ping_pong_responder(TickMethod::steady_clock, *lines, settings));
  CHECK(elapsed_ns(start) >= settings.timeout_ticks);
  CHECK(lines->abort.load());
}

TEST_CASE("with no timeout, the other side's abort still ends the wait", "[ping_pong][concurrency]") {
  const auto lines = make_ping_pong_lines();
  PingPongSettings settings;  // timeout_ticks 0: only abort can end a wait
  bool responded = true;
  std::thread responder([&] { responded = ping_pong_responder(TickMethod::steady_clock, *lines, settings); });
  // Abort once the responder has checked in at the barrier and waits there (bounded, so a
  // responder that never runs still ends the test).
  wait_for_check_in(*lines, 1);
  lines->abort.store(true);
  responder.join();
  CHECK_FALSE(responded);
  CHECK_FALSE(ping_pong_initiator(TickMethod::steady_clock, *lines, settings).has_value());
}

TEST_CASE("a responder that stops early makes the initiator time out mid-run", "[ping_pong][concurrency]") {
  for (const PingPongMethod method : {PingPongMethod::cas, PingPongMethod::two_lines}) {
    DYNAMIC_SECTION(to_string(method)) {
      PingPongSettings settings;
      settings.method = method;
      settings.samples = 4;
      settings.round_trips = 50;
      settings.timeout_ticks = 1'000'000'000;
      PingPongSettings fewer = settings;
      fewer.samples = 1;        // answers 100 of the 250 pings, then leaves
      fewer.timeout_ticks = 0;  // never gives up by itself: only the initiator's abort could end it
      // A responder starved for the whole timeout in the middle of its 100 answers is aborted
      // before it leaves: the initiator still times out, but that is another case. Try again
      // (bounded) until the responder did leave by itself.
      bool responded = false;
      for (int attempt = 0; attempt < 5 && !responded; ++attempt) {
        const auto lines = make_ping_pong_lines();
        std::thread responder([&] { responded = ping_pong_responder(TickMethod::steady_clock, *lines, fewer); });
        // Start the initiator (and its timeout) once the responder has checked in, however late a
        // loaded machine runs the responder's thread.
        wait_for_check_in(*lines, 1);
        const auto ticks = ping_pong_initiator(TickMethod::steady_clock, *lines, settings);
        responder.join();
        CHECK_FALSE(ticks.has_value());
        CHECK(lines->abort.load());
      }
      CHECK(responded);
    }
  }
}
