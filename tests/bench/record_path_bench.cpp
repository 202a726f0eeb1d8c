// SPDX-License-Identifier: Apache-2.0
// record_path_bench: what a gap's record costs an `lfence; rdtsc` loop, one thing changed at a
// time (docs/benchmarks.md, "Why the loop cost 1.3x on Intel"). Every variant is the bare loop
// (read, subtract, store the gap into an array) plus one piece of the sampler's record, placed
// after the read or between the fence and the read. Variants alternate in rounds of about 1 ms on
// one pinned CPU; the figure is the fastest round's mean ticks per iteration (a round without a
// preemption: the machine's noise only lengthens rounds), and its ratio to the bare loop's. A
// program, not a test: it asserts nothing. x86-64 only (the fence and the read are separate
// instructions there).
//
//   record_path_bench [CPU] [ROUNDS]     (CPU: the last allowed one; ROUNDS: 300)
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "measure/histogram.h"

using namespace jitterd;

#if defined(__x86_64__)
namespace {

inline void fence() { asm volatile("lfence" : : : "memory"); }
inline std::uint64_t read() {
  std::uint32_t low, high;
  asm volatile("rdtsc" : "=a"(low), "=d"(high) : : "memory");
  return (static_cast<std::uint64_t>(high) << 32) | low;
}

std::atomic<std::uint64_t> g_buckets[kHistogramBuckets];
std::uint64_t g_table[kHistogramBuckets];  // read only: a load no store forwards to
std::vector<std::uint32_t> g_gaps(std::size_t{1} << 22);
volatile std::uint64_t g_sink;

void increment(std::atomic<std::uint64_t>& bucket) {
  bucket.store(bucket.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

enum Variant {
  bare,
  index_after,
  increment_after,
  table_load_after,
  previous_after,
  fixed_after,
  previous_before
};
constexpr const char* kNames[] = {
    "bare: read, store the gap",
    "+ the gap's bucket index, after the read",
    "+ the gap's bucket increment, after the read (the loop before)",
    "+ a load of a read-only table at that index, after the read",
    "+ the previous gap's increment, after the read",
    "+ an increment of one fixed bucket, after the read",
    "+ the previous gap's increment, between fence and read (now)",
};
constexpr int kVariants = 7;

template <Variant V>
__attribute__((noinline)) double ticks_per_iteration(std::uint64_t ticks) {
  constexpr std::size_t mask = (std::size_t{1} << 22) - 1;
  fence();
  std::uint64_t prev = read(), pending = 0;
  const std::uint64_t start = prev, end = prev + ticks;
  std::uint64_t n = 0;
  for (;;) {
    fence();
    if constexpr (V == previous_before) increment(g_buckets[histogram_bucket_index(pending)]);
    const std::uint64_t now = read();
    const std::uint64_t gap = now - prev;
    prev = now;
    g_gaps[n & mask] = static_cast<std::uint32_t>(gap);
    if constexpr (V == index_after)
      g_gaps[(n + 1) & mask] = static_cast<std::uint32_t>(histogram_bucket_index(gap));
    if constexpr (V == increment_after) increment(g_buckets[histogram_bucket_index(gap)]);
    if constexpr (V == table_load_after)
      g_gaps[(n + 1) & mask] += static_cast<std::uint32_t>(g_table[histogram_bucket_index(gap)]);
    if constexpr (V == previous_after) increment(g_buckets[histogram_bucket_index(pending)]);
    if constexpr (V == fixed_after) increment(g_buckets[5]);
    pending = gap;
    if ((++n & 1023) == 0 && now >= end) break;
  }
  g_sink = pending;
  return static_cast<double>(prev - start) / static_cast<double>(n);
}

int last_allowed_cpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof set, &set);
  int last = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) last = cpu;
  return last;
}

}  // namespace

int main(int argc, char** argv) {
  const int cpu = argc > 1 ? std::atoi(argv[1]) : last_allowed_cpu();
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 300;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    std::fprintf(stderr, "record_path_bench: cannot pin to CPU %d\n", cpu);
  for (std::size_t i = 0; i < kHistogramBuckets; ++i) g_table[i] = i;
  std::fill(g_gaps.begin(), g_gaps.end(), 0);  // touched before timing
  fence();
  const std::uint64_t t0 = read();
  while (read() - t0 < 100'000'000) {
  }
  std::vector<double> fastest(kVariants, 1e300);
  const std::uint64_t round_ticks = 2'000'000;  // about 1 ms at 2 GHz
  for (int round = 0; round < rounds; ++round) {
    const double figures[] = {ticks_per_iteration<bare>(round_ticks),
                              ticks_per_iteration<index_after>(round_ticks),
                              ticks_per_iteration<increment_after>(round_ticks),
                              ticks_per_iteration<table_load_after>(round_ticks),
                              ticks_per_iteration<previous_after>(round_ticks),
                              ticks_per_iteration<fixed_after>(round_ticks),
                              ticks_per_iteration<previous_before>(round_ticks)};
    for (int v = 0; v < kVariants; ++v) fastest[v] = std::min(fastest[v], figures[v]);
  }
  std::printf("record path on CPU %d, lfence; rdtsc, fastest of %d rounds of ~1 ms each, ticks per iteration:\n",
              cpu, rounds);
  for (int v = 0; v < kVariants; ++v)
    std::printf("  %-66s %7.2f  ratio %.3f\n", kNames[v], fastest[v], fastest[v] / fastest[bare]);
  return 0;
}
#else
int main() {
  std::printf("record_path_bench: x86-64 only (lfence and rdtsc are separate instructions there)\n");
  return 0;
}
#endif
