// SPDX-License-Identifier: Apache-2.0
// Attribution of a window's interruptions to interrupt causes: the classifier on x86, arm64 and
// softirq rows, the exact largest-remainder split, and the documented rule (proportional shares
// that sum exactly, capping at the events with the rest unexplained, softirqs as coincident
// activity only, zero interruptions, zero events).
#include "host/attribution.h"

#include <catch2/catch.hpp>
#include <random>

using jitterd::attribute_interruptions;
using jitterd::Attribution;
using jitterd::cause_names;
using jitterd::cause_of;
using jitterd::CauseShare;
using jitterd::not_an_interrupt;
using jitterd::share_of;
using jitterd::SourceDelta;
using jitterd::split_proportionally;

namespace {

using Parts = std::vector<std::uint64_t>;

std::uint64_t interruptions_of(const Attribution& a, std::string_view cause) {
  return share_of(a, cause).interruptions;
}

std::uint64_t attributed_total(const Attribution& a) {
  std::uint64_t sum = a.unexplained;
  for (const CauseShare& share : a.causes) sum += share.interruptions;
  return sum;
}

std::uint64_t stolen_total(const Attribution& a) {
  std::uint64_t sum = a.unexplained_stolen_ns;
  for (const CauseShare& share : a.causes) sum += share.stolen_ns;
  return sum;
}

}  // namespace

TEST_CASE("cause_of classifies x86 rows", "[attribution]") {
  CHECK(cause_of("irq", "LOC", "Local timer interrupts") == "timer");
  CHECK(cause_of("irq", "RES", "Rescheduling interrupts") == "ipi_resched");
  CHECK(cause_of("irq", "CAL", "Function call interrupts") == "ipi_call");
  CHECK(cause_of("irq", "TLB", "TLB shootdowns") == "tlb");
  CHECK(cause_of("irq", "45", "mlx5_comp3@pci:0000:3b:00.0") == "device_irq");
  CHECK(cause_of("irq", "24", "") == "device_irq");
  CHECK(cause_of("irq", "0", "timer") == "timer");
  for (const char* code : {"NMI", "SPU", "IWI", "TRM", "THR", "DFR", "MCE", "HYP", "PIN"})
    CHECK(cause_of("irq", code, "Some interrupts") == "other_irq");
  // Rows that do not count interrupt arrivals of their own.
  for (const char* code : {"MCP", "RTR", "PMI", "ERR", "MIS"})
    CHECK(cause_of("irq", code, code) == not_an_interrupt);
}

TEST_CASE("cause_of classifies arm64 rows by description", "[attribution]") {
  CHECK(cause_of("irq", "11", "arch_timer") == "timer");
  CHECK(cause_of("irq", "47", "virtio0") == "device_irq");
  CHECK(cause_of("irq", "IPI0", "Rescheduling interrupts") == "ipi_resched");
  CHECK(cause_of("irq", "IPI1", "Function call interrupts") == "ipi_call");
  CHECK(cause_of("irq", "IPI4", "Timer broadcast interrupts") == "timer");
  CHECK(cause_of("irq", "IPI2", "CPU stop interrupts") == "other_irq");
  CHECK(cause_of("irq", "IPI5", "IRQ work interrupts") == "other_irq");
  CHECK(cause_of("irq", "Err", "Err") == not_an_interrupt);
}

