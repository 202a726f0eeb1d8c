// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "measure/op_cost.h"

using namespace jitterd;

TEST_CASE("nearest_rank picks the exact order statistic", "[op_cost]") {
  std::vector<std::uint64_t> values;
  for (std::uint64_t v = 1; v <= 100; ++v) values.push_back(v);
  CHECK(nearest_rank(values, 0.5) == 50);
  CHECK(nearest_rank(values, 0.99) == 99);
  CHECK(nearest_rank(values, 1.0) == 100);
  CHECK(nearest_rank(values, 0.0) == 1);
  CHECK(nearest_rank(std::vector<std::uint64_t>{5}, 0.99) == 5);
  CHECK(nearest_rank(std::vector<std::uint64_t>{3, 9}, 0.5) == 3);
  CHECK(nearest_rank(std::vector<std::int64_t>{}, 0.5) == 0);
}

TEST_CASE("time_op calls op samples + 1 times and discards the warm-up", "[op_cost]") {
  std::size_t calls = 0;
  volatile std::uint64_t sink = 0;
  const OpCost cost = time_op<TickMethod::steady_clock>(
      "busy",
      [&] {
        ++calls;
        for (int i = 0; i < 100; ++i) sink = sink + static_cast<std::uint64_t>(i);
      },
      50);
  CHECK(calls == 51);
  CHECK(cost.op == "busy");
  CHECK(cost.samples == 50);
  CHECK(cost.min_ticks <= cost.median_ticks);
  CHECK(cost.median_ticks <= cost.p99_ticks);
  CHECK(cost.sum_ticks >= cost.min_ticks * 50);
  CHECK(cost.sum_ticks >= cost.p99_ticks);
}

TEST_CASE("time_op on the default counter orders its statistics", "[op_cost]") {
  std::size_t calls = 0;
  const OpCost cost = dispatch_tick_method(default_tick_method(), [&]<TickMethod M>() {
    return time_op<M>(
        "count", [&] { ++calls; }, 200);
  });
  CHECK(calls == 201);
  CHECK(cost.samples == 200);
  CHECK(cost.min_ticks <= cost.median_ticks);
  CHECK(cost.median_ticks <= cost.p99_ticks);
}

TEST_CASE("zero samples still warm up and report zeros", "[op_cost]") {
  std::size_t calls = 0;
  const OpCost cost = time_op<TickMethod::steady_clock>(
      "none", [&] { ++calls; }, 0);
  CHECK(calls == 1);
  CHECK(cost.samples == 0);
  CHECK(cost.min_ticks == 0);
  CHECK(cost.median_ticks == 0);
  CHECK(cost.p99_ticks == 0);
  CHECK(cost.sum_ticks == 0);
}

TEST_CASE("measure_kernel_cost reports the seven standard operations", "[op_cost]") {
  std::vector<OpCost> costs;
  for (std::size_t op = 0; op < kernel_cost_ops().size(); ++op)
    costs.push_back(measure_kernel_cost(default_tick_method(), op, 100));
  REQUIRE(costs.size() == 7);
  const std::vector<std::string> names = {"counter_read",
                                          "clock_gettime_monotonic",
                                          "clock_gettime_monotonic_raw",
                                          "clock_gettime_realtime",
                                          "syscall_getppid",
                                          "thread_create_join",
                                          "fork_wait"};
  const std::vector<std::size_t> samples = {100, 100, 100, 100, 100, 10, 5};
  for (std::size_t i = 0; i < costs.size(); ++i) {
    INFO(costs[i].op);
    CHECK(costs[i].op == names[i]);
    CHECK(costs[i].samples == samples[i]);
    CHECK(costs[i].min_ticks <= costs[i].median_ticks);
    CHECK(costs[i].median_ticks <= costs[i].p99_ticks);
  }
  // Sanity, not timing: creating a process or thread costs more than reading the counter.
  CHECK(costs[6].median_ticks > costs[0].median_ticks);
  CHECK(costs[5].median_ticks > costs[0].median_ticks);
}
