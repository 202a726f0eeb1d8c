// SPDX-License-Identifier: Apache-2.0
#include "measure/counter_calibration.h"

#include <ctime>
#include <limits>
#include <thread>
#include <utility>

#include "measure/clock_ns.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace jitterd {

namespace {
std::int64_t monotonic_raw_ns() { return clock_ns(CLOCK_MONOTONIC_RAW); }

// Frequency between two pairings; `source` names how the time between them was spent.
CounterFrequency frequency_between(const ClockTickPair& start, const ClockTickPair& end, std::string source) {
  const double elapsed_ns = static_cast<double>(end.clock_ns - start.clock_ns);
  const double ticks = static_cast<double>(end.tick - start.tick);
  CounterFrequency result;
  result.hertz = ticks / elapsed_ns * 1e9;
  result.source = std::move(source);
  // Each end is known to within half its bracket; the clock itself is exact to 1 ns.
  const double error_ticks = static_cast<double>(start.bracket + end.bracket) / 2.0;
  result.uncertainty_ppm = (error_ticks / ticks + 2.0 / elapsed_ns) * 1e6;
  return result;
}

// A spin-wait hint: lets an SMT sibling run and saves power without leaving the CPU.
inline void cpu_relax() {
#if defined(__x86_64__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

#if defined(__x86_64__)
struct CpuidRegisters {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

std::optional<CpuidRegisters> cpuid(unsigned leaf) {
  if (static_cast<unsigned>(__get_cpuid_max(0, nullptr)) < leaf) return std::nullopt;
  CpuidRegisters r;
  if (!__get_cpuid_count(leaf, 0, &r.eax, &r.ebx, &r.ecx, &r.edx)) return std::nullopt;
  return r;
}
#endif
}  // namespace

ClockTickPair pair_clock_with_ticks(TickMethod method, int attempts) {
  return pair_other_clock_with_ticks(method, CLOCK_MONOTONIC_RAW, attempts);
}

ClockTickPair pair_other_clock_with_ticks(TickMethod method, clockid_t clock, int attempts) {
  // Keep the tightest bracket: an interruption between the three reads only widens it.
  ClockTickPair best{0, 0, std::numeric_limits<std::uint64_t>::max()};
  for (int i = 0; i < attempts; ++i) {
    const std::uint64_t before = read_ticks(method);
    const std::int64_t ns = clock_ns(clock);
    const std::uint64_t after = read_ticks(method);
    if (after - before < best.bracket) best = {ns, before + (after - before) / 2, after - before};
  }
  return best;
}

CounterFrequency calibrate_against_monotonic_raw(TickMethod method, std::chrono::nanoseconds window) {
  const ClockTickPair start = pair_clock_with_ticks(method);
  std::this_thread::sleep_for(window);
  const ClockTickPair end = pair_clock_with_ticks(method);
  return frequency_between(start, end, "calibrated_monotonic_raw");
}

CounterFrequency calibrate_pause_loop(TickMethod method, std::chrono::nanoseconds window) {
  const ClockTickPair start = pair_clock_with_ticks(method);
  const std::int64_t deadline = start.clock_ns + static_cast<std::int64_t>(window.count());
  while (monotonic_raw_ns() < deadline) cpu_relax();
  const ClockTickPair end = pair_clock_with_ticks(method);
  return frequency_between(start, end, "pause_loop_monotonic_raw");
}

std::optional<double> cpuid_15h_hertz() {
#if defined(__x86_64__)
  const auto r = cpuid(0x15);
  if (!r || r->eax == 0 || r->ebx == 0 || r->ecx == 0) return std::nullopt;
  return static_cast<double>(r->ecx) * static_cast<double>(r->ebx) / static_cast<double>(r->eax);
#else
  return std::nullopt;
#endif
}

std::optional<double> cpuid_16h_base_hertz() {
#if defined(__x86_64__)
  const auto r = cpuid(0x16);
  const unsigned mhz = r ? (r->eax & 0xffffu) : 0;
  if (mhz == 0) return std::nullopt;
  return static_cast<double>(mhz) * 1e6;
#else
  return std::nullopt;
#endif
}

double counter_drift(const ClockTickPair& earlier, const ClockTickPair& later, double hertz) {
  const std::int64_t elapsed_ns = later.clock_ns - earlier.clock_ns;
  if (elapsed_ns <= 0 || !(hertz > 0)) return std::numeric_limits<double>::quiet_NaN();
  // (ticks * 1e9 - hertz * elapsed) / (hertz * elapsed): the difference is taken before dividing,
  // in long double, so a drift of a few ppb is not lost to cancellation.
  const long double ticks = static_cast<long double>(static_cast<std::int64_t>(later.tick - earlier.tick));
  const long double expected = static_cast<long double>(hertz) * static_cast<long double>(elapsed_ns);
  return static_cast<double>((ticks * 1e9L - expected) / expected);
}

std::optional<double> architectural_counter_hertz() {
#if defined(__aarch64__)
  std::uint64_t hz;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(hz));
  if (hz != 0) return static_cast<double>(hz);
#endif
  return std::nullopt;
}

CounterFrequency counter_frequency(TickMethod method, std::chrono::nanoseconds window) {
  if (method == TickMethod::steady_clock) return {1e9, "steady_clock_ns", 0};
  if (method == TickMethod::cntvct) {
    if (auto hz = architectural_counter_hertz()) return {*hz, "cntfrq_el0", 0};
  }
  return calibrate_against_monotonic_raw(method, window);
}

}  // namespace jitterd
