// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "measure/counter_calibration.h"
#include "measure/migration_loop.h"
#include "measure/tick_scale.h"
#include "tick_helpers.h"

using namespace jitterd;

namespace {

using jitterd::testing::ticks_for;

// Restores the thread's original affinity when the test ends, pass or fail.
struct AffinityGuard {
  cpu_set_t original{};
  AffinityGuard() { REQUIRE(sched_getaffinity(0, sizeof(original), &original) == 0); }
  ~AffinityGuard() { sched_setaffinity(0, sizeof(original), &original); }
};

}  // namespace

TEST_CASE("pinned to one CPU, the loop sees only that CPU and no migration", "[migration_loop]") {
  AffinityGuard guard;
  const int cpu = sched_getcpu();
  REQUIRE(cpu >= 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
  const TickMethod method = default_tick_method();
  const MigrationLoopResult r = run_migration_loop(method, ticks_for(method, 20'000'000));
  CHECK(r.migrations == 0);
  CHECK(r.cpus_seen == std::vector<int>{cpu});
  CHECK(r.samples > 0);
  CHECK(r.samples % kMigrationCheckEvery == 0);
  CHECK(r.samples == r.gaps.total());
}

TEST_CASE("allowed on every CPU, what the loop sees is consistent", "[migration_loop]") {
  AffinityGuard guard;
  const MigrationLoopResult r = run_migration_loop<TickMethod::steady_clock>(20'000'000);
  CHECK(r.samples == r.gaps.total());
  CHECK(r.sum_ticks >= 20'000'000);  // the gaps add up to the loop's length, at least the duration
  REQUIRE_FALSE(r.cpus_seen.empty());
  CHECK(std::is_sorted(r.cpus_seen.begin(), r.cpus_seen.end()));
  for (int cpu : r.cpus_seen) CHECK(CPU_ISSET(cpu, &guard.original));
  // Every CPU after the first needs at least one migration to reach; one check per 1024 gaps.
  CHECK(r.migrations + 1 >= r.cpus_seen.size());
  CHECK(r.migrations <= r.samples / kMigrationCheckEvery);
}
