// The isolation checklist on hand-built postures (each rule, expectations against the rules of
// thumb, the worst status), and the posture probe on a scratch tree whose fingerprint changes.
#include "probes/posture_checks.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "fixture_tree.h"
#include "probe_result_lookup.h"
#include "probes/posture_probe.h"

using namespace jitterd;
using namespace std::chrono_literals;
using jitterd::testing::value;

namespace {

// A machine tuned by the book: CPUs 2-3 isolated and tickless, SMT off, IRQs on 0-1.
Posture quiet_machine() {
  Posture p;
  p.online = {0, 1, 2, 3};
  p.isolated = {2, 3};
  p.nohz_full = {2, 3};
  p.smt.control = "off";
  for (int cpu : p.online) {
    p.smt.thread_siblings[cpu] = {cpu};
    p.cpufreq.push_back({cpu, "performance", 800000, 3600000, 3600000});
    p.cpuidle.push_back({cpu, {{0, "POLL", 0, true}, {1, "C1", 2, true}, {2, "C6", 133, false}}});
  }
  p.clocksource = ClocksourceInfo{"tsc", {"tsc", "hpet"}};
  p.thp.enabled = "never";
  p.sysctls.nmi_watchdog = "0";
  p.sysctls.stat_interval = "10";
  p.workqueue_cpus = std::vector<int>{0, 1};
  p.irqs = {{24, "eth0-rx-0", {0}, true, {}}, {25, "eth0-rx-1", {1}, true, {}}, {30, "", {2}, true, {}}};
  return p;
}

std::vector<PostureCheck> lines_of(const std::vector<PostureCheck>& checks, const std::string& check) {
  std::vector<PostureCheck> out;
  std::copy_if(checks.begin(), checks.end(), std::back_inserter(out),
               [&](const PostureCheck& c) { return c.check == check; });
  return out;
}

}  // namespace

TEST_CASE("posture checks: a machine tuned by the book passes every line", "[posture_checks]") {
  const std::vector<PostureCheck> checks = check_posture(quiet_machine(), {2, 3}, {});
  for (const PostureCheck& c : checks) {
    INFO(c.check << ": " << c.reason);
    CHECK(c.status == CheckStatus::pass);
    CHECK_FALSE(c.cpu.has_value());
  }
  CHECK(checks.size() == 12);
  CHECK(overall_status(checks) == CheckStatus::pass);
  CHECK(overall_status({}) == CheckStatus::pass);
}

TEST_CASE("posture checks: each rule of thumb WARNs per sampled cpu with its reason", "[posture_checks]") {
  Posture p = quiet_machine();
  p.isolated = {2};
  p.irqs.push_back({45, "mlx5_comp3", {3}, true, {}});
  p.cpufreq[3].governor = "powersave";
  p.cpuidle[3].states[2].enabled = true;
  p.smt.thread_siblings[3] = {1, 3};
  p.thp.enabled = "always";
  const std::vector<PostureCheck> checks = check_posture(p, {2, 3}, {});
  CHECK(overall_status(checks) == CheckStatus::warn);
  const auto one = [&](const std::string& check) {
    const auto found = lines_of(checks, check);
    REQUIRE(found.size() == 1);
    CHECK(found[0].status == CheckStatus::warn);
    CHECK_FALSE(found[0].expectation);
    return found[0];
  };
  CHECK(one("isolated").cpu == 3);
  CHECK(one("device_irqs").reason == "1 device IRQ(s) may fire on cpu 3: irq 45 mlx5_comp3 (effective affinity)");
  CHECK(one("governor").reason == "cpu 3 runs the powersave governor, not performance");
  CHECK(one("cstates").reason == "cpu 3 may enter C6 (exit latency 133 us, limit 10 us)");
  CHECK(one("smt").reason ==
        "cpu 3 shares a core with cpu 1, which is not isolated: tasks scheduled there share the core");
  CHECK(one("thp").cpu == std::nullopt);
}

TEST_CASE("posture checks: unmet expectations FAIL per cpu and are marked as expectations", "[posture_checks]") {
  PostureExpectations expect;
  expect.isolated = std::vector<int>{2, 3, 4};
  expect.governor = "performance";
  expect.clocksource = "tsc";
  expect.no_device_irqs = true;
  expect.max_exit_latency = 1us;
  Posture p = quiet_machine();
  p.isolated = {2, 3, 5};
  p.clocksource->current = "hpet";
  const std::vector<PostureCheck> checks = check_posture(p, {2, 3}, expect);
  CHECK(overall_status(checks) == CheckStatus::fail);
  const auto isolated = lines_of(checks, "isolated");
  REQUIRE(isolated.size() == 2);
  CHECK(isolated[0].cpu == 4);
  CHECK(isolated[0].reason == "cpu 4 is not in the kernel's isolated set 2-3,5 (expected 2-4)");
  CHECK(isolated[1].cpu == 5);
  for (const auto& c : isolated) CHECK((c.expectation && c.status == CheckStatus::fail));
  const auto cstates = lines_of(checks, "cstates");
  REQUIRE(cstates.size() == 2);
  CHECK(cstates[0].reason == "cpu 2 may enter C1 (exit latency 2 us, limit 1 us)");
  CHECK(lines_of(checks, "clocksource")[0].status == CheckStatus::fail);
  const auto governor = lines_of(checks, "governor");
  REQUIRE(governor.size() == 1);
  CHECK((governor[0].status == CheckStatus::pass && governor[0].expectation));
  CHECK(lines_of(checks, "device_irqs")[0].status == CheckStatus::pass);  // irq 30 has no handler
}

