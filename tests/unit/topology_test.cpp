// SPDX-License-Identifier: Apache-2.0
// read_topology (and the HostReader under it) against the fixture trees in tests/fixtures and a
// few trees built on the fly for files the fixtures do not break.
#include "host/topology.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "fixture_tree.h"

using jitterd::HostReader;
using jitterd::read_topology;
using jitterd::Topology;

namespace {

using jitterd::testing::fixture_reader;
using jitterd::testing::fixtures;
using jitterd::testing::ScratchTree;

std::string cpu_path(const std::string& machine, const std::string& file) {
  return (fixtures / machine / "sys/devices/system/cpu" / file).string();
}

}  // namespace

TEST_CASE("HostReader strips one trailing newline and tells missing from empty", "[host_reader]") {
  ScratchTree tree;
  tree.write("two_lines", "a\nb\n\n");
  tree.write("empty", "");
  tree.write("proc/self_less/status", "x\n");
  const HostReader host = tree.reader();
  CHECK(host.read_sys("two_lines") == "a\nb\n");
  CHECK(host.read_sys("empty") == "");
  CHECK(host.read_sys("absent") == std::nullopt);
  CHECK(host.read_sys("proc") == std::nullopt);  // a directory is not a readable file
  CHECK(host.read_proc("self_less/status") == "x");
  CHECK(host.sys_exists("two_lines"));
  CHECK_FALSE(host.sys_exists("absent"));
}

TEST_CASE("HostReader keeps a leading slash inside its root", "[host_reader]") {
  const HostReader host("/fixture/sys", "/fixture/proc");
  CHECK(host.sys_path("/devices/system/cpu/online") == "/fixture/sys/devices/system/cpu/online");
  CHECK(host.proc_path("1/status") == "/fixture/proc/1/status");
  CHECK(HostReader().sys_path("devices") == "/sys/devices");
  CHECK(HostReader().proc_path("stat") == "/proc/stat");
}

TEST_CASE("HostReader lists a sysfs directory", "[host_reader]") {
  const HostReader host = fixture_reader("offline_cpu");
  const auto names = host.list_sys("devices/system/cpu");
  CHECK(std::count(names.begin(), names.end(), "cpu3") == 1);
  CHECK(host.list_sys("no/such/dir").empty());
}

