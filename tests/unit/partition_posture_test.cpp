// SPDX-License-Identifier: Apache-2.0
// The checklist and the posture's series on a machine isolated at run time: the untuned laptop's
// fixture (8 CPUs, no boot isolation) with the cgroup partition trees of tests/fixtures/cgroup and
// the kubelet states of tests/fixtures/kubelet. An invalid partition FAILs naming the partition
// and the kernel's reason and is exported as an unmet expectation (the drift alert's series); a
// valid one says what it gives its CPUs and what only boot parameters would.
#include <catch2/catch.hpp>

#include "fixture_tree.h"
#include "probe_result_lookup.h"
#include "probes/posture_checks.h"
#include "probes/posture_isolation.h"
#include "probes/posture_probe.h"

using namespace jitterd;
using jitterd::testing::fixtures;

namespace {

Posture laptop_with(const std::string& cgroup, const std::string& kubelet) {
  const HostReader host(fixtures / "untuned_laptop" / "sys", fixtures / "untuned_laptop" / "proc",
                        fixtures / "cgroup" / cgroup, kubelet.empty() ? "" : fixtures / "kubelet" / kubelet);
  return read_posture(host);
}

std::vector<const PostureCheck*> partition_lines(const std::vector<PostureCheck>& checks,
                                                 const std::string& check) {
  std::vector<const PostureCheck*> out;
  for (const PostureCheck& c : checks)
    if (c.check == check) out.push_back(&c);
  return out;
}

}  // namespace

TEST_CASE("an invalid partition fails the checklist, naming it and the kernel's reason") {
  const Posture p = laptop_with("v2_invalid", "");
  const std::vector<PostureCheck> checks = check_posture(p, {1}, {});
  const auto lines = partition_lines(checks, "cpuset_partition");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]->status == CheckStatus::fail);
  CHECK(lines[0]->expectation);
  CHECK(lines[0]->reason ==
        "partition /rt.slice is isolated invalid (Cpu list in cpuset.cpus not exclusive): its cpuset.cpus 3-4 "
        "went back to "
        "the parent and are not isolated");
  CHECK(lines[0]->fix.back().find("echo isolated > ") == 0);
  CHECK(lines[0]->fix.back().find("cgroup/v2_invalid/rt.slice/cpuset.cpus.partition") != std::string::npos);
  CHECK(lines[1]->reason.find("partition /rt.slice/inner is root invalid (Parent is not a partition root)") == 0);
  CHECK(overall_status(checks) == CheckStatus::fail);
  // Exported as the drift alert's series (JitterdExpectationUnmet), machine-wide.
  ProbeResult result;
  result.metrics = posture_metrics(p, {1}, checks);
  CHECK(testing::value(result, "jitterd_expectation_unmet", {{"check", "cpuset_partition"}, {"cpu", ""}}) == 1);
  CHECK(testing::value(result, "jitterd_posture_cpuset_partition_valid",
                       {{"partition", "/rt.slice"}, {"kind", "isolated"}}) == 0);
  CHECK(testing::value(result, "jitterd_posture_cpuset_partition_valid",
                       {{"partition", "/good.slice"}, {"kind", "isolated"}}) == 1);
}

TEST_CASE("valid partitions pass, and the series goes back to 0") {
  const Posture p = laptop_with("v2_nested", "");
  const std::vector<PostureCheck> checks = check_posture(p, {1}, {});
  const auto lines = partition_lines(checks, "cpuset_partition");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]->status == CheckStatus::pass);
  CHECK(lines[0]->reason ==
        "cpuset partitions valid: /app.slice root 2-3, /app.slice/feed isolated 4-5, /app.slice/trader isolated "
        "6-7");
  ProbeResult result;
  result.metrics = posture_metrics(p, {1}, checks);
  CHECK(testing::value(result, "jitterd_expectation_unmet", {{"check", "cpuset_partition"}, {"cpu", ""}}) == 0);
  CHECK(testing::value(result, "jitterd_posture_cpu_isolated_by_info",
                       {{"cpu", "6"}, {"mechanism", "cpuset"}, {"by", "/app.slice/trader"}}) == 1);
}