TEST_CASE("posture probe: exports the checks and notices a changed fingerprint", "[posture_checks]") {
  jitterd::testing::ScratchTree sys, proc;
  sys.add_cpu(0);
  sys.add_cpu(1);
  sys.write("devices/system/cpu/online", "0-1\n");
  sys.write("devices/system/cpu/isolated", "1\n");
  proc.write("sys/kernel/osrelease", "6.1.0-9-amd64\n");
  proc.write("cmdline", "ro isolcpus=1\n");
  ProbeContext context;
  context.host = HostReader(sys.root(), proc.root());
  context.sampled = {1};
  PostureExpectations expect;
  expect.isolated = std::vector<int>{1};
  PostureProbe probe(PostureSettings{true, 1min, expect});

  const ProbeResult first = probe.run(context);
  CHECK(value(first, "jitterd_expectation_unmet", {{"check", "isolated"}, {"cpu", "1"}}) ==
        0);  // per sampled cpu, met
  CHECK(value(first, "jitterd_posture_cpu_isolated", {{"cpu", "1"}}) == 1);
  CHECK(value(first, "jitterd_posture_kernel_param_info", {{"param", "isolcpus"}, {"value", "1"}}) == 1);
  CHECK(value(first, "jitterd_fingerprint_changes_total", {}) == 0);
  CHECK(first.warnings.empty());

  proc.write("sys/kernel/osrelease", "6.1.0-10-amd64\n");
  sys.write("devices/system/cpu/isolated", "\n");  // the reboot lost isolcpus
  const ProbeResult second = probe.run(context);
  CHECK(value(second, "jitterd_fingerprint_changes_total", {}) == 1);
  REQUIRE(second.warnings.size() == 1);
  CHECK(second.warnings[0] ==
        "the machine's fingerprint changed: kernel: \"6.1.0-9-amd64\" -> \"6.1.0-10-amd64\"");
  CHECK(value(second, "jitterd_expectation_unmet", {{"check", "isolated"}, {"cpu", "1"}}) == 1);
  CHECK(value(second, "jitterd_posture_cpu_isolated", {{"cpu", "1"}}) == 0);
}

TEST_CASE("posture metrics on the tuned server: the leaking IRQ, idle states and siblings per isolated cpu",
          "[posture_checks]") {
  const Posture posture = read_posture(jitterd::testing::fixture_reader("tuned_server"));
  const std::vector<int> sampled = {2, 3};
  const std::vector<ProbeMetric> metrics = posture_metrics(posture, sampled, check_posture(posture, sampled, {}));
  const auto find = [&](const std::string& name, const ProbeLabels& labels) -> const ProbeMetric* {
    for (const ProbeMetric& m : metrics) {
      if (m.name == name && m.labels == labels) return &m;
    }
    return nullptr;
  };
  CHECK(find("jitterd_posture_cpu_device_irqs", {{"cpu", "3"}})->value == 1);
  CHECK(find("jitterd_posture_cpu_device_irqs", {{"cpu", "4"}})->value == 0);
  CHECK(find("jitterd_posture_cpu_isolated", {{"cpu", "0"}})->value == 0);
  // CPU 12 is isolated but not sampled: still described, C6 (disabled) left out.
  REQUIRE(find("jitterd_posture_cpuidle_exit_latency_seconds", {{"cpu", "12"}, {"state", "C1"}}));
  CHECK(find("jitterd_posture_cpuidle_exit_latency_seconds", {{"cpu", "12"}, {"state", "C1"}})->value ==
        Approx(2e-6));
  CHECK_FALSE(find("jitterd_posture_cpuidle_exit_latency_seconds", {{"cpu", "12"}, {"state", "C6"}}));
  CHECK(find("jitterd_posture_cpu_siblings_info", {{"cpu", "12"}, {"siblings", "4,12"}}));
  CHECK_FALSE(find("jitterd_posture_cpu_siblings_info", {{"cpu", "0"}, {"siblings", "0,8"}}));
  CHECK(find("jitterd_posture_cpufreq_governor_info", {{"cpu", "2"}, {"governor", "performance"}}));
  CHECK(find("jitterd_posture_kernel_param_info",
             {{"param", "isolcpus"}, {"value", "managed_irq,domain,2-7,10-15"}}));
  CHECK(find("jitterd_posture_cpufreq_min_hertz", {{"cpu", "2"}})->value == 1.2e9);
  CHECK(find("jitterd_posture_cpufreq_max_hertz", {{"cpu", "2"}})->value == 3.7e9);
  CHECK(find("jitterd_posture_cpufreq_current_hertz", {{"cpu", "2"}})->value == 3600012e3);
  CHECK(find("jitterd_posture_sysctl_kernel_nmi_watchdog", {})->value == 0);
  CHECK(find("jitterd_posture_sysctl_vm_stat_interval_seconds", {})->value == 10);
  CHECK(find("jitterd_posture_sysctl_kernel_sched_rt_runtime_seconds", {})->value == -1);  // no limit
  // IRQs are counted per CPU; which ones only with irq_detail.
  CHECK(std::none_of(metrics.begin(), metrics.end(),
                     [](const ProbeMetric& m) { return m.name == "jitterd_posture_cpu_device_irq_info"; }));
}

