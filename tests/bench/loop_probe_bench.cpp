// SPDX-License-Identifier: Apache-2.0
// loop_probe_bench: what the loop probe's record call costs an application's loop. The same
// loop (read the counter, take the gap, count it in a histogram of its own) runs without
// jitterd_loop_record_at, with it, with it on a NULL probe (an open that failed), without its NULL
// check and as it was before 2026-11-29, on the same pinned CPU in alternating rounds of 100 ms,
// and prints the loop's gap quantiles each way, the differences in counter ticks, the mean time
// per iteration and the ratios. Then a loop whose only work is the counter read (the
// application's own, or jitterd_loop_record's): what recording costs over the read the loop would
// take anyway. A program, not a test: it prints figures for docs/benchmarks.md and asserts
// nothing.
//
//   loop_probe_bench [CPU] [ROUNDS]     (CPU: the last allowed one; ROUNDS: 10 of each)
#include <jitterd/loop_probe.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "measure/histogram.h"

using namespace jitterd;

namespace {

// jitterd_loop_record_at without its NULL check: the reference that shows what the check costs.
inline __attribute__((always_inline)) void record_at_unchecked(jitterd_loop_probe* p, std::uint64_t now) {
  const std::uint64_t prev = p->prev;
  JITTERD_LOOP_ATOMIC_U64* const bucket = p->pending_bucket;
  if (__builtin_expect(bucket != nullptr, 1)) {
    jitterd_loop_count_in_(p, prev, p->pending_gap, bucket);
  } else if (!jitterd_loop_record_at_rare_(p, now)) {
    return;
  }
  const std::uint64_t gap = now - prev;
  p->pending_gap = gap;
  p->pending_bucket = jitterd_loop_bucket_(p, gap);
  p->prev = now;
}

// The record_at before 2026-11-29: the previous gap's bucket index computed at this call, after
// the caller's read (the reference that shows what computing it one call earlier saves).
inline __attribute__((always_inline)) void record_at_previous(jitterd_loop_probe* p, std::uint64_t now) {
  if (__builtin_expect(p == nullptr, 0)) return;
  if (__builtin_expect(!p->started, 0)) {
    jitterd_loop_start_(p, now);
    return;
  }
  const std::uint64_t prev = p->prev;
  if (__builtin_expect(p->pending, 1)) {
    p->pending = 0;
    jitterd_loop_count_(p, prev, p->pending_gap);
  }
  p->pending_gap = now - prev;
  p->pending = 1;
  p->prev = now;
}

enum class Call { none, record_at, unchecked, previous };

// The application's loop for `ticks`: every gap into `gaps`, and into the probe as `How` says
// (the probe may be NULL for record_at). Returns the iterations.
template <Call How>
__attribute__((noinline)) std::uint64_t application_loop(jitterd_loop_probe* probe, HistogramSnapshot& gaps,
                                                         std::uint64_t ticks) {
  std::uint64_t prev = jitterd_loop_read_counter(), n = 0;
  const std::uint64_t end = prev + ticks;
  for (;; ++n) {
    const std::uint64_t now = jitterd_loop_read_counter();
    ++gaps.counts[histogram_bucket_index(now - prev)];
    prev = now;
    if constexpr (How == Call::record_at) jitterd_loop_record_at(probe, now);
    if constexpr (How == Call::unchecked) record_at_unchecked(probe, now);
    if constexpr (How == Call::previous) record_at_previous(probe, now);
    if (now >= end) break;
  }
  return n;
}

volatile std::uint64_t g_sink;

// A loop whose only work is the counter read: the application's own (probe unused) or the
// probe's (jitterd_loop_record). Returns the iterations.
template <bool Record>
__attribute__((noinline)) std::uint64_t read_loop(jitterd_loop_probe* probe, std::uint64_t ticks) {
  const std::uint64_t end = jitterd_loop_read_counter() + ticks;
  std::uint64_t n = 0;
  for (;;) {
    if constexpr (Record) {
      jitterd_loop_record(probe);
    } else {
      g_sink = jitterd_loop_read_counter();
    }
    if ((++n & 1023) == 0 && jitterd_loop_read_counter() >= end) break;
  }
  return n;
}

// One way of running the loop: its gaps (application loops only) and its rounds' mean time per
// iteration in ticks.
struct Side {
  const char* name;
  HistogramSnapshot gaps;
  std::vector<double> round_means;
  double median_mean() const {
    std::vector<double> sorted = round_means;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2];
  }
};

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
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
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 10;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    std::fprintf(stderr, "loop_probe_bench: cannot pin to CPU %d\n", cpu);
  const std::string dir = std::filesystem::temp_directory_path().string();
  jitterd_loop_options options{};
  options.directory = dir.c_str();
  jitterd_loop_probe* probe = jitterd_loop_open("bench", cpu, nullptr, &options);
  // The previous record_at keeps no bucket for its pending gap: a probe of its own.
  jitterd_loop_probe* previous_probe = jitterd_loop_open("bench-previous", cpu, nullptr, &options);
  if (probe == nullptr || previous_probe == nullptr) {
    std::perror("loop_probe_bench: jitterd_loop_open");
    return 1;
  }
  const std::uint64_t hertz = probe->segment->hertz;
  const std::uint64_t round_ticks = hertz / 10;
  jitterd_loop_probe* const volatile no_probe = nullptr;  // an open that failed, unknown to the compiler
  Side bare{"bare", {}, {}}, with_probe{"record_at", {}, {}}, with_null{"record_at(NULL)", {}, {}};
  Side unchecked{"record_at, no NULL check", {}, {}}, previous{"the previous record_at", {}, {}};
  Side own_read{"own read only", {}, {}}, record{"jitterd_loop_record", {}, {}};
  HistogramSnapshot warm;
  application_loop<Call::record_at>(probe, warm, round_ticks);  // warm every path first
  application_loop<Call::none>(probe, warm, round_ticks);
  application_loop<Call::record_at>(no_probe, warm, round_ticks);
  application_loop<Call::unchecked>(probe, warm, round_ticks);
  application_loop<Call::previous>(previous_probe, warm, round_ticks);
  read_loop<true>(probe, round_ticks);
  read_loop<false>(probe, round_ticks);
  const auto timed = [&](Side& side, auto&& loop) {
    const std::uint64_t start = jitterd_loop_read_counter();
    const std::uint64_t n = loop();
    side.round_means.push_back(static_cast<double>(jitterd_loop_read_counter() - start) / static_cast<double>(n));
  };
  for (int round = 0; round < rounds; ++round) {
    timed(bare, [&] { return application_loop<Call::none>(probe, bare.gaps, round_ticks); });
    timed(with_probe, [&] { return application_loop<Call::record_at>(probe, with_probe.gaps, round_ticks); });
    timed(with_null, [&] { return application_loop<Call::record_at>(no_probe, with_null.gaps, round_ticks); });
    timed(unchecked, [&] { return application_loop<Call::unchecked>(probe, unchecked.gaps, round_ticks); });
    timed(previous, [&] { return application_loop<Call::previous>(previous_probe, previous.gaps, round_ticks); });
    timed(own_read, [&] { return read_loop<false>(probe, round_ticks); });
    timed(record, [&] { return read_loop<true>(probe, round_ticks); });
  }
  jitterd_loop_close(probe);
  jitterd_loop_close(previous_probe);
  const double ns_per_tick = 1e9 / static_cast<double>(hertz);
  std::printf(
      "loop probe cost on CPU %d (%s), counter at %.0f Hz (%.3f ns per tick), %d rounds of 100 ms each way\n", cpu,
      cpu_model().c_str(), static_cast<double>(hertz), ns_per_tick, rounds);
  std::printf("%-10s %10s %10s %16s %10s %16s\n", "quantile", "bare", "record_at", "difference", "NULL",
              "difference");
  for (const double q : {0.5, 0.9, 0.99, 0.999, 0.9999}) {
    const std::uint64_t a = bare.gaps.quantile(q), b = with_probe.gaps.quantile(q), c = with_null.gaps.quantile(q);
    std::printf(
        "p%-9g %10llu %10llu %+10lld (%.3f) %10llu %+10lld (%.3f)\n", q * 100, static_cast<unsigned long long>(a),
        static_cast<unsigned long long>(b), static_cast<long long>(b) - static_cast<long long>(a),
        static_cast<double>(b) / static_cast<double>(a), static_cast<unsigned long long>(c),
        static_cast<long long>(c) - static_cast<long long>(a), static_cast<double>(c) / static_cast<double>(a));
  }
  // The mean over the gaps up to p99 (bucket midpoints, the same way for every side): what the
  // call adds per iteration, without the preemptions a shared machine adds to either.
  const auto body_mean = [&](const HistogramSnapshot& gaps) {
    HistogramSnapshot body = gaps;
    const std::size_t cut = histogram_bucket_index(gaps.quantile(0.99));
    for (std::size_t i = cut + 1; i < kHistogramBuckets; ++i) body.counts[i] = 0;
    return body.approximate_mean() * ns_per_tick;
  };
  const double b0 = body_mean(bare.gaps), b1 = body_mean(with_probe.gaps), b2 = body_mean(with_null.gaps);
  std::printf(
      "mean gap up to p99: bare %.2f ns; record_at %.2f ns (%+.2f ns per iteration, ratio %.3f); "
      "record_at(NULL) %.2f ns (%+.2f ns, ratio %.3f)\n",
      b0, b1, b1 - b0, b1 / b0, b2, b2 - b0, b2 / b0);
  const auto per_iteration = [&](const Side& side, const Side& reference) {
    const std::string label = &side == &reference ? side.name : std::string(side.name) + " / " + reference.name;
    const double ns = side.median_mean() * ns_per_tick, ref = reference.median_mean() * ns_per_tick;
    std::printf("  %-40s %8.2f ns per iteration (median of rounds), %+6.2f ns, ratio %.3f\n", label.c_str(), ns,
                ns - ref, ns / ref);
  };
  const double b3 = body_mean(unchecked.gaps);
  std::printf(
      "the NULL check on a probe that opened: record_at %.2f ns, the same without the check %.2f ns "
      "(%+.2f ns, ratio %.3f); p50 %llu and %llu ticks\n",
      b1, b3, b1 - b3, b1 / b3, static_cast<unsigned long long>(with_probe.gaps.quantile(0.5)),
      static_cast<unsigned long long>(unchecked.gaps.quantile(0.5)));
  const double b4 = body_mean(previous.gaps);
  std::printf(
      "the previous record_at (the previous gap's bucket index after the read): %.2f ns (%+.2f ns against bare); "
      "record_at now %+.2f ns against it; p50 %llu and %llu ticks\n",
      b4, b4 - b0, b1 - b4, static_cast<unsigned long long>(previous.gaps.quantile(0.5)),
      static_cast<unsigned long long>(with_probe.gaps.quantile(0.5)));
  std::printf("time per iteration, rounds' means (preemptions included):\n");
  per_iteration(bare, bare);
  per_iteration(with_probe, bare);
  per_iteration(with_null, bare);
  per_iteration(with_probe, unchecked);
  per_iteration(previous, bare);
  per_iteration(with_probe, previous);
  per_iteration(own_read, own_read);
  per_iteration(record, own_read);
  return 0;
}
