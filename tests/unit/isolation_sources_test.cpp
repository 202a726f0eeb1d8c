// SPDX-License-Identifier: Apache-2.0
// Run-time isolation: cpuset partition states and the kubelet's CPU manager checkpoint parsed from
// literal text, the cgroup walk over the fixture trees in tests/fixtures/cgroup/<shape> (valid,
// nested, invalid, cpuset bound to v1, malformed), the kubelet file's shapes in
// tests/fixtures/kubelet/<shape>, which CPUs each mechanism isolates, and `watch.cpus: auto`
// taking them (select_cpus) and following a rewrite (auto_watch_cpus).
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "fixture_tree.h"
#include "host/cpu_selection.h"
#include "host/isolation_sources.h"

using namespace jitterd;
using jitterd::testing::fixtures;
using jitterd::testing::ScratchTree;
using Cpus = std::vector<int>;

namespace {

CpusetPartitions cgroup_fixture(const std::string& shape) {
  return read_cpuset_partitions((fixtures / "cgroup" / shape).string());
}

KubeletReading kubelet_fixture(const std::string& shape) {
  return read_kubelet_cpu_state((fixtures / "kubelet" / shape).string());
}

bool any_line_has(const std::vector<std::string>& lines, const std::string& part) {
  for (const std::string& line : lines)
    if (line.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("partition states parse as the kernel writes them") {
  std::string error;
  CHECK(parse_partition_state("member\n", &error) == PartitionState{PartitionKind::member, true, ""});
  CHECK(parse_partition_state("root", &error) == PartitionState{PartitionKind::root, true, ""});
  CHECK(parse_partition_state(" isolated ", &error) == PartitionState{PartitionKind::isolated, true, ""});
  CHECK(parse_partition_state("isolated invalid (Cpu list in cpuset.cpus not exclusive)\n", &error) ==
        PartitionState{PartitionKind::isolated, false, "Cpu list in cpuset.cpus not exclusive"});
  CHECK(parse_partition_state("root invalid (Parent is not a partition root)", &error) ==
        PartitionState{PartitionKind::root, false, "Parent is not a partition root"});
  CHECK(parse_partition_state("root invalid", &error) == PartitionState{PartitionKind::root, false, ""});
  // A reason with a terminal escape stays inert.
  CHECK(parse_partition_state("root invalid (a\x1b[2Jb)", &error)->reason == "a\\x1b[2Jb");
  for (const char* bad : {"", "memberx", "member invalid (x)", "rooted", "isolated valid", "root invalid (x",
                          "isolated invalid x", "exclusive"}) {
    error.clear();
    CHECK_FALSE(parse_partition_state(bad, &error).has_value());
    CHECK(error.find("not a partition state") != std::string::npos);
  }
}

TEST_CASE("the kubelet's checkpoint parses in its V2 and V1 forms, and under the none policy") {
  std::string error;
  const auto v2 = parse_kubelet_cpu_state(
      R"({"policyName":"static","defaultCpuSet":"0-1,6-7","entries":{"pod-b":{"main":"4-5"},"pod-a":{"app":"2","side":"3"}},"checksum":1})",
      &error);
  REQUIRE(v2);
  CHECK(v2->policy == "static");
  CHECK(v2->default_cpus == Cpus{0, 1, 6, 7});
  REQUIRE(v2->entries.size() == 3);
  CHECK(v2->entries[0] == KubeletCpuEntry{"pod-a", "app", {2}});
  CHECK(v2->entries[2] == KubeletCpuEntry{"pod-b", "main", {4, 5}});
  CHECK(kubelet_exclusive_cpus(*v2) == Cpus{2, 3, 4, 5});
  const auto v1 = parse_kubelet_cpu_state(
      "{\n  \"policyName\": \"static\",\n  \"defaultCpuSet\": \"0\",\n  \"entries\": {\"abc123\": \"1-2\"}\n}\n",
      &error);
  REQUIRE(v1);
  CHECK(v1->entries == std::vector<KubeletCpuEntry>{{"", "abc123", {1, 2}}});
  const auto none =
      parse_kubelet_cpu_state(R"({"policyName":"none","defaultCpuSet":"","checksum":1353318690})", &error);
  REQUIRE(none);
  CHECK(none->policy == "none");
  CHECK(kubelet_exclusive_cpus(*none).empty());
  // Unknown fields of a later kubelet are skipped, whatever they hold; escapes are decoded.
  const auto later = parse_kubelet_cpu_state(
      R"({"policyName":"st\u0061tic","future":[1,-2.5e3,true,null,{"a":[[]]}],"defaultCpuSet":"0"})", &error);
  REQUIRE(later);
  CHECK(later->policy == "static");
}

TEST_CASE("a malformed checkpoint is refused saying what and where") {
  const auto refusal = [](std::string_view text) {
    std::string error;
    CHECK_FALSE(parse_kubelet_cpu_state(text, &error).has_value());
    return error;
  };
  // Offsets count from 0: the 51-byte text ends where the '}' was expected.
  CHECK(refusal(R"({"policyName":"static","entries":{"pod":{"c":"2-3"})") == "at byte 51: expected '}'");
  CHECK(refusal(R"({"policyName":"a","policyName":"b"})").find("the key \"policyName\" is given twice") !=
        std::string::npos);
  CHECK(refusal(R"({"policyName":"static","entries":{"pod-a":{"app":"3-2"}}})")
            .find("entries.pod-a.app: bad cpu range \"3-2\"") != std::string::npos);
  CHECK(refusal(R"({"defaultCpuSet":"0"})") == "no policyName: not a CPU manager checkpoint");
  CHECK(refusal(R"({"policyName":"x"} trailing)").find("text after the JSON object") != std::string::npos);
  CHECK(refusal(R"({"policyName":"x","deep":)" + std::string(40, '[')).find("nested deeper than 16") !=
        std::string::npos);
  CHECK(refusal("{\"policyName\":\"a\nb\"}").find("a control character") != std::string::npos);
  CHECK(refusal(R"({"policyName":"\ud800"})").find("surrogate") != std::string::npos);
  CHECK(refusal(R"({"policyName":"x","n":01})").find("expected '}'") != std::string::npos);
  CHECK(refusal("").find("expected '{'") != std::string::npos);
  // The CPUs given out in all are bounded: no file multiplies into millions of CPUs.
  std::string many = R"({"policyName":"static","entries":{)";
  for (int pod = 0; pod < 3; ++pod)
    many += (pod ? "," : "") + std::string("\"p") + std::to_string(pod) + "\":{\"c\":\"0-4095\"}";
  CHECK(refusal(many + "}}").find("more than 8192 CPUs given to containers") != std::string::npos);
}

TEST_CASE("the kubelet's file: absent is no problem, malformed or not a regular file is one naming it") {
  CHECK(read_kubelet_cpu_state("").path.empty());
  const KubeletReading absent = read_kubelet_cpu_state((fixtures / "kubelet" / "no_such_dir").string());
  CHECK_FALSE(absent.state);
  CHECK(absent.problem.empty());
  CHECK(kubelet_fixture("static").state->entries.size() == 1);
  CHECK(kubelet_fixture("v1").state->entries.front().container == "0f3c9a");
  CHECK(kubelet_fixture("none").state->policy == "none");
  const KubeletReading malformed = kubelet_fixture("malformed");
  CHECK_FALSE(malformed.state);
  CHECK(malformed.problem.find("kubelet/malformed/cpu_manager_state: at byte") != std::string::npos);
  CHECK(kubelet_fixture("bad_cpus").problem.find("entries.pod-a.app: bad cpu range") != std::string::npos);
  // A FIFO in its place neither blocks nor feeds the reader.
  ScratchTree tree;
  REQUIRE(::mkfifo((tree.root() / kKubeletCpuStateFile).c_str(), 0600) == 0);
  const auto started = std::chrono::steady_clock::now();
  const KubeletReading fifo = read_kubelet_cpu_state(tree.root().string());
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK(fifo.problem.find("is a FIFO, not a regular file") != std::string::npos);
  ScratchTree big;
  big.write(kKubeletCpuStateFile, std::string(kMaxKubeletStateBytes + 1, ' '));
  CHECK(read_kubelet_cpu_state(big.root().string()).problem.find("more than the limit of 1048576") !=
        std::string::npos);
}

TEST_CASE("the cgroup walk finds an isolated partition and the root's cpuset.cpus.isolated") {
  const CpusetPartitions p = cgroup_fixture("v2_isolated");
  CHECK(p.available);
  CHECK(p.problems.empty());
  CHECK(p.isolated == Cpus{4, 5});
  REQUIRE(p.partitions.size() == 1);
  CHECK(p.partitions[0].path == "/rt.slice");
  CHECK(p.partitions[0].state == PartitionState{PartitionKind::isolated, true, ""});
  CHECK(p.partitions[0].cpus == Cpus{4, 5});
  CHECK(p.cgroups_seen == 2);  // rt.slice, system.slice; ssh.service has no cpuset files
  CHECK(isolated_partition_cpus(p) == Cpus{4, 5});
}

TEST_CASE("nested partitions: a root partition holding two isolated ones") {
  const CpusetPartitions p = cgroup_fixture("v2_nested");
  CHECK_FALSE(p.isolated);  // before 6.9 the root has no cpuset.cpus.isolated
  REQUIRE(p.partitions.size() == 3);
  CHECK(p.partitions[0].path == "/app.slice");
  CHECK(p.partitions[0].state.kind == PartitionKind::root);
  CHECK(p.partitions[1].path == "/app.slice/feed");
  CHECK(p.partitions[2].path == "/app.slice/trader");
  CHECK(isolated_partition_cpus(p) == Cpus{4, 5, 6, 7});
}

TEST_CASE("invalid partitions keep the kernel's reason and isolate nothing") {
  const CpusetPartitions p = cgroup_fixture("v2_invalid");
  REQUIRE(p.partitions.size() == 3);
  CHECK(p.partitions[1].path == "/rt.slice");
  CHECK_FALSE(p.partitions[1].state.valid);
  CHECK(p.partitions[1].state.reason == "Cpu list in cpuset.cpus not exclusive");
  CHECK(p.partitions[1].requested == Cpus{3, 4});
  CHECK(p.partitions[2].path == "/rt.slice/inner");
  CHECK(p.partitions[2].state == PartitionState{PartitionKind::root, false, "Parent is not a partition root"});
  CHECK(isolated_partition_cpus(p) == Cpus{6, 7});
}

TEST_CASE("no cpuset in cgroup v2, or no cgroup v2 at all: nothing read, and why") {
  const CpusetPartitions v1 = cgroup_fixture("v1_cpuset");
  CHECK_FALSE(v1.available);
  CHECK(v1.absent_why.find("no cpuset controller") != std::string::npos);
  CHECK(v1.problems.empty());
  const CpusetPartitions none = cgroup_fixture("no_such_tree");
  CHECK_FALSE(none.available);
  CHECK(none.absent_why.find("No such file or directory") != std::string::npos);
}

TEST_CASE("malformed cgroup files are one problem each, naming the file; links are not followed") {
  const CpusetPartitions p = cgroup_fixture("malformed");
  CHECK(p.available);
  CHECK_FALSE(p.isolated);
  CHECK(any_line_has(p.problems, "cgroup/malformed/cpuset.cpus.isolated: bad cpu"));
  CHECK(any_line_has(p.problems, "cgroup/malformed/odd/cpuset.cpus.partition: not a partition state"));
  CHECK(any_line_has(p.problems, "cgroup/malformed/bad_cpus/cpuset.cpus.effective: bad cpu range \"9-2\""));
  CHECK(any_line_has(p.problems, "cgroup/malformed/nocontrol/cgroup.subtree_control: No such file"));
  CHECK(p.cgroups_seen == 3);  // bad_cpus, nocontrol, odd: never the link loop
  REQUIRE(p.partitions.size() == 1);
  CHECK(p.partitions[0].cpus.empty());
}

TEST_CASE("the walk is bounded in depth") {
  ScratchTree tree;
  tree.write("cgroup.controllers", "cpuset\n");
  std::string dir;
  for (std::size_t depth = 0; depth <= kMaxCgroupDepth + 2; ++depth) {
    tree.write(dir + "cgroup.subtree_control", "cpuset\n");
    dir += "d/";
  }
  const CpusetPartitions p = read_cpuset_partitions(tree.root().string());
  CHECK(p.cgroups_seen == kMaxCgroupDepth);
  CHECK(any_line_has(p.problems, "deeper than 32 levels not read"));
}

TEST_CASE("which CPUs each mechanism isolates, and the fingerprint's line") {
  IsolationSources sources{cgroup_fixture("v2_nested"), kubelet_fixture("static")};
  const std::vector<IsolatedCpu> by = isolated_by({1}, sources);
  REQUIRE(by.size() == 7);
  CHECK(by[0] == IsolatedCpu{1, IsolationMechanism::isolcpus, ""});
  CHECK(by[1] ==
        IsolatedCpu{2, IsolationMechanism::kubelet, "pod 6f1c2a4e-3b5d-4c8e-9a7f-1d2e3f4a5b6c container trader"});
  CHECK(by[3] == IsolatedCpu{4, IsolationMechanism::cpuset, "/app.slice/feed"});
  CHECK(by[6] == IsolatedCpu{7, IsolationMechanism::cpuset, "/app.slice/trader"});
  CHECK(runtime_isolated_cpus(sources) == Cpus{2, 3, 4, 5, 6, 7});
  CHECK(isolation_summary({1}, sources) ==
        "isolcpus 1; cpuset /app.slice/feed 4-5; cpuset /app.slice/trader 6-7; kubelet 2-3");
  CHECK(isolation_summary({}, IsolationSources{cgroup_fixture("v1_cpuset"), kubelet_fixture("none")}) == "none");
  // CPUs the root lists but no partition read holds are still isolated by cpuset.
  CpusetPartitions cut = cgroup_fixture("v2_isolated");
  cut.partitions.clear();
  CHECK(isolated_by({}, IsolationSources{cut, {}}) ==
        std::vector<IsolatedCpu>{{4, IsolationMechanism::cpuset, "cpuset.cpus.isolated"},
                                 {5, IsolationMechanism::cpuset, "cpuset.cpus.isolated"}});
}

TEST_CASE("watch.cpus auto takes the run-time isolated CPUs; cpus auto neither samples nor houses there") {
  Topology topo;
  for (int cpu = 0; cpu < 8; ++cpu) {
    topo.possible.push_back(cpu);
    topo.online.push_back(cpu);
    topo.cpus.push_back({cpu, cpu, 0, {cpu}});
  }
  CpuRequest request;
  request.watch = CpuRequest::Watch::automatic;
  request.runtime_isolated = {4, 5, 6, 7};
  const CpuSelectionResult result = select_cpus(request, topo, {0, 1, 2, 3, 4, 5, 6, 7});
  REQUIRE(result.selection);
  CHECK(result.selection->watched == Cpus{4, 5, 6, 7});
  CHECK(result.selection->sampled == Cpus{1, 2, 3});
  CHECK(result.selection->housekeeping == Cpus{0});
  CHECK(any_line_has(result.selection->notes, "isolated at run time"));
  request.watch = CpuRequest::Watch::none;
  const CpuSelectionResult unwatched = select_cpus(request, topo, {0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(unwatched.selection->sampled == Cpus{1, 2, 3});
}

TEST_CASE("auto_watch_cpus follows a partition made and a pod given CPUs") {
  ScratchTree tree;
  tree.write("devices/system/cpu/possible", "0-7\n");
  tree.write("devices/system/cpu/online", "0-7\n");
  tree.write("devices/system/cpu/isolated", "\n");
  tree.write("fs/cgroup/cgroup.controllers", "cpuset cpu\n");
  tree.write("fs/cgroup/cgroup.subtree_control", "cpuset\n");
  const HostReader host(tree.root(), tree.root() / "proc", "", tree.root() / "kubelet");
  std::vector<std::string> problems;
  CHECK(auto_watch_cpus(host, {1}, &problems).empty());
  CHECK(problems.empty());
  tree.write("fs/cgroup/rt/cgroup.subtree_control", "\n");
  tree.write("fs/cgroup/rt/cpuset.cpus", "4-5\n");
  tree.write("fs/cgroup/rt/cpuset.cpus.effective", "4-5\n");
  tree.write("fs/cgroup/rt/cpuset.cpus.partition", "isolated\n");
  CHECK(auto_watch_cpus(host, {1}) == Cpus{4, 5});
  tree.write("kubelet/cpu_manager_state",
             R"({"policyName":"static","defaultCpuSet":"0,4-7","entries":{"p":{"c":"1-3"}}})");
  CHECK(auto_watch_cpus(host, {1}) == Cpus{2, 3, 4, 5});  // 1 stays sampled
  tree.write("fs/cgroup/rt/cpuset.cpus.partition", "isolated invalid (Cpu list in cpuset.cpus not exclusive)\n");
  CHECK(auto_watch_cpus(host, {1}) == Cpus{2, 3});
  tree.write("kubelet/cpu_manager_state", "{");
  CHECK(auto_watch_cpus(host, {1}, &problems).empty());
  CHECK(any_line_has(problems, "kubelet/cpu_manager_state: at byte 1"));
}
