// SPDX-License-Identifier: Apache-2.0
// read_placements and classify_pair against the fixture trees two_socket_smt, amd_multi_ccx and
// vm_2cpu, and against scratch trees for broken cache, cluster and node files.
#include "host/cache_topology.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "fixture_tree.h"

using jitterd::classify_pair;
using jitterd::CpuPlacement;
using jitterd::CpuRelation;
using jitterd::HostReader;
using jitterd::read_placements;
using jitterd::read_topology;
using jitterd::Topology;

namespace {

using jitterd::testing::fixture_reader;
using jitterd::testing::fixtures;
using jitterd::testing::ScratchTree;

struct Machine {
  Topology topology;
  std::vector<CpuPlacement> placements;
  std::vector<std::string> problems;

  const CpuPlacement& at(int cpu) const {
    const auto it =
        std::find_if(placements.begin(), placements.end(), [cpu](const CpuPlacement& p) { return p.cpu == cpu; });
    REQUIRE(it != placements.end());
    return *it;
  }
  CpuRelation relation(int a, int b) const { return classify_pair(at(a), at(b)); }
};

Machine load(const HostReader& host) {
  Machine machine;
  machine.topology = read_topology(host);
  machine.placements = read_placements(host, machine.topology, &machine.problems);
  return machine;
}

Machine load(const std::string& name) { return load(fixture_reader(name)); }

// Online CPUs 0..count-1, each its own core in package 0, with no cache or node files.
void add_cpus(const ScratchTree& tree, int count) {
  const std::string all = "0-" + std::to_string(count - 1) + "\n";
  for (const char* file : {"possible", "present", "online"}) {
    tree.write(std::string("devices/system/cpu/") + file, all);
  }
  for (const char* file : {"offline", "isolated", "nohz_full"}) {
    tree.write(std::string("devices/system/cpu/") + file, "\n");
  }
  for (int cpu = 0; cpu < count; ++cpu) tree.add_cpu(cpu);
}

void add_cache(const ScratchTree& tree, int cpu, int index, const std::string& level, const std::string& type,
               const std::string& shared) {
  const std::string dir =
      "devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index" + std::to_string(index) + "/";
  if (!level.empty()) tree.write(dir + "level", level + "\n");
  if (!type.empty()) tree.write(dir + "type", type + "\n");
  if (!shared.empty()) tree.write(dir + "shared_cpu_list", shared + "\n");
}

CpuPlacement placement(int cpu, int package, std::vector<int> siblings) {
  CpuPlacement p;
  p.cpu = cpu;
  p.package_id = package;
  p.smt_siblings = std::move(siblings);
  return p;
}

}  // namespace

TEST_CASE("to_string names every relation as the relation label does", "[cache_topology]") {
  CHECK(to_string(CpuRelation::smt_sibling) == "smt_sibling");
  CHECK(to_string(CpuRelation::shared_l2) == "shared_l2");
  CHECK(to_string(CpuRelation::shared_l3) == "shared_l3");
  CHECK(to_string(CpuRelation::same_package) == "same_package");
  CHECK(to_string(CpuRelation::cross_package) == "cross_package");
}

TEST_CASE("read_placements reads a two-socket SMT machine", "[cache_topology]") {
  const Machine machine = load("two_socket_smt");
  CHECK(machine.topology.problems.empty());
  CHECK(machine.problems.empty());
  REQUIRE(machine.placements.size() == 16);
  const CpuPlacement& cpu5 = machine.at(5);
  CHECK(cpu5.package_id == 1);
  CHECK(cpu5.smt_siblings == std::vector<int>{5, 13});
  CHECK(cpu5.cluster_cpus == std::vector<int>{5, 13});
  CHECK(cpu5.numa_node == 1);
  REQUIRE(cpu5.caches.size() == 3);  // the L1 instruction cache is skipped
  CHECK(cpu5.caches[0].level == 1);
  CHECK(cpu5.caches[0].type == "Data");
  CHECK(cpu5.caches[0].shared_cpus == std::vector<int>{5, 13});
  CHECK(cpu5.caches[1].level == 2);
  CHECK(cpu5.caches[1].type == "Unified");
  CHECK(cpu5.caches[2].level == 3);
  CHECK(cpu5.caches[2].shared_cpus == std::vector<int>{4, 5, 6, 7, 12, 13, 14, 15});
  CHECK(machine.at(8).numa_node == 0);
}

