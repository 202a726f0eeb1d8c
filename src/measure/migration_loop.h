// SPDX-License-Identifier: Apache-2.0
// The pinning probe's loop: the sampler loop's spin (a histogram of gaps between consecutive
// counter reads) that also looks at which CPU it runs on every kMigrationCheckEvery gaps, so the
// same loop run pinned and then unpinned shows what migrations cost, side by side. The caller
// sets the thread's affinity first (one CPU, then several) and calls it from that thread; it
// blocks for the whole duration.
#pragma once

#include <sched.h>

#include <bitset>
#include <cstdint>
#include <memory>
#include <vector>

#include "measure/histogram.h"
#include "measure/tick.h"

namespace jitterd {

// Same cadence as the sampler's checks, so both loops do the same work between two checks.
inline constexpr std::uint64_t kMigrationCheckEvery = 1024;
// CPU ids at or above this are not recorded in cpus_seen (the largest NR_CPUS Linux builds).
inline constexpr std::size_t kMigrationMaxCpus = 8192;

struct MigrationLoopResult {
  HistogramSnapshot gaps;        // ticks between consecutive counter reads
  std::uint64_t samples = 0;     // gaps recorded: gaps.total()
  std::uint64_t sum_ticks = 0;   // every gap summed: the loop's length
  std::uint64_t migrations = 0;  // checks that found a CPU different from the previous check's
  std::vector<int> cpus_seen;    // ascending
};

// Spins for at least duration_ticks (checked every kMigrationCheckEvery gaps). The CPU check
// stays inside the gap it falls in, like the sampler's own checks: a migration during it is a gap
// like any other. sched_getcpu reads the rseq area in glibc 2.35+, no syscall; a failed read
// (-1) is skipped.
template <TickMethod M>
MigrationLoopResult run_migration_loop(std::uint64_t duration_ticks) {
  // Allocated and zeroed before the loop, which then only stores into them.
  auto histogram = std::make_unique<GapHistogram>();
  auto seen = std::make_unique<std::bitset<kMigrationMaxCpus>>();
  std::uint64_t migrations = 0;
  int previous_cpu = sched_getcpu();
  if (previous_cpu >= 0 && static_cast<std::size_t>(previous_cpu) < kMigrationMaxCpus) seen->set(previous_cpu);
  std::uint64_t n = 0;
  const std::uint64_t first = read_ticks<M>();
  std::uint64_t prev = first;
  for (;;) {
    const std::uint64_t now = read_ticks<M>();
    histogram->record(now - prev);
    prev = now;
    if ((++n & (kMigrationCheckEvery - 1)) == 0) [[unlikely]] {
      const int cpu = sched_getcpu();
      if (cpu >= 0) {
        if (previous_cpu >= 0 && cpu != previous_cpu) ++migrations;
        if (static_cast<std::size_t>(cpu) < kMigrationMaxCpus) seen->set(cpu);
        previous_cpu = cpu;
      }
      if (now - first >= duration_ticks) break;
    }
  }
  MigrationLoopResult result;
  histogram->snapshot(result.gaps);
  result.samples = n;
  result.sum_ticks = prev - first;
  result.migrations = migrations;
  for (std::size_t cpu = 0; cpu < kMigrationMaxCpus; ++cpu) {
    if (seen->test(cpu)) result.cpus_seen.push_back(static_cast<int>(cpu));
  }
  return result;
}

inline MigrationLoopResult run_migration_loop(TickMethod method, std::uint64_t duration_ticks) {
  return dispatch_tick_method(method, [&]<TickMethod M>() { return run_migration_loop<M>(duration_ticks); });
}

}  // namespace jitterd
