#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <limits>
#include <thread>

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
  run_sampler_span<M>(shared, state, threshold, read_ticks<M>() + ticks, stop);
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

TEST_CASE("a stop request ends a span and spans accumulate", "[sampler]") {
  SamplerShared shared = make_shared_state();
  SamplerWriterState state;
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.store(true);
  });
  dispatch_tick_method(default_tick_method(), [&]<TickMethod M>() {
    run_sampler_span<M>(shared, state, std::numeric_limits<std::uint64_t>::max(),
                        std::numeric_limits<std::uint64_t>::max(), stop);
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

TEST_CASE("housekeeping reads while the sampler writes", "[sampler]") {
  SamplerShared shared = make_shared_state();
  SamplerWriterState state;
  std::atomic<bool> stop{false};
  std::thread sampler([&] {
    dispatch_tick_method(default_tick_method(), [&]<TickMethod M>() {
      run_sampler_span<M>(shared, state, 0, std::numeric_limits<std::uint64_t>::max(), stop);
    });
  });
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
