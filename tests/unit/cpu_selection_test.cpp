// SPDX-License-Identifier: Apache-2.0
// select_cpus: the `cpus:` rules on the fixture machines and on hand-built topologies.
#include "host/cpu_selection.h"
#include "fixture_tree.h"

#include <catch2/catch.hpp>

#include <set>

using jitterd::CpuRequest;
using jitterd::CpuSelection;
using jitterd::CpuSelectionResult;
using jitterd::select_cpus;
using jitterd::Topology;
using Cpus = std::vector<int>;
using Lines = std::vector<std::string>;

namespace {

using jitterd::testing::fixtures;

Topology fixture_topology(const std::string& machine) {
  return jitterd::read_topology(jitterd::HostReader(fixtures / machine / "sys", fixtures / machine / "proc"));
}

// Online CPUs 0..n-1, each its own core, with the given isolated set.
Topology flat_topology(int n, Cpus isolated = {}) {
  Topology topo;
  for (int cpu = 0; cpu < n; ++cpu) {
    topo.possible.push_back(cpu);
    topo.online.push_back(cpu);
    topo.cpus.push_back({cpu, cpu, 0, {cpu}});
  }
  topo.present = topo.possible;
  topo.isolated = std::move(isolated);
  return topo;
}

const CpuRequest automatic{};
const CpuRequest all_threads = [] {
  CpuRequest request;
  request.all_threads_per_core = true;
  return request;
}();

CpuRequest listed(Cpus cpus) {
  CpuRequest request;
  request.automatic = false;
  request.list = std::move(cpus);
  return request;
}

const CpuSelection& selected(const CpuSelectionResult& result) {
  INFO(Catch::Detail::stringify(result.errors));
  REQUIRE(result.selection);
  REQUIRE(result.errors.empty());
  return *result.selection;
}

}  // namespace

TEST_CASE("auto samples the isolated CPUs and keeps the rest for housekeeping", "[cpu_selection]") {
  // isolcpus= has taken 2-3,6-7 out of the default affinity.
  const auto result = select_cpus(all_threads, fixture_topology("smt8_isolated"), {0, 1, 4, 5});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{2, 3, 6, 7});
  CHECK(s.housekeeping == Cpus{0, 1, 4, 5});
  CHECK(s.notes == Lines{"cpus: auto: sampling the isolated CPUs 2-3,6-7, housekeeping on 0-1,4-5",
                         "cpus: isolated CPUs outside this process's allowed CPUs (0-1,4-5): 2-3,6-7; "
                         "isolcpus= keeps them out of the default affinity, but pinning to them is still "
                         "permitted, so they are sampled"});
}

TEST_CASE("auto with isolated CPUs inside the affinity needs no isolcpus note", "[cpu_selection]") {
  const auto result = select_cpus(all_threads, fixture_topology("smt8_isolated"), {0, 1, 2, 3, 4, 5, 6, 7});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{2, 3, 6, 7});
  CHECK(s.housekeeping == Cpus{0, 1, 4, 5});
  CHECK(s.notes == Lines{"cpus: auto: sampling the isolated CPUs 2-3,6-7, housekeeping on 0-1,4-5"});
}

TEST_CASE("auto samples one thread per core by default, its isolated sibling left idle", "[cpu_selection]") {
  // smt8_isolated: cores {0,4} {1,5} {2,6} {3,7}; 2-3,6-7 isolated.
  const auto result = select_cpus(automatic, fixture_topology("smt8_isolated"), {0, 1, 2, 3, 4, 5, 6, 7});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{2, 3});
  CHECK(s.housekeeping == Cpus{0, 1, 4, 5});  // 6 and 7 stay idle, even though allowed
  CHECK(s.notes == Lines{"cpus: auto: sampling the isolated CPUs 2-3, housekeeping on 0-1,4-5",
                         "cpus: auto: one thread per core; SMT siblings left idle, neither sampled nor "
                         "housekeeping: 6-7 (cpus_per_core: all samples them too)"});
}

TEST_CASE("auto on a tuned two-socket SMT server samples one thread of each isolated core", "[cpu_selection]") {
  // tuned_server: 2 sockets x 4 cores x 2 threads; cores {n, n+8}; 2-7,10-15 isolated.
  const Topology topo = fixture_topology("tuned_server");
  const auto result = select_cpus(automatic, topo, {0, 1, 8, 9});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{2, 3, 4, 5, 6, 7});
  CHECK(s.housekeeping == Cpus{0, 1, 8, 9});
  for (int cpu : s.sampled) {
    INFO("cpu " << cpu);
    CHECK(topo.siblings_of(cpu) == Cpus{cpu, cpu + 8});
  }
  const std::set<int> packages = {topo.find(2)->package_id, topo.find(7)->package_id};
  CHECK(packages.size() == 2);  // both sockets sampled
  CHECK(select_cpus(all_threads, topo, {0, 1, 8, 9}).selection->sampled ==
        Cpus{2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15});
  // An explicit list is sampled as written, siblings and all.
  CHECK(select_cpus(listed({2, 10}), topo, {0, 1, 8, 9}).selection->sampled == Cpus{2, 10});
}

