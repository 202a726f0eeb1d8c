// SPDX-License-Identifier: Apache-2.0
// The sampling loop: spin reading the tick counter and record every gap between two reads.
// SamplerShared is written by exactly one sampler thread and read by housekeeping threads with
// relaxed loads; the loop makes no syscall, allocation, lock, log call or atomic read-modify-write.
// Call run_sampler_span only from the pinned sampler thread that owns `shared` and `state`.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "measure/gap_counts.h"
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
  // Read by the sampler thread between spans, never in the loop (sampling/sampler_worker.h): its
  // CPU's System Management Interrupts so far (the msr PMU's smi event), once smi_counted is set.
  std::atomic<std::uint64_t> smi_count{0};
  // Of those, the SMIs that came while the sampler spun (a span's two ends' reads apart): only
  // these can have made a recorded gap; a burst sampler sleeps through most of its CPU's SMIs.
  std::atomic<std::uint64_t> smi_in_spans{0};
  std::atomic<bool> smi_counted{false};
  // The same reads' APERF and MPERF counts (host/msr_pmu.h CycleCounts), a pair published under
  // cycles_version (odd while written; 0: never), so that a reader never pairs one read's actual
  // cycles with another's reference cycles: publish_cycles and read_cycles below.
  std::atomic<std::uint64_t> cycles_version{0};
  std::atomic<std::uint64_t> actual_cycles{0}, reference_cycles{0};
};

// The sampler thread's side (its one writer): a sequence lock, as the pair's reader may run at
// any time on a housekeeping CPU. Release stores throughout rather than a fence (GCC's TSan, which
// the sanitizer build runs, does not model std::atomic_thread_fence): a release store keeps every
// store before it before it, so the odd version is stored before the pair and the pair before the
// even one.
inline void publish_cycles(SamplerShared& shared, std::uint64_t actual, std::uint64_t reference) {
  const std::uint64_t version = shared.cycles_version.load(std::memory_order_relaxed);
  shared.cycles_version.store(version + 1, std::memory_order_relaxed);
  shared.actual_cycles.store(actual, std::memory_order_release);
  shared.reference_cycles.store(reference, std::memory_order_release);
  shared.cycles_version.store(version + 2, std::memory_order_release);
}

// The last published (actual, reference) pair; nullopt before the first, and where the writer stayed
// in the middle of a publication for 10,000 tries (descheduled between its stores: a throttled
// SCHED_FIFO sampler, a CPU going offline), so a housekeeping reader never spins on it.
inline std::optional<std::pair<std::uint64_t, std::uint64_t>> read_cycles(const SamplerShared& shared) {
  for (int tries = 0; tries < 10'000; ++tries) {
    const std::uint64_t before = shared.cycles_version.load(std::memory_order_acquire);
    if (before == 0) return std::nullopt;
    if (before % 2 != 0) continue;  // being written: a few stores, never a wait on anything else
    // Acquire loads: a pair value of a later publication makes the version's odd store visible
    // to the check below, and no load after them moves before them.
    const std::uint64_t actual = shared.actual_cycles.load(std::memory_order_acquire);
    const std::uint64_t reference = shared.reference_cycles.load(std::memory_order_acquire);
    if (shared.cycles_version.load(std::memory_order_relaxed) == before) return std::pair(actual, reference);
  }
  return std::nullopt;
}

