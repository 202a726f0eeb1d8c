// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <sched.h>

#include <future>
#include <thread>

#include "measure/counter_calibration.h"
#include "measure/interruption_ring.h"
#include "measure/tick.h"
#include "sampling/sampler_set.h"
#include "sampling/sampler_worker.h"
#include "sampling/sampling_plan.h"

using namespace jitterd;
using namespace std::chrono_literals;

namespace {
SamplerSettings continuous_on(int cpu, const TickScale& scale) {
  SamplerSettings s;
  s.cpu = cpu;
  s.method = default_tick_method();
  s.scale = scale;
  s.continuous = true;
  s.warmup = 20ms;
  s.lock_memory = false;
  return s;
}
}  // namespace

TEST_CASE("a paused sampler runs the task on its CPU and records no gap for the pause",
          "[sampler_worker][concurrency]") {
  const int cpu = current_affinity().back();
  const TickScale scale(counter_frequency(default_tick_method(), 50ms).hertz);
  SamplerWorker worker(continuous_on(cpu, scale));
  worker.start();
  worker.wait_ready();
  worker.release();
  std::this_thread::sleep_for(50ms);
  const std::uint64_t sampled_before = worker.shared()->sampled_ticks.load();
  int ran_on = -1;
  std::uint64_t pause_from = 0, pause_to = 0;  // the pause, in the sampler's ticks
  worker
      .run_paused([&] {
        ran_on = sched_getcpu();
        pause_from = read_ticks(default_tick_method());
        std::this_thread::sleep_for(300ms);
        pause_to = read_ticks(default_tick_method());
      })
      .get();
  // Sampling goes on after the pause: wait for it (bounded) rather than for a fixed time, which a
  // loaded machine may spend without running the sampler.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (worker.shared()->sampled_ticks.load() <= sampled_before && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  worker.stop();
  CHECK(ran_on == cpu);
  // Sampling went on after the pause...
  CHECK(worker.shared()->sampled_ticks.load() > sampled_before);
  // ...and the pause itself is no gap: no interruption recorded holds the whole pause. (A loaded
  // machine gives the sampler gaps of its own, before or after the pause, as long as a real-time
  // task's throttling on its CPU, 950 ms: their length says nothing about the pause.)
  REQUIRE(pause_to > pause_from);
  for (const Interruption& gap : worker.shared()->interruptions.copy_since(0))
    CHECK_FALSE((gap.start_tick <= pause_from && gap.start_tick + gap.duration_ticks >= pause_to));
}

TEST_CASE("a sampler that has stopped refuses tasks instead of hanging", "[sampler_worker][concurrency]") {
  const TickScale scale(1e9);
  SamplerWorker worker(continuous_on(current_affinity().back(), scale));
  worker.start();
  worker.wait_ready();
  worker.release();
  worker.stop();
  auto refused = worker.run_paused([] {});
  REQUIRE(refused.wait_for(5s) == std::future_status::ready);
  CHECK_THROWS_WITH(refused.get(), Catch::Contains("the sampler thread is not running"));
}

TEST_CASE("a sampler lent to a probe is alive for kMaxSamplerBorrow, and stalled past it", "[sampler_worker]") {
  const TickScale scale(counter_frequency(default_tick_method(), 50ms).hertz);
  SamplerWorker worker(continuous_on(current_affinity().back(), scale));
  worker.start();
  worker.wait_ready();
  worker.release();
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  auto done = worker.run_paused([&] {
    started.set_value();
    released.wait();
  });
  started.get_future().wait();  // the task holds the CPU now, whatever the scheduler does
  const auto ticks_in = [&](std::chrono::nanoseconds d) {
    return scale.from_ns(static_cast<std::uint64_t>(d.count()));
  };
  const std::uint64_t now = read_ticks(default_tick_method());
  // The heartbeat stands still during the borrow; the borrow itself is the proof of progress...
  CHECK(worker.alive(now + ticks_in(5s)));
  CHECK(worker.alive(now + ticks_in(kMaxSamplerBorrow - 1s)));
  // ...up to the bound: a step that hangs longer is a stalled sampler, and the pings stop.
  CHECK_FALSE(worker.alive(now + ticks_in(kMaxSamplerBorrow + 1s)));
  release.set_value();
  done.get();
  // Finishing the task refreshed the heartbeat: alive at once, without waiting for a span.
  CHECK(worker.alive(read_ticks(default_tick_method())));
  worker.stop();
  CHECK_FALSE(worker.alive(read_ticks(default_tick_method())));
}

