// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <thread>
#include <vector>

#include "measure/counter_calibration.h"
#include "measure/sampler_loop.h"
#include "measure/tick_scale.h"

using namespace jitterd;

namespace {
// 64 slots of 2^24 ticks: at least 0.27 s of window-max history at any counter rate up to 4 GHz,
// longer than any span below, so no slot a test reads has been reused.
SamplerShared make_shared_state() { return SamplerShared(64, 1u << 24, 64); }

template <TickMethod M>
void run_for(SamplerShared& shared, SamplerWriterState& state, std::uint64_t threshold, std::uint64_t ticks) {
  std::atomic<bool> stop{false};
  CHECK(run_sampler_span<M>(shared, state, threshold, read_ticks<M>() + ticks, stop, kAnyCpu));
}
}  // namespace

TEST_CASE("a span's gaps add up: histogram total = samples, sum = sampled ticks", "[sampler]") {
  const TickMethod method = default_tick_method();
  const CounterFrequency f = counter_frequency(method, std::chrono::milliseconds(50));
  const TickScale scale(f.hertz);
  SamplerShared shared = make_shared_state();
  SamplerWriterState state;
  const std::uint64_t span = scale.from_ns(50'000'000);
  std::uint64_t before = 0, after = 0;
  dispatch_tick_method(method, [&]<TickMethod M>() {
    before = read_ticks<M>();
    run_for<M>(shared, state, std::numeric_limits<std::uint64_t>::max(), span);
    after = read_ticks<M>();
  });
  HistogramSnapshot s;
  shared.histogram.snapshot(s);
  CHECK(s.total() == state.samples);
  CHECK(shared.samples.load() == state.samples);
  CHECK(shared.sampled_ticks.load() == state.sampled_ticks);
  CHECK(state.samples % kSamplerCheckEvery == 0);
  // The span ends only after its end tick, and its gaps fit inside the reads around it
  // (no bound on how long past the end: the thread may be preempted).
  CHECK(after - before >= span);
  CHECK(state.sampled_ticks <= after - before);
  CHECK(state.sampled_ticks > 0);
  CHECK(state.min_gap <= state.max_gap);
  CHECK(shared.max_gap.load() == state.max_gap);
  CHECK(shared.interruption_count.load() == 0);
  // The exact max is held by the window-max slots too.
  CHECK(shared.window_max.max_between(0, read_ticks(method)) == state.max_gap);
}

TEST_CASE("gaps at or above the threshold are interruptions, with their duration", "[sampler]") {
  const TickMethod method = default_tick_method();
  SamplerShared shared = make_shared_state();
  SamplerWriterState state;
  // Threshold 0: every gap is an interruption, so the books must agree exactly.
  dispatch_tick_method(method, [&]<TickMethod M>() { run_for<M>(shared, state, 0, 1'000'000); });
  CHECK(state.interruption_count == state.samples);
  CHECK(state.interrupted_ticks == state.sampled_ticks);
  const auto kept = shared.interruptions.copy_since(0);
  CHECK(kept.size() == std::min<std::size_t>(64, state.samples));
  for (std::size_t i = 1; i < kept.size(); ++i) {
    CHECK(kept[i].start_tick == kept[i - 1].start_tick + kept[i - 1].duration_ticks);
  }
}

TEST_CASE("a stop request ends a span and spans accumulate", "[sampler][concurrency]") {
  SamplerShared shared = make_shared_state();
  SamplerWriterState state;
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.store(true);
  });
  dispatch_tick_method(default_tick_method(), [&]<TickMethod M>() {
    CHECK(run_sampler_span<M>(shared, state, std::numeric_limits<std::uint64_t>::max(),
                              std::numeric_limits<std::uint64_t>::max(), stop, kAnyCpu));
  });
  stopper.join();
  const auto first = state.samples;
  CHECK(first > 0);
  stop.store(false);
  dispatch_tick_method(default_tick_method(), [&]<TickMethod M>() {
    run_for<M>(shared, state, std::numeric_limits<std::uint64_t>::max(), 100'000);
  });
  CHECK(state.samples > first);
  HistogramSnapshot s;
  shared.histogram.snapshot(s);
  CHECK(s.total() == state.samples);
}