TEST_CASE("classify_pair on a two-socket SMT machine", "[cache_topology]") {
  const Machine machine = load("two_socket_smt");
  CHECK(machine.relation(0, 8) == CpuRelation::smt_sibling);
  CHECK(machine.relation(8, 0) == CpuRelation::smt_sibling);
  CHECK(machine.relation(13, 5) == CpuRelation::smt_sibling);
  CHECK(machine.relation(0, 1) == CpuRelation::shared_l3);
  CHECK(machine.relation(3, 8) == CpuRelation::shared_l3);
  CHECK(machine.relation(4, 15) == CpuRelation::shared_l3);
  CHECK(machine.relation(0, 4) == CpuRelation::cross_package);
  CHECK(machine.relation(11, 12) == CpuRelation::cross_package);
}

TEST_CASE("classify_pair tells the CCXs of one AMD package apart", "[cache_topology]") {
  const Machine machine = load("amd_multi_ccx");
  CHECK(machine.topology.problems.empty());
  CHECK(machine.problems.empty());  // no cluster_cpus_list, as before Linux 5.16: not a problem
  REQUIRE(machine.placements.size() == 16);
  CHECK(machine.at(4).cluster_cpus.empty());
  CHECK(machine.at(15).numa_node == 0);
  CHECK(machine.relation(0, 8) == CpuRelation::smt_sibling);
  CHECK(machine.relation(0, 1) == CpuRelation::shared_l3);
  CHECK(machine.relation(3, 8) == CpuRelation::shared_l3);
  CHECK(machine.relation(12, 7) == CpuRelation::shared_l3);
  CHECK(machine.relation(0, 4) == CpuRelation::same_package);
  CHECK(machine.relation(11, 12) == CpuRelation::same_package);
}

TEST_CASE("read_placements lists what a VM without caches or nodes lacks", "[cache_topology]") {
  const Machine machine = load("vm_2cpu");
  CHECK(machine.topology.problems.empty());
  REQUIRE(machine.placements.size() == 2);
  CHECK(machine.at(0).caches.empty());
  CHECK(machine.at(1).numa_node == std::nullopt);
  CHECK(machine.relation(0, 1) == CpuRelation::same_package);
  const std::string sys = (fixtures / "vm_2cpu/sys/devices/system").string();
  CHECK(machine.problems ==
        std::vector<std::string>{
            sys + "/node: missing, as on kernels built without CONFIG_NUMA; NUMA nodes unknown",
            sys + "/cpu/cpu0/cache: missing; assuming cpu 0 shares no cache with other CPUs",
            sys + "/cpu/cpu1/cache: missing; assuming cpu 1 shares no cache with other CPUs",
        });
}

TEST_CASE("read_placements accepts a null problems list", "[cache_topology]") {
  const HostReader host = fixture_reader("vm_2cpu");
  CHECK(read_placements(host, read_topology(host), nullptr).size() == 2);
}

