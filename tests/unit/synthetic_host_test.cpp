// SPDX-License-Identifier: Apache-2.0
// The scale benchmark's generated machine trees (tests/bench/synthetic_host.h) read through
// jitterd's real readers: the CPUs, their topology classes, the isolation posture, the interrupt
// tables and the tasks are what the shape says, so the benchmark cannot measure an empty or
// misread tree.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "host/cache_topology.h"
#include "host/cpu_list.h"
#include "host/interrupt_counts.h"
#include "host/posture.h"
#include "host/topology.h"
#include "synthetic_host.h"

using namespace jitterd;
using synthetic::HostShape;
using synthetic::SyntheticHost;

namespace {

// tmpfs where there is one: a 1,024-CPU tree is 35,000 files, slow to create on a disk filesystem.
std::filesystem::path synthetic_parent() {
  const std::filesystem::path shm = "/dev/shm";
  return std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path();
}

}  // namespace

TEST_CASE("synthetic host: a 2-socket tree reads back with its topology classes and posture", "[synthetic]") {
  const HostShape shape{2, 2, 4, 2, 40, 2};  // 32 CPUs: 16 cores, 4 L3 domains
  REQUIRE(synthetic::shape_cpus(shape) == 32);
  SyntheticHost host(shape, synthetic_parent());
  const HostReader reader = host.reader();
  REQUIRE(reader.sysfs_problem().empty());

  const Topology topology = read_topology(reader);
  CHECK(topology.problems.empty());
  CHECK(topology.online.size() == 32);
  // Housekeeping: both threads of the first core of each socket (cpus 0, 8 and siblings 16, 24).
  CHECK(synthetic::housekeeping_cpus(shape) == std::vector<int>{0, 8, 16, 24});
  CHECK(topology.isolated == synthetic::isolated_cpus(shape));
  CHECK(topology.nohz_full == topology.isolated);
  CHECK(topology.siblings_of(3) == std::vector<int>{3, 19});
  CHECK(topology.find(19)->package_id == 0);
  CHECK(topology.find(12)->package_id == 1);

  std::vector<std::string> problems;
  const std::vector<CpuPlacement> placements = read_placements(reader, topology, &problems);
  CHECK(problems.empty());
  REQUIRE(placements.size() == 32);
  const auto relation = [&](int a, int b) {
    return classify_pair(placements[static_cast<std::size_t>(a)], placements[static_cast<std::size_t>(b)]);
  };
  CHECK(relation(3, 19) == CpuRelation::smt_sibling);
  CHECK(relation(0, 3) == CpuRelation::shared_l3);      // L3 domain 0: cores 0-3
  CHECK(relation(0, 17) == CpuRelation::shared_l3);     // core 1's second thread
  CHECK(relation(0, 20) == CpuRelation::same_package);  // core 4's second thread
  CHECK(relation(0, 4) == CpuRelation::same_package);   // core 4: L3 domain 1, socket 0
  CHECK(relation(0, 8) == CpuRelation::cross_package);
  CHECK(placements[9].numa_node == 1);

  const Posture posture = read_posture(reader);
  CHECK(posture.problems.empty());
  CHECK(posture.isolation.nohz_full == format_cpu_list(synthetic::isolated_cpus(shape)));
  CHECK(posture.cpufreq.size() == 32);
  REQUIRE(posture.cpuidle.size() == 32);
  CHECK(posture.cpuidle[5].states.size() == 3);
  CHECK(posture.irqs.size() == 40);
  CHECK(posture.smt.active == true);
  CHECK(posture.fingerprint.cpu_model == "AMD EPYC 9654 96-Core Processor");
  // Per-CPU kernel threads, two per CPU.
  CHECK(posture.tasks.size() == 64);
}

TEST_CASE("synthetic host: interrupt counters advance between generations", "[synthetic]") {
  const HostShape shape{2, 1, 2, 2, 30, 0};  // 8 CPUs
  SyntheticHost host(shape, synthetic_parent());
  const HostReader reader = host.reader();
  std::vector<std::string> problems;
  const InterruptSnapshot before = read_interrupt_counts(reader, &problems);
  host.write_counters(1);
  const InterruptSnapshot after = read_interrupt_counts(reader, &problems);
  CHECK(problems.empty());
  CHECK(after.interrupts.cpus.size() == 8);
  // 30 device IRQs, 14 per-CPU named rows, ERR and MIS.
  CHECK(after.interrupts.rows.size() == 30 + 14 + 2);
  CHECK(after.softirqs.rows.size() == 10);
  // Queue q of the device IRQs (IRQ 24 + q) fires on cpu q % 8; queue 3 (IRQ 27) is an NVMe queue.
  const std::vector<SourceDelta> on_cpu3 = per_cpu_deltas(before, after, {3}).at(3);
  const auto found =
      std::find_if(on_cpu3.begin(), on_cpu3.end(), [](const SourceDelta& d) { return d.source == "27"; });
  REQUIRE(found != on_cpu3.end());
  CHECK(found->name == "nvme0q1");
  CHECK(found->delta == 4);
  // An isolated CPU's tick: 1 per generation; a housekeeping CPU's: 1000.
  const auto loc = [](const std::vector<SourceDelta>& deltas) {
    for (const SourceDelta& d : deltas)
      if (d.source == "LOC") return d.delta;
    return std::uint64_t{0};
  };
  CHECK(loc(on_cpu3) == 1);
  CHECK(loc(per_cpu_deltas(before, after, {0}).at(0)) == 1000);
}

TEST_CASE("synthetic host: 1024 CPUs and 1000 IRQs are all read", "[synthetic]") {
  const HostShape shape{4, 8, 16, 2, 1000, 0};
  SyntheticHost host(shape, synthetic_parent());
  const HostReader reader = host.reader();
  const Topology topology = read_topology(reader);
  CHECK(topology.problems.empty());
  CHECK(topology.online.size() == 1024);
  CHECK(topology.isolated.size() == 1016);
  std::vector<std::string> problems;
  const std::vector<CpuPlacement> placements = read_placements(reader, topology, &problems);
  CHECK(problems.empty());
  std::set<CpuRelation> classes;
  for (int other = 1; other < 1024; ++other)
    classes.insert(classify_pair(placements[0], placements[static_cast<std::size_t>(other)]));
  CHECK(classes == std::set<CpuRelation>{CpuRelation::smt_sibling, CpuRelation::shared_l3,
                                         CpuRelation::same_package, CpuRelation::cross_package});
  const InterruptSnapshot counts = read_interrupt_counts(reader, &problems);
  CHECK(counts.interrupts.cpus.size() == 1024);
  CHECK(counts.interrupts.rows.size() == 1016);
  CHECK(host.interrupts_bytes() > 10'000'000);
}