TEST_CASE("auto skips isolated CPUs that are offline", "[cpu_selection]") {
  const auto result = select_cpus(automatic, flat_topology(4, {2, 3, 9}), {0, 1});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{2, 3});
  CHECK(s.notes.at(0) == "cpus: auto: isolated but offline, not sampled: 9");
}

TEST_CASE("auto keeps one CPU for housekeeping when every allowed CPU is isolated", "[cpu_selection]") {
  const auto result = select_cpus(automatic, flat_topology(4, {0, 1, 2, 3}), {0, 1, 2, 3});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{1, 2, 3});
  CHECK(s.housekeeping == Cpus{0});
  CHECK(s.notes == Lines{"cpus: auto: the isolated CPUs (0-3) cover every allowed CPU; keeping 0 for "
                         "housekeeping",
                         "cpus: auto: sampling the isolated CPUs 1-3, housekeeping on 0"});
}

TEST_CASE("auto without isolated CPUs keeps the first core for housekeeping", "[cpu_selection]") {
  Topology topo = fixture_topology("smt8_isolated");
  topo.isolated.clear();
  const auto result = select_cpus(all_threads, topo, {0, 1, 2, 3, 4, 5, 6, 7});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{1, 2, 3, 5, 6, 7});
  CHECK(s.housekeeping == Cpus{0, 4});
  CHECK(s.notes == Lines{"cpus: auto: no isolated CPUs; sampling 1-3,5-7, housekeeping on "
                         "0,4 (cpu 0 and its SMT siblings)"});
  const auto one_result = select_cpus(automatic, topo, {0, 1, 2, 3, 4, 5, 6, 7});
  const CpuSelection& one = selected(one_result);
  CHECK(one.sampled == Cpus{1, 2, 3});
  CHECK(one.housekeeping == Cpus{0, 4});  // 5-7 idle
  CHECK(one.notes.back() ==
        "cpus: auto: one thread per core; SMT siblings left idle, neither sampled nor housekeeping: 5-7 "
        "(cpus_per_core: all samples them too)");
}

TEST_CASE("auto without isolated CPUs on the offline_cpu machine", "[cpu_selection]") {
  const auto result = select_cpus(automatic, fixture_topology("offline_cpu"), {0, 1, 2});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{1, 2});
  CHECK(s.housekeeping == Cpus{0});
  CHECK(s.notes == Lines{"cpus: auto: no isolated CPUs; sampling 1-2, housekeeping on 0"});
}

TEST_CASE("auto on a 2-CPU VM samples one CPU and keeps the other", "[cpu_selection]") {
  const auto result = select_cpus(automatic, fixture_topology("missing_isolated"), {0, 1});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{1});
  CHECK(s.housekeeping == Cpus{0});
}

TEST_CASE("auto housekeeping starts at the lowest allowed CPU, not the lowest online", "[cpu_selection]") {
  const auto result = select_cpus(automatic, flat_topology(8), {4, 5, 6, 7});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{5, 6, 7});
  CHECK(s.housekeeping == Cpus{4});
  CHECK(s.notes == Lines{"cpus: auto: no isolated CPUs; sampling 5-7, housekeeping on 4",
                         "cpus: auto: online CPUs outside this process's allowed CPUs (4-7), "
                         "not sampled: 0-3"});
}

TEST_CASE("auto on a single SMT core samples the sibling of the housekeeping CPU", "[cpu_selection]") {
  Topology topo = flat_topology(2);
  topo.cpus[0].thread_siblings = {0, 1};
  topo.cpus[1].thread_siblings = {0, 1};
  const auto result = select_cpus(automatic, topo, {0, 1});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{1});
  CHECK(s.housekeeping == Cpus{0});
  CHECK(s.notes == Lines{"cpus: auto: no isolated CPUs; sampling 1, housekeeping on 0 (one core only: "
                         "no sibling-free CPU to sample)",
                         "cpus: sampled CPUs sharing a core with housekeeping (SMT siblings): 1; expect "
                         "the daemon's own activity in their numbers"});
}

