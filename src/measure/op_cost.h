// SPDX-License-Identifier: Apache-2.0
// What common kernel operations cost on this machine, in counter ticks (cpu-tests style tables:
// a counter read, clock_gettime per clock id, a bare syscall, thread create, fork). Each
// operation is timed many times between two counter reads and summarised by exact order
// statistics; the first call warms caches, TLB and the vDSO page and is discarded.
//
// Blocking and slow (fork, thread creation): call from a probe worker or housekeeping thread,
// never from a sampler's hot loop. Not for concurrent use on one thread; separate threads may
// each measure.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "measure/tick.h"

namespace jitterd {

struct OpCost {
  std::string op;
  std::size_t samples = 0;
  std::uint64_t median_ticks = 0;
  std::uint64_t p99_ticks = 0;
  std::uint64_t min_ticks = 0;
  std::uint64_t sum_ticks = 0;       // of all samples, for a mean
  std::vector<std::uint64_t> ticks;  // every sample, ascending (compare tests the median with them)
};

// Exact nearest-rank q-quantile of ascending `sorted` values (rank ceil(q * n), at least 1);
// T{} when empty.
template <typename T>
T nearest_rank(const std::vector<T>& sorted, double q) {
  if (sorted.empty()) return T{};
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(q * n));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// Times op() `samples` + 1 times, each between two reads of counter M; the first (warm-up) is
// discarded. The durations vector is allocated before timing starts.
template <TickMethod M, typename Op>
OpCost time_op(std::string name, Op&& op, std::size_t samples) {
  std::vector<std::uint64_t> ticks(samples);
  for (std::size_t i = 0; i <= samples; ++i) {
    // Compiler fences: op's work may not be moved outside the two counter reads.
    const std::uint64_t before = read_ticks<M>();
    std::atomic_signal_fence(std::memory_order_seq_cst);
    op();
    std::atomic_signal_fence(std::memory_order_seq_cst);
    const std::uint64_t after = read_ticks<M>();
    if (i > 0) ticks[i - 1] = after - before;
  }
  std::sort(ticks.begin(), ticks.end());
  OpCost cost;
  cost.op = std::move(name);
  cost.samples = samples;
  cost.median_ticks = nearest_rank(ticks, 0.5);
  cost.p99_ticks = nearest_rank(ticks, 0.99);
  cost.min_ticks = samples == 0 ? 0 : ticks.front();
  cost.sum_ticks = std::accumulate(ticks.begin(), ticks.end(), std::uint64_t{0});
  cost.ticks = std::move(ticks);
  return cost;
}

// The standard operations, in this order: "counter_read", "clock_gettime_monotonic",
// "clock_gettime_monotonic_raw", "clock_gettime_realtime", "syscall_getppid",
// "thread_create_join", "fork_wait"; their names, and one of them measured by index: the probe
// measures them one borrow of the CPU at a time, so a borrowed sampler is never held for all
// seven. The cheap ones take `samples` samples, thread creation max(samples / 10, 10), fork
// max(samples / 50, 5). Throws std::system_error naming the operation if a thread or process
// cannot be created.
const std::vector<std::string_view>& kernel_cost_ops();
OpCost measure_kernel_cost(TickMethod method, std::size_t op, std::size_t samples);

}  // namespace jitterd
