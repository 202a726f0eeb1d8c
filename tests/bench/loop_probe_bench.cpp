// SPDX-License-Identifier: Apache-2.0
// loop_probe_bench: what the loop probe's record call costs an application's loop. The same
// loop (read the counter, take the gap, count it in a histogram of its own) runs with and without
// jitterd_loop_record_at on the same pinned CPU, in alternating rounds of 100 ms, and prints the
// loop's gap quantiles each way and their difference in counter ticks (the goal, issue 28: p50
// within one counter step, p99.9 within two). A program, not a test: it prints figures for
// docs/benchmarks.md and asserts nothing.
//
//   loop_probe_bench [CPU] [ROUNDS]     (CPU: the last allowed one; ROUNDS: 10 of each)
#include <jitterd/loop_probe.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "measure/histogram.h"

using namespace jitterd;

namespace {

// The application's loop for `ticks`: every gap into `gaps`, and into the probe when given.
template <bool WithProbe>
void application_loop(jitterd_loop_probe* probe, HistogramSnapshot& gaps, std::uint64_t ticks) {
  std::uint64_t prev = jitterd_loop_read_counter();
  const std::uint64_t end = prev + ticks;
  for (;;) {
    const std::uint64_t now = jitterd_loop_read_counter();
    ++gaps.counts[histogram_bucket_index(now - prev)];
    prev = now;
    if constexpr (WithProbe) jitterd_loop_record_at(probe, now);
    if (now >= end) break;
  }
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
  if (probe == nullptr) {
    std::perror("loop_probe_bench: jitterd_loop_open");
    return 1;
  }
  const std::uint64_t hertz = probe->segment->hertz;
  const std::uint64_t round_ticks = hertz / 10;
  HistogramSnapshot bare, with_probe;
  application_loop<true>(probe, with_probe, round_ticks);  // warm both paths, then start afresh
  application_loop<false>(probe, bare, round_ticks);
  bare = {};
  with_probe = {};
  for (int round = 0; round < rounds; ++round) {
    application_loop<false>(probe, bare, round_ticks);
    application_loop<true>(probe, with_probe, round_ticks);
  }
  jitterd_loop_close(probe);
  const double ns_per_tick = 1e9 / static_cast<double>(hertz);
  std::printf("loop probe cost on CPU %d, counter at %.0f Hz (%.2f ns per tick), %d rounds of 100 ms each way\n",
              cpu, static_cast<double>(hertz), ns_per_tick, rounds);
  std::printf("%-10s %12s %12s %12s\n", "quantile", "bare ticks", "probe ticks", "difference");
  for (const double q : {0.5, 0.9, 0.99, 0.999, 0.9999}) {
    const std::uint64_t a = bare.quantile(q), b = with_probe.quantile(q);
    std::printf("p%-9g %12llu %12llu %+12lld\n", q * 100, static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b), static_cast<long long>(b) - static_cast<long long>(a));
  }
  // The mean over the gaps up to p99 (bucket midpoints, the same way for both): what the call
  // adds per iteration, without the preemptions a shared machine adds to either.
  const auto body_mean = [&](const HistogramSnapshot& gaps) {
    HistogramSnapshot body = gaps;
    const std::size_t cut = histogram_bucket_index(gaps.quantile(0.99));
    for (std::size_t i = cut + 1; i < kHistogramBuckets; ++i) body.counts[i] = 0;
    return body.approximate_mean() * ns_per_tick;
  };
  std::printf(
      "mean gap up to p99: bare %.2f ns, with the probe %.2f ns (%+.2f ns per iteration); %llu and %llu gaps\n",
      body_mean(bare), body_mean(with_probe), body_mean(with_probe) - body_mean(bare),
      static_cast<unsigned long long>(bare.total()), static_cast<unsigned long long>(with_probe.total()));
  return 0;
}
