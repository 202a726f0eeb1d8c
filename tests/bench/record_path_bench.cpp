// SPDX-License-Identifier: Apache-2.0
// record_path_bench: what a gap's record costs an `lfence; rdtsc` loop, one thing changed at a
// time (docs/benchmarks.md, "Why the loop cost 1.3x on Intel"). Every variant is the bare loop
// (read, subtract, store the gap into an array) plus one piece of the sampler's record, placed
// after the read or between the fence and the read. A second table does the same for an
// application's loop that calls jitterd_loop_record_at after its read (read, count the gap in a
// histogram of its own): plain instructions after the read, independent or in a chain, and the
// record_at's core as it was and as it is (docs/benchmarks.md, "The loop probe in an
// application's loop"). Variants alternate in rounds of about 1 ms on one pinned CPU; the figure
// is the fastest round's mean ticks per iteration (a round without a preemption: the machine's
// noise only lengthens rounds), and its difference and ratio to the bare loop's. A program, not a
// test: it asserts nothing. x86-64 only (the fence and the read are separate instructions there).
//
//   record_path_bench [CPU] [ROUNDS]     (CPU: the last allowed one; ROUNDS: 300)
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
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

// ---- after an application's read: what jitterd_loop_record_at's work costs there ----

enum AppVariant {
  app_bare,
  app_adds16,
  app_adds32,
  app_chain16,
  app_stores,
  app_index_then_increment,
  app_increment_then_index,
  app_index_only
};
constexpr const char* kAppNames[] = {
    "application: read, count the gap in its own histogram",
    "+ 16 independent adds",
    "+ 32 independent adds",
    "+ a chain of 16 dependent adds",
    "+ a load and two stores through a pointer (prev; gap, read)",
    "+ the previous gap's index from memory, its increment (before)",
    "+ the increment at a stored address, the new gap's stored (now)",
    "+ the new gap's bucket address stored, no increment",
};
constexpr int kAppVariants = 8;

// The probe's state as record_at keeps it between calls: in memory, reloaded after every read.
struct State {
  std::uint64_t prev, gap;
  std::atomic<std::uint64_t>* bucket;
};
State g_state;
std::uint64_t g_own[kHistogramBuckets];

template <int K>
inline __attribute__((always_inline)) void adds(std::uint64_t& a, std::uint64_t& b, std::uint64_t& c,
                                                std::uint64_t& d) {
  if constexpr (K > 0) {
    asm volatile("add $1, %0\n\tadd $1, %1\n\tadd $1, %2\n\tadd $1, %3" : "+r"(a), "+r"(b), "+r"(c), "+r"(d));
    adds<K - 4>(a, b, c, d);
  }
}
template <int K>
inline __attribute__((always_inline)) void chain(std::uint64_t& a) {
  if constexpr (K > 0) {
    asm volatile("add $1, %0" : "+r"(a));
    chain<K - 1>(a);
  }
}

template <AppVariant V>
__attribute__((noinline)) double app_ticks_per_iteration(State* s, std::uint64_t ticks) {
  fence();
  std::uint64_t prev = read(), n = 0, a = 0, b = 0, c = 0, d = 0;
  const std::uint64_t start = prev, end = prev + ticks;
  for (;; ++n) {
    fence();  // the "memory" clobbers reload the state after every read, as an opaque call would
    const std::uint64_t now = read();
    ++g_own[histogram_bucket_index(now - prev)];
    prev = now;
    if constexpr (V == app_adds16) adds<16>(a, b, c, d);
    if constexpr (V == app_adds32) adds<32>(a, b, c, d);
    if constexpr (V == app_chain16) chain<16>(a);
    if constexpr (V == app_stores) {
      s->gap = now - s->prev;
      s->prev = now;
    }
    if constexpr (V == app_index_then_increment) {
      increment(g_buckets[histogram_bucket_index(s->gap)]);
      s->gap = now - s->prev;
      s->prev = now;
    }
    if constexpr (V == app_increment_then_index || V == app_index_only) {
      if constexpr (V == app_increment_then_index) increment(*s->bucket);
      s->gap = now - s->prev;
      s->bucket = &g_buckets[histogram_bucket_index(s->gap)];
      s->prev = now;
    }
    if (now >= end) break;
  }
  asm volatile("" : : "r"(a), "r"(b), "r"(c), "r"(d));
  return static_cast<double>(prev - start) / static_cast<double>(n);
}

template <int... I>
void app_round(std::vector<double>& fastest, std::uint64_t ticks, std::integer_sequence<int, I...>) {
  ((fastest[I] = std::min(fastest[I], app_ticks_per_iteration<static_cast<AppVariant>(I)>(&g_state, ticks))), ...);
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
  std::vector<double> fastest(kVariants, 1e300), app_fastest(kAppVariants, 1e300);
  g_state.bucket = &g_buckets[0];
  const std::uint64_t round_ticks = 2'000'000;  // about 1 ms at 2 GHz
  for (int round = 0; round < rounds; ++round) {
    app_round(app_fastest, round_ticks, std::make_integer_sequence<int, kAppVariants>{});
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
  std::printf("after an application's read, ticks per iteration (difference to the first):\n");
  for (int v = 0; v < kAppVariants; ++v)
    std::printf("  %-66s %7.2f  %+6.2f  ratio %.3f\n", kAppNames[v], app_fastest[v],
                app_fastest[v] - app_fastest[0], app_fastest[v] / app_fastest[0]);
  return 0;
}
#else
int main() {
  std::printf("record_path_bench: x86-64 only (lfence and rdtsc are separate instructions there)\n");
  return 0;
}
#endif