TEST_CASE("posture irq_detail names at most that many device IRQs per sampled or isolated cpu",
          "[posture_checks]") {
  const Posture posture = read_posture(jitterd::testing::fixture_reader("untuned_laptop"));
  const std::vector<int> sampled = {3};
  const auto checks = check_posture(posture, sampled, {});
  const auto irq_info = [&](std::size_t limit) {
    std::vector<ProbeLabels> out;
    for (const ProbeMetric& m : posture_metrics(posture, sampled, checks, limit)) {
      if (m.name == "jitterd_posture_cpu_device_irq_info") out.push_back(m.labels);
    }
    return out;
  };
  const double count = [&] {
    for (const ProbeMetric& m : posture_metrics(posture, sampled, checks)) {
      if (m.name == "jitterd_posture_cpu_device_irqs" && m.labels == ProbeLabels{{"cpu", "3"}}) return m.value;
    }
    return -1.0;
  }();
  REQUIRE(count >= 2);
  const auto all = irq_info(64);
  CHECK(all.size() == static_cast<std::size_t>(count));
  const auto one = irq_info(1);
  REQUIRE(one.size() == 1);
  CHECK(one[0] == all[0]);  // the lowest IRQ number first
  CHECK(irq_info(0).empty());
}

TEST_CASE("posture sysctls in base units: sched_rt_runtime_us in seconds", "[posture_checks]") {
  const Posture posture = read_posture(jitterd::testing::fixture_reader("untuned_laptop"));
  for (const ProbeMetric& m : posture_metrics(posture, {1}, {})) {
    if (m.name == "jitterd_posture_sysctl_kernel_sched_rt_runtime_seconds") CHECK(m.value == Approx(0.95));
    if (m.name == "jitterd_posture_sysctl_kernel_timer_migration") CHECK(m.value == 1);
    CHECK(m.name != "jitterd_posture_sysctl");
  }
}

TEST_CASE("smt: a measured busy share judges a sibling, isolated or not", "[posture_checks]") {
  Posture p = quiet_machine();
  p.smt.thread_siblings[2] = {0, 2};
  p.smt.thread_siblings[3] = {1, 3};
  // Unmeasured: siblings 0 and 1 are not isolated, so both sampled cpus get a line.
  CHECK(lines_of(check_posture(p, {2, 3}, {}), "smt").size() == 2);
  // Measured: cpu 0 was idle, cpu 1 was not.
  const auto smt = lines_of(check_posture(p, {2, 3}, {}, {{0, 0.004}, {1, 0.35}}), "smt");
  REQUIRE(smt.size() == 1);
  CHECK(smt[0].cpu == 3);
  CHECK(smt[0].reason == "cpu 3 shares a core with cpu 1, which was busy 35.0% of the time measured");
  PostureExpectations expect;
  expect.smt_siblings_idle = true;
  const auto expected = lines_of(check_posture(p, {2, 3}, expect, {{0, 0.0}, {1, 0.0}}), "smt");
  REQUIRE(expected.size() == 1);
  CHECK((expected[0].status == CheckStatus::pass && expected[0].expectation));
}

TEST_CASE("smt and rcu_nocbs: one line per sampled cpu on wide cores, and 'cannot check' instead of a guess",
          "[posture_checks]") {
  Posture p = quiet_machine();
  p.smt.thread_siblings[2] = {0, 1, 2, 3};  // four threads on one core
  PostureExpectations expect;
  expect.smt_siblings_idle = true;
  const auto smt = lines_of(check_posture(p, {2}, expect), "smt");
  REQUIRE(smt.size() == 1);  // one series per sampled cpu, naming every busy sibling
  CHECK(smt[0].reason ==
        "cpu 2 shares a core with cpu 0, which is not isolated: tasks scheduled there share the core; cpu 1, "
        "which is not "
        "isolated: tasks scheduled there share the core");
  p.smt.thread_siblings.erase(3);
  const auto unknown = lines_of(check_posture(p, {3}, expect), "smt");
  REQUIRE(unknown.size() == 1);
  CHECK((unknown[0].status == CheckStatus::fail &&
         unknown[0].reason == "cannot check cpu 3: its core's siblings are unknown"));

  p.isolation.rcu_nocbs = "all";
  const auto rcu = lines_of(check_posture(p, {2, 3}, {}), "rcu_nocbs");
  REQUIRE(rcu.size() == 1);
  CHECK(rcu[0].reason == "cannot check: rcu_nocbs=all is not a plain cpu list");
}
