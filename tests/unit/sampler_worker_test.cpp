#include <catch2/catch.hpp>

#include <sched.h>

#include <thread>

#include "measure/counter_calibration.h"
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

TEST_CASE("a paused sampler runs the task on its CPU and records no gap for the pause", "[sampler_worker]") {
  const int cpu = current_affinity().back();
  const TickScale scale(counter_frequency(default_tick_method(), 50ms).hertz);
  SamplerWorker worker(continuous_on(cpu, scale));
  worker.start();
  worker.wait_ready();
  worker.release();
  std::this_thread::sleep_for(50ms);
  const std::uint64_t sampled_before = worker.shared()->sampled_ticks.load();
  int ran_on = -1;
  const auto pause = 300ms;
  worker
      .run_paused([&] {
        ran_on = sched_getcpu();
        std::this_thread::sleep_for(pause);
      })
      .get();
  std::this_thread::sleep_for(50ms);
  worker.stop();
  CHECK(ran_on == cpu);
  // Sampling went on after the pause...
  CHECK(worker.shared()->sampled_ticks.load() > sampled_before);
  // ...and the pause itself is no gap: nothing as long as it was recorded (this machine's own
  // noise stays far below 300 ms).
  CHECK(worker.shared()->max_gap.load() < scale.from_ns(std::chrono::nanoseconds(pause).count()));
}

TEST_CASE("a sampler that has stopped refuses tasks instead of hanging", "[sampler_worker]") {
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