TEST_CASE("housekeeping reads while the sampler writes", "[sampler][concurrency]") {
  SamplerShared shared = make_shared_state();
  SamplerWriterState state;
  std::atomic<bool> stop{false};
  std::thread sampler([&] {
    dispatch_tick_method(default_tick_method(), [&]<TickMethod M>() {
      static_cast<void>(
          run_sampler_span<M>(shared, state, 0, std::numeric_limits<std::uint64_t>::max(), stop, kAnyCpu));
    });
  });
  // Read only once the sampler is writing: a loaded machine may otherwise run every read before
  // the sampler thread first runs. Bounded, so a sampler that never runs fails instead of hanging.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (shared.samples.load() == 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  CHECK(shared.samples.load() > 0);
  HistogramSnapshot s;
  std::uint64_t last_samples = 0;
  for (int i = 0; i < 200; ++i) {
    shared.histogram.snapshot(s);
    const auto samples = shared.samples.load(std::memory_order_relaxed);
    CHECK(samples >= last_samples);
    last_samples = samples;
    (void)shared.interruptions.copy_since(0);
    (void)shared.window_max.max_between(0, std::numeric_limits<std::uint64_t>::max() - 1);
  }
  stop.store(true);
  sampler.join();
  shared.histogram.snapshot(s);
  CHECK(s.total() == state.samples);
}

TEST_CASE("the interruption ring keeps the newest entries in order", "[sampler]") {
  InterruptionRing ring(4);
  for (std::uint64_t i = 1; i <= 10; ++i) ring.push(i * 100, i);
  CHECK(ring.pushed() == 10);
  const auto kept = ring.copy_since(0);
  REQUIRE(kept.size() == 4);
  CHECK(kept.front().start_tick == 700);
  CHECK(kept.back().duration_ticks == 10);
  CHECK(ring.copy_since(9).size() == 1);
  CHECK(ring.copy_since(10).empty());
}

TEST_CASE("window max keeps an exact max per slot and forgets slots beyond its memory", "[sampler]") {
  WindowMax w(100, 4);
  w.publish(10, 5);
  w.publish(50, 9);
  w.publish(150, 3);
  CHECK(w.max_between(0, 99) == 9);
  CHECK(w.max_between(100, 199) == 3);
  CHECK(w.max_between(0, 199) == 9);
  w.publish(550, 1);  // slot 5 reuses slot 1's storage; slot 0 and 1 are gone
  CHECK(w.max_between(0, 599) == 1);
  CHECK(w.max_between(500, 599) == 1);
}

TEST_CASE("each architecture defaults to its ordered counter read and states the frequency source", "[sampler]") {
  const CounterFrequency f = counter_frequency(default_tick_method(), std::chrono::milliseconds(20));
#if defined(__x86_64__)
  CHECK(default_tick_method() == TickMethod::lfence_rdtsc);
  CHECK(f.source == "calibrated_monotonic_raw");
#elif defined(__aarch64__)
  CHECK(default_tick_method() == TickMethod::cntvct);
  CHECK(f.source == "cntfrq_el0");
#else
  CHECK(default_tick_method() == TickMethod::steady_clock);
#endif
  CHECK(f.hertz > 1e6);
  // Whatever the source, the counter must advance at the stated rate against the kernel's clock.
  const CounterFrequency measured =
      calibrate_against_monotonic_raw(default_tick_method(), std::chrono::milliseconds(50));
  CHECK(measured.hertz == Approx(f.hertz).epsilon(0.01));
}

TEST_CASE("interruption ring: a copy names the sequence it stopped at", "[sampler]") {
  jitterd::InterruptionRing ring(4);
  for (std::uint64_t i = 0; i < 6; ++i) ring.push(100 + i, 1);
  std::uint64_t end = 0;
  const auto kept = ring.copy_since(3, &end);
  CHECK(end == 6);
  REQUIRE(kept.size() == 3);  // sequences 3, 4, 5: the ones just below `end`
  CHECK(kept.front().start_tick == 103);
  CHECK(ring.copy_since(0, &end).size() == 4);  // 0 and 1 were overwritten
  CHECK(end == 6);
}

