// SPDX-License-Identifier: Apache-2.0
#include "measure/sleep_overshoot.h"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <numeric>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "measure/clock_ns.h"
#include "measure/op_cost.h"

namespace jitterd {

namespace {

// One relative sleep, resumed with the remaining time after a signal.
void sleep_relative(timespec request) {
  timespec remaining{};
  for (;;) {
    const int err = clock_nanosleep(CLOCK_MONOTONIC, 0, &request, &remaining);
    if (err == 0) return;
    if (err != EINTR) throw std::system_error(err, std::generic_category(), "sleep_overshoot: clock_nanosleep");
    request = remaining;
  }
}

}  // namespace

SleepOvershoot measure_sleep_overshoot(std::chrono::nanoseconds requested, std::size_t samples) {
  if (requested.count() < 0) {
    throw std::invalid_argument("sleep_overshoot: requested sleep must be >= 0 ns, got " +
                                std::to_string(requested.count()));
  }
  const timespec request{static_cast<time_t>(requested.count() / 1'000'000'000),
                         static_cast<long>(requested.count() % 1'000'000'000)};
  std::vector<std::int64_t> overshoot(samples);
  for (std::size_t i = 0; i <= samples; ++i) {
    const std::int64_t before = clock_ns(CLOCK_MONOTONIC);
    sleep_relative(request);
    const std::int64_t after = clock_ns(CLOCK_MONOTONIC);
    if (i > 0) overshoot[i - 1] = after - before - requested.count();
  }
  std::sort(overshoot.begin(), overshoot.end());
  SleepOvershoot result;
  result.requested = requested;
  result.samples = samples;
  result.median_ns = nearest_rank(overshoot, 0.5);
  result.p99_ns = nearest_rank(overshoot, 0.99);
  result.max_ns = samples == 0 ? 0 : overshoot.back();
  result.sum_ns = std::accumulate(overshoot.begin(), overshoot.end(), std::int64_t{0});
  return result;
}

}  // namespace jitterd
