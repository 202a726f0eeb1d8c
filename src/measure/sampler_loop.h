// The sampling loop: spin reading the tick counter and record every gap between two reads.
// SamplerShared is written by exactly one sampler thread and read by housekeeping threads with
// relaxed loads; the loop makes no syscall, allocation, lock, log call or atomic read-modify-write.
// Call run_sampler_span only from the pinned sampler thread that owns `shared` and `state`.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

#include "measure/histogram.h"
#include "measure/interruption_ring.h"
#include "measure/tick.h"
#include "measure/window_max.h"

namespace jitterd {

// Iterations between looks at the stop flag and publications of min/max: a power of two, a few
// tens of microseconds of spinning, so a stop request is seen quickly and cheaply.
inline constexpr std::uint64_t kSamplerCheckEvery = 1024;

struct SamplerShared {
  SamplerShared(std::size_t ring_capacity, std::uint64_t max_slot_ticks, std::size_t max_slot_count)
      : interruptions(ring_capacity), window_max(max_slot_ticks, max_slot_count) {}

  GapHistogram histogram;
  InterruptionRing interruptions;
  WindowMax window_max;
  std::atomic<std::uint64_t> samples{0};
  std::atomic<std::uint64_t> sampled_ticks{0};  // sum of every recorded gap
  std::atomic<std::uint64_t> interruption_count{0};
  std::atomic<std::uint64_t> interrupted_ticks{0};  // sum of gaps >= threshold ("stolen")
  std::atomic<std::uint64_t> min_gap{std::numeric_limits<std::uint64_t>::max()};
  std::atomic<std::uint64_t> max_gap{0};
  std::atomic<std::uint64_t> heartbeat_tick{0};  // tick of the last check: progress proof
};

// Writer-side values that persist across spans (bursts) of one sampler.
struct SamplerWriterState {
  std::uint64_t samples = 0;
  std::uint64_t sampled_ticks = 0;
  std::uint64_t interruption_count = 0;
  std::uint64_t interrupted_ticks = 0;
  std::uint64_t min_gap = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_gap = 0;
};

// Single-writer "increment": the writer owns the value, readers only load it.
inline void publish(std::atomic<std::uint64_t>& target, std::uint64_t value) {
  target.store(value, std::memory_order_relaxed);
}

// Spins until the counter reaches end_tick or stop becomes true (checked every
// kSamplerCheckEvery gaps). The first read starts the span, so time spent outside it (a burst
// pause, a probe) is never recorded as a gap.
template <TickMethod M>
void run_sampler_span(SamplerShared& shared, SamplerWriterState& state, std::uint64_t threshold_ticks,
                      std::uint64_t end_tick, const std::atomic<bool>& stop) {
  std::uint64_t local_max = 0;
  std::uint64_t local_min = state.min_gap;
  std::uint64_t n = 0;
  const std::uint64_t first = read_ticks<M>();
  std::uint64_t prev = first;
  for (;;) {
    const std::uint64_t now = read_ticks<M>();
    const std::uint64_t gap = now - prev;
    prev = now;
    shared.histogram.record(gap);
    local_min = std::min(local_min, gap);
    local_max = std::max(local_max, gap);
    if (gap >= threshold_ticks) [[unlikely]] {
      shared.interruptions.push(now - gap, gap);
      publish(shared.interruption_count, ++state.interruption_count);
      publish(shared.interrupted_ticks, state.interrupted_ticks += gap);
    }
    if ((++n & (kSamplerCheckEvery - 1)) == 0) [[unlikely]] {
      shared.window_max.publish(now, local_max);
      if (local_max > state.max_gap) publish(shared.max_gap, state.max_gap = local_max);
      local_max = 0;
      publish(shared.samples, state.samples + n);
      publish(shared.sampled_ticks, state.sampled_ticks + (now - first));
      publish(shared.min_gap, local_min);
      publish(shared.heartbeat_tick, now);
      if (now >= end_tick || stop.load(std::memory_order_relaxed)) break;
    }
  }
  state.samples += n;
  state.sampled_ticks += prev - first;
  state.min_gap = local_min;
}

}  // namespace jitterd