namespace {
// A tick source that replays a script: read k returns ticks[k]; past the end it keeps stepping
// by the last step, so a loop waiting for end_tick always gets there.
struct ScriptedTicks {
  std::vector<std::uint64_t> ticks;
  std::size_t reads = 0;
  std::uint64_t operator()() {
    const std::uint64_t value = reads < ticks.size() ? ticks[reads]
                                                     : ticks.back() + (reads - ticks.size() + 1) *
                                                                          (ticks.back() - ticks[ticks.size() - 2]);
    ++reads;
    return value;
  }
};
}  // namespace

TEST_CASE("scripted ticks: every gap is recorded once, the bookkeeping gap included, and none is invented",
          "[sampler]") {
  // 3 check blocks of kSamplerCheckEvery gaps: steps of 7 ticks, with an interruption of 5000
  // ticks as gap 100 and one of 9000 as the gap right after the first bookkeeping block.
  const std::size_t gaps = 3 * kSamplerCheckEvery;
  ScriptedTicks script;
  std::uint64_t t = 1'000'000;
  script.ticks.push_back(t);
  for (std::size_t g = 1; g <= gaps; ++g) {
    t += g == 100 ? 5000 : g == kSamplerCheckEvery + 1 ? 9000 : 7;
    script.ticks.push_back(t);
  }
  SamplerShared shared(16, 1'000'000, 8);
  SamplerWriterState state;
  std::atomic<bool> stop{false};
  CHECK(run_sampler_loop(shared, state, 1000, t, stop, std::ref(script), [] { return true; }));
  // One read starts the span and one read ends each gap: the bookkeeping reads nothing itself.
  CHECK(script.reads == gaps + 1);
  HistogramSnapshot snapshot;
  shared.histogram.snapshot(snapshot);
  CHECK(snapshot.total() == gaps);
  CHECK(state.samples == gaps);
  CHECK(state.sampled_ticks == t - script.ticks.front());
  CHECK(shared.sampled_ticks.load() == t - script.ticks.front());
  CHECK(shared.interruption_count.load() == 2);
  CHECK(shared.interrupted_ticks.load() == 14000);
  const auto kept = shared.interruptions.copy_since(0);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].start_tick == script.ticks[99]);
  CHECK(kept[0].duration_ticks == 5000);
  // The gap after a bookkeeping block is the script's gap, not the script's plus anything.
  CHECK(kept[1].start_tick == script.ticks[kSamplerCheckEvery]);
  CHECK(kept[1].duration_ticks == 9000);
  CHECK(state.min_gap == 7);
  CHECK(shared.max_gap.load() == 9000);
  CHECK(shared.window_max.max_between(0, t) == 9000);
  CHECK(shared.heartbeat_tick.load() == t);
}

namespace {
// Steps of 7 ticks with one gap of `long_gap` ticks as gap number `long_at` (1-based).
ScriptedTicks steps_with_one_long_gap(std::size_t gaps, std::size_t long_at, std::uint64_t long_gap) {
  ScriptedTicks script;
  std::uint64_t t = 1'000'000;
  script.ticks.push_back(t);
  for (std::size_t g = 1; g <= gaps; ++g) script.ticks.push_back(t += g == long_at ? long_gap : 7);
  return script;
}
}  // namespace