TEST_CASE("cause_of classifies softirqs", "[attribution]") {
  CHECK(cause_of("softirq", "TIMER", "TIMER") == "timer");
  CHECK(cause_of("softirq", "HRTIMER", "HRTIMER") == "timer");
  CHECK(cause_of("softirq", "NET_RX", "NET_RX") == "softirq_net");
  CHECK(cause_of("softirq", "NET_TX", "NET_TX") == "softirq_net");
  CHECK(cause_of("softirq", "RCU", "RCU") == "softirq_rcu");
  for (const char* s : {"HI", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED"})
    CHECK(cause_of("softirq", s, s) == "softirq_other");
}

TEST_CASE("split_proportionally sums exactly by largest remainder", "[attribution]") {
  CHECK(split_proportionally(10, {1, 1, 1}) == Parts{4, 3, 3});  // tie: the earliest
  CHECK(split_proportionally(10, {250, 40, 9, 1}) == Parts{9, 1, 0, 0});
  CHECK(split_proportionally(7, {0, 5, 0}) == Parts{0, 7, 0});
  CHECK(split_proportionally(0, {3, 4}) == Parts{0, 0});
  CHECK(split_proportionally(5, {0, 0}) == Parts{0, 0});
  CHECK(split_proportionally(5, {}).empty());
  // Products beyond 2^64 stay exact.
  const std::uint64_t big = std::uint64_t{1} << 62;
  CHECK(split_proportionally(big, {big, big, big, big}) == Parts{big / 4, big / 4, big / 4, big / 4});
}

TEST_CASE("attribute_interruptions shares fewer interruptions than events", "[attribution]") {
  const std::vector<SourceDelta> deltas = {{"irq", "45", "mlx5_comp3", 40},
                                           {"irq", "LOC", "Local timer interrupts", 250},
                                           {"irq", "RES", "Rescheduling interrupts", 9},
                                           {"irq", "TLB", "TLB shootdowns", 1},
                                           {"softirq", "NET_RX", "NET_RX", 38},
                                           {"softirq", "TIMER", "TIMER", 250}};
  const Attribution a = attribute_interruptions(10, 1'000'000, deltas);
  // Quotas 8.33, 1.33, 0.3, 0.03: the one unit left goes to timer, tied with device_irq on
  // remainder and larger in events.
  CHECK(interruptions_of(a, "timer") == 9);
  CHECK(interruptions_of(a, "device_irq") == 1);
  CHECK(interruptions_of(a, "ipi_resched") == 0);
  CHECK(interruptions_of(a, "tlb") == 0);
  CHECK(a.unexplained == 0);
  CHECK(attributed_total(a) == 10);
  CHECK(a.coincident_events == 300);
  CHECK(a.softirq_events == 288);
  // Softirqs are coincident activity, never interruptions.
  CHECK(share_of(a, "timer").irq_events == 250);
  CHECK(share_of(a, "timer").softirqs == 250);
  CHECK(share_of(a, "softirq_net") == CauseShare{"softirq_net", 0, 38, 0, 0});
  CHECK(share_of(a, "timer").stolen_ns == 900'000);
  CHECK(share_of(a, "device_irq").stolen_ns == 100'000);
  CHECK(stolen_total(a) == 1'000'000);

  REQUIRE(a.causes.size() == cause_names.size());
  for (std::size_t i = 0; i < cause_names.size(); ++i) CHECK(a.causes[i].cause == cause_names[i]);
  REQUIRE(a.top_sources.size() == 6);
  // Ties on delta: "irq" before "softirq".
  CHECK(a.top_sources[0] == SourceDelta{"irq", "LOC", "Local timer interrupts", 250});
  CHECK(a.top_sources[1] == SourceDelta{"softirq", "TIMER", "TIMER", 250});
  CHECK(a.top_sources[2].source == "45");
  CHECK(a.top_sources[5].source == "TLB");
}

TEST_CASE("attribute_interruptions caps each cause at its events", "[attribution]") {
  // 20 interruptions, 8 events: an event causes at most one; 12 have no counted cause.
  const Attribution a =
      attribute_interruptions(20, 2000, {{"irq", "LOC", "Local timer interrupts", 5}, {"irq", "45", "eth0", 3}});
  CHECK(interruptions_of(a, "timer") == 5);
  CHECK(interruptions_of(a, "device_irq") == 3);
  CHECK(a.unexplained == 12);
  CHECK(share_of(a, "timer").stolen_ns == 500);
  CHECK(share_of(a, "device_irq").stolen_ns == 300);
  CHECK(a.unexplained_stolen_ns == 1200);
}

TEST_CASE("attribute_interruptions with no interruptions or no events", "[attribution]") {
  const std::vector<SourceDelta> busy = {{"irq", "LOC", "Local timer interrupts", 1000},
                                         {"irq", "CAL", "Function call interrupts", 4}};
  const Attribution quiet = attribute_interruptions(0, 0, busy);
  CHECK(attributed_total(quiet) == 0);
  CHECK(quiet.coincident_events == 1004);
  CHECK(share_of(quiet, "ipi_call").irq_events == 4);
  // Stolen time without interruptions is inconsistent input; it is kept, as unexplained.
  CHECK(attribute_interruptions(0, 77, busy).unexplained_stolen_ns == 77);

  // Only softirqs and rows that are not interrupts: nothing to attribute to (a VM's host
  // preemption, an SMI).
  const Attribution vm =
      attribute_interruptions(7, 7000, {{"softirq", "RCU", "RCU", 3}, {"irq", "MCP", "Machine check polls", 2}});
  CHECK(vm.unexplained == 7);
  CHECK(vm.unexplained_stolen_ns == 7000);
  CHECK(vm.coincident_events == 0);
  CHECK(vm.softirq_events == 3);
  CHECK(share_of(vm, "softirq_rcu").softirqs == 3);
  CHECK(vm.top_sources.size() == 2);  // MCP is still shown among the sources
  CHECK(attribute_interruptions(3, 30, {}).unexplained == 3);
}

TEST_CASE("attribute_interruptions explains an arm64 window", "[attribution]") {
  const Attribution a = attribute_interruptions(6, 600,
                                                {{"irq", "11", "arch_timer", 4},
                                                 {"irq", "IPI0", "Rescheduling interrupts", 2},
                                                 {"irq", "IPI5", "IRQ work interrupts", 1},
                                                 {"irq", "Err", "Err", 9}});
  // Quotas 3.43, 1.71, 0.86: floors 3+1+0, the two units left to the largest remainders.
  CHECK(interruptions_of(a, "timer") == 3);
  CHECK(interruptions_of(a, "ipi_resched") == 2);
  CHECK(interruptions_of(a, "other_irq") == 1);
  CHECK(a.coincident_events == 7);
  CHECK(share_of(a, "nonsense") == CauseShare{});
}

TEST_CASE("attribute_interruptions always sums exactly and never exceeds events", "[attribution]") {
  std::mt19937_64 random(12345);
  const std::vector<std::pair<std::string, std::string>> sources = {
      {"irq", "LOC"}, {"irq", "RES"}, {"irq", "CAL"},       {"irq", "TLB"},
      {"irq", "45"},  {"irq", "NMI"}, {"softirq", "NET_RX"}};
  for (int round = 0; round < 500; ++round) {
    std::vector<SourceDelta> deltas;
    for (const auto& [kind, source] : sources)
      if (random() % 3 != 0) deltas.push_back({kind, source, source, random() % 1000});
    const std::uint64_t interruptions = random() % 2000;
    const std::uint64_t stolen = random() % 100'000'000;
    const Attribution a = attribute_interruptions(interruptions, stolen, deltas);
    INFO("round " << round);
    REQUIRE(attributed_total(a) == interruptions);
    REQUIRE(stolen_total(a) == stolen);
    for (const CauseShare& share : a.causes) REQUIRE(share.interruptions <= share.irq_events);
    // Unexplained only when the events ran out.
    REQUIRE(a.unexplained == (interruptions > a.coincident_events ? interruptions - a.coincident_events : 0));
  }
}

TEST_CASE("split_below_kernel: each SMI takes one unexplained gap, the longest first; steal takes the rest",
          "[attribution]") {
  using jitterd::BelowKernel;
  using jitterd::split_below_kernel;
  // Two SMIs, no steal: the two longest gaps are the SMIs', the short one stays unexplained.
  CHECK(split_below_kernel(std::vector<std::uint64_t>{20'000, 150'000, 90'000}, 2, false) ==
        BelowKernel{2, 0, 1, 240'000, 0, 20'000});
  // More SMIs than gaps: an SMI explains at most one gap; the others fell between gaps.
  CHECK(split_below_kernel(std::vector<std::uint64_t>{5'000}, 3, true) == BelowKernel{1, 0, 0, 5'000, 0, 0});
  // Steal in the window: what no SMI took is the hypervisor's.
  CHECK(split_below_kernel(std::vector<std::uint64_t>{20'000, 150'000, 90'000}, 1, true) ==
        BelowKernel{1, 2, 0, 150'000, 110'000, 0});
  // Neither: all unexplained.
  CHECK(split_below_kernel(std::vector<std::uint64_t>{7, 8}, 0, false) == BelowKernel{0, 0, 2, 0, 0, 15});
}

TEST_CASE("split_below_kernel over counts (window deltas): time shared in proportion to the gaps",
          "[attribution]") {
  using jitterd::BelowKernel;
  using jitterd::split_below_kernel;
  CHECK(split_below_kernel(4, 400, 1, true) == BelowKernel{1, 3, 0, 100, 300, 0});
  CHECK(split_below_kernel(4, 400, 1, false) == BelowKernel{1, 0, 3, 100, 0, 300});
  CHECK(split_below_kernel(2, 400, 5, false) == BelowKernel{2, 0, 0, 400, 0, 0});
  // No gaps: the time (all of it unexplained, as attribute_interruptions leaves it) stays so.
  CHECK(split_below_kernel(0, 400, 5, true) == BelowKernel{0, 0, 0, 0, 0, 400});
}

TEST_CASE("estimate_window: the counts' shares, then the unexplained rest below the kernel, summing exactly",
          "[attribution]") {
  using jitterd::estimate_window;
  using jitterd::EstimatedShare;
  // 10 timer ticks and 2 NIC interrupts for 15 interruptions of 1 us: 3 unexplained, 1 SMI.
  const std::vector<SourceDelta> deltas = {{"irq", "LOC", "Local timer interrupts", 10},
                                           {"irq", "45", "eth0-rx-1", 2}};
  const std::vector<EstimatedShare> shares = estimate_window(15, 15'000, deltas, 1, true);
  REQUIRE(shares.size() == cause_names.size() + 3);
  for (std::size_t i = 0; i < cause_names.size(); ++i) CHECK(shares[i].cause == cause_names[i]);
  CHECK(shares[0] == EstimatedShare{"timer", 10, 10'000});
  CHECK(shares[4] == EstimatedShare{"device_irq", 2, 2'000});
  CHECK(shares[cause_names.size()] == EstimatedShare{"smi", 1, 1'000});
  CHECK(shares[cause_names.size() + 1] == EstimatedShare{"hypervisor", 2, 2'000});  // steal takes the rest
  CHECK(shares[cause_names.size() + 2] == EstimatedShare{"unexplained", 0, 0});
  // Without steal the rest stays unexplained; the sums hold whatever the split.
  const std::vector<EstimatedShare> quiet = estimate_window(15, 15'000, deltas, 0, false);
  CHECK(quiet.back() == EstimatedShare{"unexplained", 3, 3'000});
  std::uint64_t interruptions = 0, ns = 0;
  for (const EstimatedShare& s : quiet) interruptions += s.interruptions, ns += s.stolen_ns;
  CHECK(interruptions == 15);
  CHECK(ns == 15'000);
}