TEST_CASE("what a partition gives its CPUs, and what only boot parameters would") {
  const Posture p = laptop_with("v2_isolated", "");
  const std::vector<PostureCheck> checks = check_posture(p, {1}, {});
  const auto lines = partition_lines(checks, "partition_isolation");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]->status == CheckStatus::warn);
  CHECK(lines[0]->reason.find("isolated partition /rt.slice keeps cpus 4-5 out of the scheduler's load balancing, "
                              "but the tick still interrupts cpus 4-5 (not in nohz_full=") == 0);
  CHECK(lines[0]->reason.find("RCU callbacks still run on cpus 4-5") != std::string::npos);
  CHECK(lines[0]->fix.front().find("nohz_full=4-5") != std::string::npos);
  // With the boot parameters the partition lacks, the line passes.
  Posture tuned = p;
  tuned.nohz_full = {4, 5};
  tuned.workqueue_cpus = std::vector<int>{0, 1, 2, 3, 6, 7};
  tuned.irqs.clear();
  const std::vector<PostureCheck> tuned_checks = check_posture(tuned, {1}, {});
  const auto passed = partition_lines(tuned_checks, "partition_isolation");
  REQUIRE(passed.size() == 1);
  CHECK(passed[0]->status == CheckStatus::pass);
}

TEST_CASE("the kubelet's exclusive CPUs: kept from other pods, not from the kernel") {
  const Posture p = laptop_with("v1_cpuset", "static");
  const std::vector<PostureCheck> checks = check_posture(p, {1}, {});
  const auto lines = partition_lines(checks, "kubelet_cpus");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0]->status == CheckStatus::warn);
  CHECK(
      lines[0]->reason.find("the kubelet's static CPU manager gives cpus 2-3 to single containers, keeping other "
                            "pods off, but tasks outside Kubernetes may still run on cpus 2-3") == 0);
  CHECK(partition_lines(checks, "cpuset_partition").empty());
  const ProbeTable table = isolation_table(p);
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[0][1].text == "kubelet");
  CHECK(table.rows[0][2].text == "pod 6f1c2a4e-3b5d-4c8e-9a7f-1d2e3f4a5b6c container trader");
  const std::vector<std::string> notes = isolation_notes(p);
  CHECK(notes[0].find("cpuset partitions: not read: ") == 0);
  CHECK(notes[1] == "kubelet CPU manager: policy static, shared pool 0-1,4-7, exclusive cpus 2-3 (1 container)");
  // The kubelet under the none policy gives no CPU: no line.
  const std::vector<PostureCheck> none_checks = check_posture(laptop_with("v1_cpuset", "none"), {1}, {});
  CHECK(partition_lines(none_checks, "kubelet_cpus").empty());
}

TEST_CASE("the baselines' fingerprint records isolation by mechanism") {
  const HostReader host(fixtures / "untuned_laptop" / "sys", fixtures / "untuned_laptop" / "proc",
                        fixtures / "cgroup" / "v2_isolated", fixtures / "kubelet" / "static");
  const Posture p = read_posture(host);
  CHECK(machine_facts(host, p, {1}).isolation == "cpuset /rt.slice 4-5; kubelet 2-3");
  CHECK(machine_facts(jitterd::testing::fixture_reader("untuned_laptop"),
                      read_posture(jitterd::testing::fixture_reader("untuned_laptop")), {1})
            .isolation == "none");
}

TEST_CASE("CPUs the machine does not have add no series, whatever a file names") {
  jitterd::testing::ScratchTree kubelet;
  kubelet.write(kKubeletCpuStateFile,
                R"({"policyName":"static","defaultCpuSet":"0","entries":{"p":{"c":"3,100-8000"}}})");
  const HostReader host(fixtures / "untuned_laptop" / "sys", fixtures / "untuned_laptop" / "proc",
                        fixtures / "cgroup" / "v1_cpuset", kubelet.root());
  const Posture p = read_posture(host);
  ProbeResult result;
  add_isolation_metrics(p, result.metrics);
  CHECK(testing::named(result, "jitterd_posture_cpu_isolated_by_info").size() == 1);
  CHECK(isolation_table(p).rows.size() == 1);
}