TEST_CASE("scripted migration: the gap that moved the thread is not recorded and the span ends", "[sampler]") {
  // The thread leaves its CPU during gap 1500 (an interruption of 50000 ticks): that gap and every
  // later one belong to another CPU.
  ScriptedTicks script = steps_with_one_long_gap(3 * kSamplerCheckEvery, 1500, 50'000);
  SamplerShared shared(16, 1'000'000, 8);
  SamplerWriterState state;
  std::atomic<bool> stop{false};
  std::size_t cpu_checks = 0;
  const auto on_cpu = [&] {
    ++cpu_checks;
    return script.reads <= 1500;  // read number 1501 ends gap 1500
  };
  CHECK_FALSE(run_sampler_loop(shared, state, 1000, script.ticks.back(), stop, std::ref(script), on_cpu));
  CHECK(script.reads == 1501);
  CHECK(cpu_checks == 2);  // the check after gap 1024 and the long gap
  HistogramSnapshot snapshot;
  shared.histogram.snapshot(snapshot);
  CHECK(snapshot.total() == 1499);
  CHECK(state.samples == 1499);
  CHECK(state.sampled_ticks == 1499 * 7);
  CHECK(shared.samples.load() == 1499);  // published on the way out, though between two checks
  CHECK(shared.sampled_ticks.load() == 1499 * 7);
  CHECK(shared.interruption_count.load() == 0);
  CHECK(shared.max_gap.load() == 7);
}

TEST_CASE("scripted migration seen at a check: the span ends there, with what it measured", "[sampler]") {
  // A threshold too high for the migration's gap: the check after gap 2048 finds the thread gone.
  ScriptedTicks script = steps_with_one_long_gap(3 * kSamplerCheckEvery, 2000, 50'000);
  SamplerShared shared(16, 1'000'000, 8);
  SamplerWriterState state;
  std::atomic<bool> stop{false};
  const auto on_cpu = [&] { return script.reads <= 2000; };
  CHECK_FALSE(run_sampler_loop(shared, state, 1'000'000, script.ticks.back(), stop, std::ref(script), on_cpu));
  CHECK(script.reads == 2 * kSamplerCheckEvery + 1);
  CHECK(state.samples == 2 * kSamplerCheckEvery);
  CHECK(shared.samples.load() == 2 * kSamplerCheckEvery);
  CHECK(shared.max_gap.load() == 50'000);
}

TEST_CASE("window max: the writer's fast path keeps the slot's exact max, and a new slot starts clean",
          "[sampler]") {
  WindowMax w(100, 4);
  for (std::uint64_t now = 200; now < 300; now += 10) w.publish(now, now == 250 ? 42 : 1);
  CHECK(w.max_between(200, 299) == 42);
  w.publish(300, 2);  // the next slot: its own max, the previous one kept
  CHECK(w.max_between(300, 399) == 2);
  CHECK(w.max_between(200, 399) == 42);
  w.publish(399, 5);
  w.publish(400, 1);
  CHECK(w.max_between(300, 399) == 5);
  CHECK(w.max_between(400, 499) == 1);
  w.publish(350, 7);  // a tick before the cached slot (another span) takes the slow path
  CHECK(w.max_between(300, 399) == 7);
  CHECK(w.max_between(400, 499) == 1);
  WindowMax last(100, 4);
  last.publish(std::numeric_limits<std::uint64_t>::max(), 3);
  CHECK(last.max_between(0, std::numeric_limits<std::uint64_t>::max()) == 3);
}

TEST_CASE("publish_cycles/read_cycles: a reader never pairs one read's actual cycles with another's reference",
          "[sampler_loop][concurrency]") {
  SamplerShared shared = make_shared_state();
  CHECK_FALSE(read_cycles(shared));  // never published
  publish_cycles(shared, 3, 6);
  CHECK(read_cycles(shared) == std::pair<std::uint64_t, std::uint64_t>(3, 6));
  // The writer publishes pairs (n, 2n) as fast as it can; each pair read must be one of them.
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint64_t n = 4; n < 200'000; ++n) publish_cycles(shared, n, 2 * n);
    done = true;
  });
  std::uint64_t reads = 0, torn = 0, last = 0, backwards = 0, gave_up = 0;
  while (!done.load() || reads == 0) {
    const auto pair = read_cycles(shared);
    ++reads;
    if (!pair) {  // the writer descheduled mid-publication for all the reader's tries (under qemu, say)
      ++gave_up;
      continue;
    }
    if (pair->second != 2 * pair->first) ++torn;
    if (pair->first < last) ++backwards;
    last = pair->first;
  }
  writer.join();
  CHECK(torn == 0);
  CHECK(backwards == 0);
  CHECK(gave_up < reads);
  CHECK(read_cycles(shared)->first == 199'999);
}
