// SPDX-License-Identifier: Apache-2.0
#include "host/msr_pmu.h"

#include <catch2/catch.hpp>

#include "fixture_tree.h"

using jitterd::parse_pmu_event_config;

TEST_CASE("parse_pmu_event_config: the msr PMU's event=N, hexadecimal or decimal", "[msr_pmu]") {
  CHECK(parse_pmu_event_config("event=0x04\n") == 4u);
  CHECK(parse_pmu_event_config("event=0X1f") == 31u);
  CHECK(parse_pmu_event_config("event=7") == 7u);
  CHECK(parse_pmu_event_config(" event=0x00 ") == 0u);
}

TEST_CASE("parse_pmu_event_config: anything else is refused with the reason", "[msr_pmu]") {
  std::string why;
  CHECK_FALSE(parse_pmu_event_config("", &why));
  CHECK(why == "empty event description");
  CHECK_FALSE(parse_pmu_event_config("event=0x3c,umask=0x01", &why));
  CHECK(why == "unsupported term 'umask' (only event=N is known)");
  CHECK_FALSE(parse_pmu_event_config("event", &why));
  CHECK(why == "event without a value");
  CHECK_FALSE(parse_pmu_event_config("event=0x", &why));
  CHECK(why == "event value '0x' is not a number");
  CHECK_FALSE(parse_pmu_event_config("event=1,event=2", &why));
  CHECK(why == "event given twice");
  CHECK_FALSE(parse_pmu_event_config("event=0x10000000000000000", &why));
  CHECK_FALSE(parse_pmu_event_config(std::string(300, 'x'), &why));
  CHECK(why == "event description longer than 256");
}

TEST_CASE("read_msr_pmu: a guest's PMU has smi and no APERF/MPERF, said in one line", "[msr_pmu]") {
  const jitterd::MsrPmu pmu = read_msr_pmu(jitterd::testing::fixture_reader("vm_2cpu"));
  REQUIRE(pmu.smi);
  CHECK(*pmu.smi == jitterd::PmuEvent{10, 4});
  CHECK_FALSE(pmu.aperf);
  CHECK(pmu.aperf_why == "the msr PMU has no aperf event");
  CHECK(jitterd::msr_pmu_line(pmu) ==
        "msr PMU: SMIs counted per cpu; no APERF/MPERF (the msr PMU has no aperf event; most guests hide them), "
        "so frequency drops are not measured");
}

TEST_CASE("read_msr_pmu: no PMU at all, or a broken event file, names the path", "[msr_pmu]") {
  const jitterd::testing::ScratchTree tree;
  tree.add_cpu(0);
  jitterd::MsrPmu pmu = read_msr_pmu(tree.reader());
  CHECK_FALSE(pmu.smi);
  CHECK(pmu.smi_why == "no msr PMU at " + (tree.root() / "bus/event_source/devices/msr").string());
  CHECK(jitterd::msr_pmu_line(pmu).starts_with("msr PMU: no SMI counter (no msr PMU at "));

  tree.write("bus/event_source/devices/msr/type", "10\n");
  tree.write("bus/event_source/devices/msr/events/smi", "event=zz\n");
  tree.write("bus/event_source/devices/msr/events/aperf", "event=0x01\n");
  tree.write("bus/event_source/devices/msr/events/mperf", "event=0x02\n");
  pmu = read_msr_pmu(tree.reader());
  CHECK_FALSE(pmu.smi);
  CHECK(pmu.smi_why ==
        (tree.root() / "bus/event_source/devices/msr/events/smi").string() + ": event value 'zz' is not a number");
  REQUIRE(pmu.aperf);
  CHECK(*pmu.aperf == jitterd::PmuEvent{10, 1});
  CHECK(*pmu.mperf == jitterd::PmuEvent{10, 2});
}

TEST_CASE("msr PMU with APERF/MPERF: said counted; the frequency is actual over reference cycles", "[msr_pmu]") {
  const jitterd::testing::ScratchTree tree;
  tree.write("bus/event_source/devices/msr/type", "10\n");
  tree.write("bus/event_source/devices/msr/events/smi", "event=0x04\n");
  tree.write("bus/event_source/devices/msr/events/aperf", "event=0x01\n");
  tree.write("bus/event_source/devices/msr/events/mperf", "event=0x02\n");
  const jitterd::MsrPmu pmu = read_msr_pmu(tree.reader());
  REQUIRE(pmu.has_frequency());
  CHECK(pmu.smi_why.empty());
  CHECK(pmu.aperf_why.empty());
  CHECK(jitterd::msr_pmu_line(pmu) ==
        "msr PMU: SMIs counted per cpu; APERF/MPERF counted per cpu (the frequency it ran at, as actual over "
        "reference cycles)");

  using jitterd::CycleCounts;
  CHECK(*frequency_ratio(CycleCounts{100, 100}, CycleCounts{1'900, 2'100}) == Approx(0.9));
  CHECK(*frequency_ratio(CycleCounts{0, 0}, CycleCounts{3'000, 2'000}) == Approx(1.5));  // turbo
  // The CPU never ran (no reference cycle), or the counters were reopened: no figure.
  CHECK_FALSE(frequency_ratio(CycleCounts{5, 5}, CycleCounts{5, 5}));
  CHECK_FALSE(frequency_ratio(CycleCounts{500, 500}, CycleCounts{10, 20}));
  CHECK_FALSE(frequency_ratio(CycleCounts{500, 500}, CycleCounts{400, 600}));
}