TEST_CASE("auto needs two usable CPUs, and says how to sample none", "[cpu_selection]") {
  const std::string fix =
      "; to sample none (a daemon that only watches the application's CPUs), set cpus: [] (or "
      "--cpus none)";
  const std::string one_cpu =
      "at least two usable CPUs are needed: one to sample and one for housekeeping; "
      "online: 0, allowed: 0" +
      fix;
  const auto result = select_cpus(automatic, flat_topology(1), {0});
  CHECK_FALSE(result.selection);
  CHECK(result.errors == Lines{one_cpu});
  // Two online CPUs, but this process may use only one of them.
  CHECK(select_cpus(automatic, flat_topology(2), {1}).errors ==
        Lines{"at least two usable CPUs are needed: one to sample and one for housekeeping; "
              "online: 0-1, allowed: 1" +
              fix});
  // docs/watch.md's first steps on a 2-CPU machine: CPU 1 watched, cpus: left at auto.
  CpuRequest watching = automatic;
  watching.watch = CpuRequest::Watch::listed;
  watching.watch_list = {1};
  CHECK(select_cpus(watching, flat_topology(2), {0, 1}).errors ==
        Lines{"at least two usable CPUs are needed: one to sample and one for housekeeping; "
              "online: 0-1, allowed: 0-1, watched (never sampled): 1" +
              fix});
  CpuRequest only_watching = watching;
  only_watching.automatic = false;
  const auto watch_only = select_cpus(only_watching, flat_topology(2), {0, 1});
  REQUIRE(watch_only.selection);
  CHECK(watch_only.selection->watched == Cpus{1});
  CHECK(watch_only.selection->sampled.empty());
}

TEST_CASE("an explicit list is sampled as given", "[cpu_selection]") {
  const auto result = select_cpus(listed({3, 1, 3}), fixture_topology("smt8_isolated"), {0, 1, 2, 3, 4, 5, 6, 7});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{1, 3});
  CHECK(s.housekeeping == Cpus{0, 2, 4, 5, 6, 7});
  CHECK(s.notes.at(0) == "cpus: sampling 1,3 as listed, housekeeping on 0,2,4-7");
  CHECK(s.notes.at(1) ==
        "cpus: sampled CPUs sharing a core with housekeeping (SMT siblings): 1,3; expect the "
        "daemon's own activity in their numbers");
}

TEST_CASE("an explicit list gives one error per unusable CPU", "[cpu_selection]") {
  Topology topo = flat_topology(10);
  topo.online = {0, 1, 2, 3, 4, 5, 6, 7};  // 8 and 9 exist but are offline
  topo.cpus.resize(8);
  const auto result = select_cpus(listed({1, 3, 9, 12}), topo, {0, 1});
  CHECK_FALSE(result.selection);
  CHECK(result.errors == Lines{"cpu 3: not in this process's allowed CPUs (allowed: 0-1)",
                               "cpu 9: not online (online: 0-7)", "cpu 12: does not exist (possible: 0-9)"});
}

TEST_CASE("an explicit list on the offline_cpu machine rejects the offline CPU", "[cpu_selection]") {
  const auto result = select_cpus(listed({2, 3}), fixture_topology("offline_cpu"), {0, 1, 2});
  CHECK(result.errors == Lines{"cpu 3: not online (online: 0-2)"});
  CHECK(select_cpus(listed({-1}), fixture_topology("offline_cpu"), {0, 1, 2}).errors ==
        Lines{"cpu -1: does not exist (possible: 0-3)"});
}

TEST_CASE("an explicit list may name isolated CPUs outside the affinity", "[cpu_selection]") {
  const auto result = select_cpus(listed({2, 6}), fixture_topology("smt8_isolated"), {0, 1, 4, 5});
  const CpuSelection& s = selected(result);
  CHECK(s.sampled == Cpus{2, 6});
  CHECK(s.housekeeping == Cpus{0, 1, 4, 5});
  CHECK(s.notes == Lines{"cpus: sampling 2,6 as listed, housekeeping on 0-1,4-5",
                         "cpus: isolated CPUs outside this process's allowed CPUs (0-1,4-5): 2,6; "
                         "isolcpus= keeps them out of the default affinity, but pinning to them is still "
                         "permitted, so they are sampled"});
}

TEST_CASE("an explicit list must leave a CPU for housekeeping", "[cpu_selection]") {
  const auto result = select_cpus(listed({0, 1}), fixture_topology("missing_isolated"), {0, 1});
  CHECK_FALSE(result.selection);
  CHECK(result.errors == Lines{"no CPU left for housekeeping: sampled 0-1 covers every allowed "
                               "CPU (0-1); leave at least one out"});
}

TEST_CASE("isolated CPUs never count as housekeeping CPUs", "[cpu_selection]") {
  // Sampling the only allowed CPU plus an isolated one leaves nothing for the daemon.
  const auto result = select_cpus(listed({0, 2}), flat_topology(4, {2, 3}), {0});
  CHECK(result.errors == Lines{"no CPU left for housekeeping: sampled 0,2 covers every allowed "
                               "CPU (0); leave at least one out"});
}

TEST_CASE("an empty explicit list samples nothing and keeps every allowed CPU for housekeeping",
          "[cpu_selection]") {
  const auto result = select_cpus(listed({}), flat_topology(4), {0, 1, 2, 3});
  REQUIRE(result.selection);
  CHECK(result.selection->sampled.empty());
  CHECK(result.selection->housekeeping == Cpus{0, 1, 2, 3});
}