TEST_CASE("read_placements skips broken cache, cluster and node entries, naming each", "[cache_topology]") {
  ScratchTree tree;
  add_cpus(tree, 3);
  add_cache(tree, 0, 0, "1", "Data", "0");
  add_cache(tree, 0, 1, "", "Unified", "0-1");    // no level
  add_cache(tree, 0, 2, "2", "Unified", "1-0");   // bad list
  add_cache(tree, 0, 3, "L3", "Unified", "0-2");  // level not a number
  add_cache(tree, 0, 10, "3", "Unified", "0-2");  // after index3 although "index10" < "index3"
  add_cache(tree, 1, 0, "1", "", "1");            // no type
  add_cache(tree, 1, 1, "1", "Instruction", "");  // skipped before its missing list matters
  add_cache(tree, 2, 0, "3", "Unified", "0-2");
  tree.write("devices/system/cpu/cpu1/topology/cluster_cpus_list", "x\n");
  tree.write("devices/system/cpu/cpu2/topology/cluster_cpus_list", "1-2\n");
  tree.write("devices/system/node/node0/cpulist", "0\n");
  tree.write("devices/system/node/node1/has_cpu", "\n");  // no cpulist
  tree.write("devices/system/node/has_cpu", "0\n");       // not a node
  const HostReader host = tree.reader();
  const Topology topology = read_topology(host);
  REQUIRE(topology.problems.empty());
  std::vector<std::string> problems;
  const std::vector<CpuPlacement> placements = read_placements(host, topology, &problems);
  REQUIRE(placements.size() == 3);

  REQUIRE(placements[0].caches.size() == 2);
  CHECK(placements[0].caches[0].level == 1);
  CHECK(placements[0].caches[1].level == 3);
  CHECK(placements[0].numa_node == 0);
  CHECK(placements[1].caches.empty());
  CHECK(placements[1].cluster_cpus.empty());
  CHECK(placements[1].numa_node == std::nullopt);
  CHECK(placements[2].cluster_cpus == std::vector<int>{1, 2});

  const std::string sys = (tree.root() / "devices/system").string();
  const std::string cpu0 = sys + "/cpu/cpu0/cache/";
  CHECK(problems == std::vector<std::string>{
                        sys + "/node/node1/cpulist: missing; its CPUs get no NUMA node from it",
                        cpu0 + "index1/level: missing; ignoring this cache",
                        cpu0 + "index2/shared_cpu_list: bad cpu range \"1-0\" in \"1-0\": end before start; "
                               "ignoring this cache",
                        cpu0 + "index3/level: not an integer: \"L3\"; ignoring this cache",
                        sys + "/cpu/cpu1/topology/cluster_cpus_list: bad cpu number \"x\" in \"x\": "
                              "not a number; ignoring the cluster",
                        sys + "/cpu/cpu1/cache/index0/type: missing; ignoring this cache",
                        "cpu 1: in no " + sys + "/node/nodeK/cpulist; NUMA node unknown",
                        "cpu 2: in no " + sys + "/node/nodeK/cpulist; NUMA node unknown",
                    });
  CHECK(classify_pair(placements[1], placements[2]) == CpuRelation::shared_l2);  // cluster
  CHECK(classify_pair(placements[0], placements[2]) == CpuRelation::shared_l3);
  CHECK(classify_pair(placements[0], placements[1]) == CpuRelation::shared_l3);  // cpu0's index10
}

TEST_CASE("classify_pair picks the closest relation and is symmetric", "[cache_topology]") {
  CpuPlacement a = placement(0, 0, {0});
  CpuPlacement b = placement(1, 0, {1});
  CHECK(classify_pair(a, b) == CpuRelation::same_package);
  b.package_id = 1;
  CHECK(classify_pair(a, b) == CpuRelation::cross_package);
  b.package_id = 0;

  // Only one side lists the shared L3 (the other's cache directory was broken).
  a.caches.push_back({3, "Unified", {0, 1}});
  CHECK(classify_pair(a, b) == CpuRelation::shared_l3);
  CHECK(classify_pair(b, a) == CpuRelation::shared_l3);

  // A shared L2 wins over the L3, whatever the order of the cache entries.
  b.caches.push_back({2, "Unified", {0, 1}});
  CHECK(classify_pair(a, b) == CpuRelation::shared_l2);
  CHECK(classify_pair(b, a) == CpuRelation::shared_l2);

  // A level-4 cache shared by both is not an L3.
  CpuPlacement c = placement(2, 0, {2});
  CpuPlacement d = placement(3, 0, {3});
  c.caches.push_back({4, "Unified", {2, 3}});
  CHECK(classify_pair(c, d) == CpuRelation::same_package);
  c.cluster_cpus = {2, 3};
  CHECK(classify_pair(d, c) == CpuRelation::shared_l2);
  d.smt_siblings = {2, 3};
  CHECK(classify_pair(c, d) == CpuRelation::smt_sibling);
}