// What `shared`'s counters hold now (relaxed loads): for housekeeping threads, never the loop.
inline GapCountsTicks read_counts(const SamplerShared& shared) {
  GapCountsTicks c;
  shared.histogram.snapshot(c.gaps);
  c.sampled_ticks = shared.sampled_ticks.load(std::memory_order_relaxed);
  c.interruptions = shared.interruption_count.load(std::memory_order_relaxed);
  c.interrupted_ticks = shared.interrupted_ticks.load(std::memory_order_relaxed);
  return c;
}

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
// pause, a probe) is never recorded as a gap. `read` is the tick source: read_ticks<M> in the
// daemon (run_sampler_span), a script in tests. Every gap is between two consecutive reads, the
// bookkeeping one included: it does no read of its own, and its cost (no division: WindowMax's
// fast path is a compare; seven relaxed stores to lines this thread owns) lands in that one gap,
// where the benchmark measures it against a bare loop's tail.
//
// A gap is recorded while the read that ends the next one is in flight: `fence` (tick_fence<M>)
// comes first, then the record of the previous gap (histogram, min, max, threshold), then `read`
// (read_ticks_after_fence<M>). The record does not use the read, so on Intel, where nothing after
// rdtsc starts before rdtsc completes, it costs the gap nothing (a bucket's load and increment
// after the read made the loop's median gap 1.3x the bare loop's; docs/benchmarks.md). Every
// instruction still lies between two reads, and the next fence waits for the record, so no time
// escapes the gaps. Readers see the histogram one gap behind at most; the span's end records that
// gap before it returns.
//
// `on_cpu` says whether the thread still runs on the CPU it samples. It is asked at every check
// and before a gap at or above the threshold is recorded: a migration (the CPU went offline and
// the kernel moved the thread away, or someone changed its affinity) always costs such a gap
// unless the threshold is set very high, so the gap that moved the thread is normally not
// recorded, and at most the kSamplerCheckEvery gaps since the last check ever are. The span
// then ends and returns false; it returns true when it ended for end_tick or stop.
template <typename Fence, typename ReadTicks, typename OnCpu>
bool run_sampler_loop(SamplerShared& shared, SamplerWriterState& state, std::uint64_t threshold_ticks,
                      std::uint64_t end_tick, const std::atomic<bool>& stop, Fence&& fence, ReadTicks&& read,
                      OnCpu&& on_cpu) {
  std::uint64_t local_max = 0;
  std::uint64_t local_min = state.min_gap;
  std::uint64_t n = 0;
  const std::uint64_t first = (fence(), read());
  std::uint64_t prev = (fence(), read());  // the read that ends `gap`, the gap not yet recorded
  std::uint64_t gap = prev - first;
  const auto publish_progress = [&](std::uint64_t at) {
    shared.window_max.publish(at, local_max);
    if (local_max > state.max_gap) publish(shared.max_gap, state.max_gap = local_max);
    local_max = 0;
    publish(shared.samples, state.samples + n);
    publish(shared.sampled_ticks, state.sampled_ticks + (at - first));
    publish(shared.min_gap, local_min);
    publish(shared.heartbeat_tick, at);
  };
  bool stayed = true;
  for (;;) {
    fence();
    // The record of `gap`, beside the read below.
    if (gap >= threshold_ticks) [[unlikely]] {
      if (!on_cpu()) {
        prev -= gap;  // the span ends where the last recorded gap did
        stayed = false;
        break;
      }
      shared.interruptions.push(prev - gap, gap);
      publish(shared.interruption_count, ++state.interruption_count);
      publish(shared.interrupted_ticks, state.interrupted_ticks += gap);
    }
    shared.histogram.record(gap);
    local_min = std::min(local_min, gap);
    local_max = std::max(local_max, gap);
    if ((++n & (kSamplerCheckEvery - 1)) == 0) [[unlikely]] {
      publish_progress(prev);
      if (!on_cpu()) {
        stayed = false;
        break;
      }
      if (prev >= end_tick || stop.load(std::memory_order_relaxed)) break;
    }
    const std::uint64_t now = read();
    gap = now - prev;
    prev = now;
  }
  // A span cut short by a migration ends between two checks: publish what it measured up to prev.
  if (!stayed && (n & (kSamplerCheckEvery - 1)) != 0) publish_progress(prev);
  state.samples += n;
  state.sampled_ticks += prev - first;
  state.min_gap = local_min;
  return stayed;
}

// The same loop with a tick source that has no separate fence (tests' scripts).
template <typename ReadTicks, typename OnCpu>
bool run_sampler_loop(SamplerShared& shared, SamplerWriterState& state, std::uint64_t threshold_ticks,
                      std::uint64_t end_tick, const std::atomic<bool>& stop, ReadTicks&& read, OnCpu&& on_cpu) {
  return run_sampler_loop(
      shared, state, threshold_ticks, end_tick, stop, [] {}, std::forward<ReadTicks>(read),
      std::forward<OnCpu>(on_cpu));
}

// For callers that do not pin (some tests): every CPU is the right one.
inline constexpr int kAnyCpu = -1;

// The daemon's span: tick_fence<M> and read_ticks_after_fence<M> (read_ticks<M> in two halves),
// and the CPU asked of the kernel through sched_getcpu(), which glibc (2.35 and later) answers
// from the rseq area without a system call.
template <TickMethod M>
[[nodiscard]] bool run_sampler_span(SamplerShared& shared, SamplerWriterState& state,
                                    std::uint64_t threshold_ticks, std::uint64_t end_tick,
                                    const std::atomic<bool>& stop, int cpu) {
  return run_sampler_loop(
      shared, state, threshold_ticks, end_tick, stop, [] { tick_fence<M>(); },
      [] { return read_ticks_after_fence<M>(); }, [cpu] { return cpu == kAnyCpu || sched_getcpu() == cpu; });
}

}  // namespace jitterd