TEST_CASE("a sampler is alive from the start barrier on", "[sampler_worker]") {
  const TickScale scale(counter_frequency(default_tick_method(), 50ms).hertz);
  SamplerWorker worker(continuous_on(current_affinity().back(), scale));
  worker.start();
  worker.wait_ready();
  // Before release no gap has been recorded, but the warm-up proved the loop runs.
  CHECK(worker.alive(read_ticks(default_tick_method())));
  worker.release();
  CHECK(worker.alive(read_ticks(default_tick_method())));
  worker.stop();
}

TEST_CASE("a sampler moved off its CPU stops sampling there and pins itself back",
          "[sampler_worker][concurrency]") {
  const std::vector<int> cpus = current_affinity();
  if (cpus.size() < 2) {
    WARN("skipped: this process may run on only " << cpus.size() << " CPU(s); moving a sampler needs two");
    return;
  }
  const int cpu = cpus.back();
  const TickScale scale(counter_frequency(default_tick_method(), 50ms).hertz);
  SamplerWorker worker(continuous_on(cpu, scale));
  worker.start();
  worker.wait_ready();
  worker.release();
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  const auto wait_for = [&](auto done) {
    while (!done() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    return done();
  };
  REQUIRE(wait_for([&] { return worker.shared()->samples.load() > 0; }));
  // What an administrator's taskset, or the kernel taking the CPU offline, does to the thread.
  cpu_set_t elsewhere;
  CPU_ZERO(&elsewhere);
  CPU_SET(cpus.front(), &elsewhere);
  REQUIRE(sched_setaffinity(worker.startup().tid, sizeof(elsewhere), &elsewhere) == 0);
  REQUIRE(wait_for([&] { return worker.cpu_losses() == 1 && !worker.off_cpu(); }));
  cpu_set_t now_allowed;
  REQUIRE(sched_getaffinity(worker.startup().tid, sizeof(now_allowed), &now_allowed) == 0);
  CHECK(CPU_COUNT(&now_allowed) == 1);
  CHECK(CPU_ISSET(cpu, &now_allowed));
  // It samples again, and a task it runs for a probe runs on its CPU.
  const std::uint64_t samples = worker.shared()->samples.load();
  CHECK(wait_for([&] { return worker.shared()->samples.load() > samples; }));
  int ran_on = -1;
  worker.run_paused([&] { ran_on = sched_getcpu(); }).get();
  CHECK(ran_on == cpu);
  CHECK(worker.alive(read_ticks(default_tick_method())));
  worker.stop();
}

TEST_CASE("window updates read every sampler's context switches each second up to 256, else in turn",
          "[sampler_set]") {
  for (const std::size_t count : {std::size_t{1}, std::size_t{255}, std::size_t{256}}) {
    for (std::uint64_t sequence = 1; sequence <= 3; ++sequence)
      for (std::size_t i = 0; i < count; ++i) CHECK(reads_switches_at(i, count, sequence));
  }
  for (const std::size_t count : {std::size_t{257}, std::size_t{600}, std::size_t{1024}}) {
    const std::size_t rounds = (count + 255) / 256;
    INFO(count << " samplers");
    std::vector<int> reads(count, 0);
    for (std::uint64_t sequence = 1; sequence <= 3 * rounds; ++sequence) {
      std::size_t this_update = 0;
      for (std::size_t i = 0; i < count; ++i) {
        if (!reads_switches_at(i, count, sequence)) continue;
        ++reads[i];
        ++this_update;
      }
      CHECK(this_update <= kSwitchReadsPerUpdate);
      CHECK(this_update > 0);
    }
    // Each one read once in every `rounds` consecutive updates: its reading is at most `rounds` s old.
    for (std::size_t i = 0; i < count; ++i) CHECK(reads[i] == 3);
  }
}