TEST_CASE("read_topology reads an 8-thread SMT machine with isolated CPUs", "[topology]") {
  const Topology topo = read_topology(fixture_reader("smt8_isolated"));
  const std::vector<int> all{0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(topo.possible == all);
  CHECK(topo.present == all);
  CHECK(topo.online == all);
  CHECK(topo.offline.empty());
  CHECK(topo.isolated == std::vector<int>{2, 3, 6, 7});
  CHECK(topo.nohz_full == std::vector<int>{2, 3, 6, 7});
  CHECK(topo.problems.empty());
  REQUIRE(topo.cpus.size() == 8);
  const jitterd::CpuTopology* cpu5 = topo.find(5);
  REQUIRE(cpu5 != nullptr);
  CHECK(cpu5->cpu == 5);
  CHECK(cpu5->core_id == 1);
  CHECK(cpu5->package_id == 0);
  CHECK(cpu5->thread_siblings == std::vector<int>{1, 5});
  CHECK(topo.siblings_of(2) == std::vector<int>{2, 6});
  CHECK(topo.find(8) == nullptr);
  CHECK(topo.siblings_of(8).empty());
}

TEST_CASE("read_topology skips an offline CPU without a topology directory", "[topology]") {
  const Topology topo = read_topology(fixture_reader("offline_cpu"));
  CHECK(topo.possible == std::vector<int>{0, 1, 2, 3});
  CHECK(topo.online == std::vector<int>{0, 1, 2});
  CHECK(topo.offline == std::vector<int>{3});
  CHECK(topo.isolated.empty());
  CHECK(topo.nohz_full.empty());
  CHECK(topo.problems.empty());
  REQUIRE(topo.cpus.size() == 3);
  CHECK(topo.find(3) == nullptr);
  CHECK(topo.siblings_of(1) == std::vector<int>{1});
}

TEST_CASE("read_topology treats missing isolated, nohz_full and offline files as empty", "[topology]") {
  const Topology topo = read_topology(fixture_reader("missing_isolated"));
  CHECK(topo.online == std::vector<int>{0, 1});
  CHECK(topo.offline.empty());
  CHECK(topo.isolated.empty());
  CHECK(topo.nohz_full.empty());
  CHECK_FALSE(topo.nohz_full_supported);
  CHECK(read_topology(fixture_reader("vm_2cpu")).nohz_full_supported);
  CHECK(topo.cpus.size() == 2);
  const std::vector<std::string> expected{
      cpu_path("missing_isolated", "offline") + ": missing; treating the offline set as empty",
      cpu_path("missing_isolated", "isolated") + ": missing; treating the isolated set as empty",
      cpu_path("missing_isolated", "nohz_full") +
          ": missing, as on kernels built without CONFIG_NO_HZ_FULL; treating the nohz_full "
          "set as empty",
  };
  CHECK(topo.problems == expected);
}

TEST_CASE("read_topology falls back to possible minus offline without an online file", "[topology]") {
  ScratchTree tree;
  tree.write("devices/system/cpu/possible", "0-3\n");
  tree.write("devices/system/cpu/present", "0-3\n");
  tree.write("devices/system/cpu/offline", "2\n");
  tree.write("devices/system/cpu/isolated", "\n");
  tree.write("devices/system/cpu/nohz_full", "(null)\n");  // some kernels print this when off
  for (int cpu : {0, 1, 3}) tree.add_cpu(cpu);
  const Topology topo = read_topology(tree.reader());
  CHECK(topo.online == std::vector<int>{0, 1, 3});
  CHECK(topo.nohz_full.empty());
  CHECK(topo.problems == std::vector<std::string>{(tree.root() / "devices/system/cpu/online").string() +
                                                  ": missing; using possible minus offline: 0-1,3"});
}

TEST_CASE("read_topology falls back to the cpuN directories without possible and online", "[topology]") {
  ScratchTree tree;
  tree.write("devices/system/cpu/isolated", "\n");
  tree.write("devices/system/cpu/nohz_full", "\n");
  tree.write("devices/system/cpu/offline", "\n");
  tree.write("devices/system/cpu/cpufreq/boost", "1\n");  // not a CPU
  for (int cpu : {0, 1}) tree.add_cpu(cpu);
  const Topology topo = read_topology(tree.reader());
  const std::string cpu_dir = (tree.root() / "devices/system/cpu").string();
  CHECK(topo.possible == std::vector<int>{0, 1});
  CHECK(topo.present == std::vector<int>{0, 1});
  CHECK(topo.online == std::vector<int>{0, 1});
  CHECK(topo.problems == std::vector<std::string>{
                             cpu_dir + "/possible: missing; using the cpuN directories: 0-1",
                             cpu_dir + "/present: missing; treating every possible CPU as present",
                             cpu_dir + "/online: missing; using possible minus offline: 0-1",
                         });
}

TEST_CASE("read_topology reports unparsable lists and uses the fallback", "[topology]") {
  ScratchTree tree;
  tree.write("devices/system/cpu/possible", "0-1\n");
  tree.write("devices/system/cpu/present", "0-1\n");
  tree.write("devices/system/cpu/online", "0-1\n");
  tree.write("devices/system/cpu/offline", "\n");
  tree.write("devices/system/cpu/isolated", "1-0\n");
  tree.write("devices/system/cpu/nohz_full", "\n");
  for (int cpu : {0, 1}) tree.add_cpu(cpu);
  const Topology topo = read_topology(tree.reader());
  CHECK(topo.isolated.empty());
  CHECK(topo.problems == std::vector<std::string>{(tree.root() / "devices/system/cpu/isolated").string() +
                                                  ": bad cpu range \"1-0\" in \"1-0\": end before start; treating "
                                                  "the isolated set as empty"});
}

TEST_CASE("read_topology assumes a core of its own for a CPU without topology", "[topology]") {
  ScratchTree tree;
  tree.write("devices/system/cpu/possible", "0-2\n");
  tree.write("devices/system/cpu/present", "0-2\n");
  tree.write("devices/system/cpu/online", "0-2\n");
  tree.write("devices/system/cpu/offline", "\n");
  tree.write("devices/system/cpu/isolated", "\n");
  tree.write("devices/system/cpu/nohz_full", "\n");
  tree.add_cpu(0);
  tree.write("devices/system/cpu/cpu1/online", "1\n");  // directory, but no topology in it
  tree.write("devices/system/cpu/cpu2/topology/core_id", "seven\n");
  tree.write("devices/system/cpu/cpu2/topology/physical_package_id", "-1\n");
  const Topology topo = read_topology(tree.reader());
  const std::string cpu_dir = (tree.root() / "devices/system/cpu").string();
  REQUIRE(topo.cpus.size() == 3);
  const auto* cpu1 = topo.find(1);
  REQUIRE(cpu1 != nullptr);
  CHECK(cpu1->core_id == 1);
  CHECK(cpu1->package_id == 0);
  CHECK(cpu1->thread_siblings == std::vector<int>{1});
  const auto* cpu2 = topo.find(2);
  REQUIRE(cpu2 != nullptr);
  CHECK(cpu2->core_id == 2);
  CHECK(cpu2->package_id == -1);
  CHECK(cpu2->thread_siblings == std::vector<int>{2});
  CHECK(topo.problems == std::vector<std::string>{
                             cpu_dir + "/cpu1/topology: missing; assuming cpu 1 is a core of its own in "
                                       "package 0",
                             cpu_dir + "/cpu2/topology/core_id: not an integer: \"seven\"; assuming 2",
                             cpu_dir + "/cpu2/topology/thread_siblings_list: missing; assuming cpu 2 has no "
                                       "SMT siblings",
                         });
}
