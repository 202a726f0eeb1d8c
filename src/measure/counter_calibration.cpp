#include "measure/counter_calibration.h"

#include <ctime>
#include <limits>
#include <thread>

namespace jitterd {

namespace {
std::int64_t monotonic_raw_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}
}  // namespace

ClockTickPair pair_clock_with_ticks(TickMethod method, int attempts) {
  // Keep the tightest bracket: an interruption between the three reads only widens it.
  ClockTickPair best{0, 0, std::numeric_limits<std::uint64_t>::max()};
  for (int i = 0; i < attempts; ++i) {
    const std::uint64_t before = read_ticks(method);
    const std::int64_t ns = monotonic_raw_ns();
    const std::uint64_t after = read_ticks(method);
    if (after - before < best.bracket) best = {ns, before + (after - before) / 2, after - before};
  }
  return best;
}

CounterFrequency calibrate_against_monotonic_raw(TickMethod method, std::chrono::nanoseconds window) {
  const ClockTickPair start = pair_clock_with_ticks(method);
  std::this_thread::sleep_for(window);
  const ClockTickPair end = pair_clock_with_ticks(method);
  const double elapsed_ns = static_cast<double>(end.clock_ns - start.clock_ns);
  const double ticks = static_cast<double>(end.tick - start.tick);
  CounterFrequency result;
  result.hertz = ticks / elapsed_ns * 1e9;
  result.source = "calibrated_monotonic_raw";
  // Each end is known to within half its bracket; the clock itself is exact to 1 ns.
  const double error_ticks = static_cast<double>(start.bracket + end.bracket) / 2.0;
  result.uncertainty_ppm = (error_ticks / ticks + 2.0 / elapsed_ns) * 1e6;
  return result;
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
