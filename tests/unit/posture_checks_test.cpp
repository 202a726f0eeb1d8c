// SPDX-License-Identifier: Apache-2.0
// The isolation checklist on hand-built postures (each rule, expectations against the rules of
// thumb, the worst status), and the posture probe on a scratch tree whose fingerprint changes.
#include "probes/posture_checks.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "fixture_tree.h"
#include "host/task_classes.h"
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
  p.reader_pid = 900;
  p.tasks = {{1, 1, "init", 0, {0, 1}, false, 0, std::nullopt},
             {12, 12, "ksoftirqd/2", 2, {2}, true, 0, std::nullopt},
             {900, 901, "sampler", 3, {3}, false, 0, std::nullopt}};
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
  CHECK(checks.size() == 13);
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

TEST_CASE("an unreadable isolated set or /proc/irq: one 'cannot check' line and no per-cpu gauge",
          "[posture_checks]") {
  Posture p = quiet_machine();
  p.isolated = {};
  p.isolated_known = false;
  p.irqs = {};
  const std::vector<int> sampled = {2, 3};
  for (const bool expected : {false, true}) {
    PostureExpectations expect;
    if (expected) expect.isolated = std::vector<int>{2, 3};
    const auto isolated = lines_of(check_posture(p, sampled, expect), "isolated");
    REQUIRE(isolated.size() == 1);
    CHECK_FALSE(isolated[0].cpu.has_value());
    CHECK(isolated[0].status == (expected ? CheckStatus::fail : CheckStatus::warn));
    CHECK(isolated[0].reason == "cannot check: the kernel's isolated set could not be read");
    CHECK_FALSE(isolated[0].fix.empty());
  }
  const std::vector<ProbeMetric> metrics = posture_metrics(p, sampled, check_posture(p, sampled, {}));
  const auto count = [&](const std::string& name) {
    return std::count_if(metrics.begin(), metrics.end(), [&](const ProbeMetric& m) { return m.name == name; });
  };
  CHECK(count("jitterd_posture_cpu_isolated") == 0);
  CHECK(count("jitterd_posture_cpu_device_irqs") == 0);
  CHECK(count("jitterd_posture_cpu_nohz_full") == 4);  // read, so still one per online cpu
  p.isolated_known = true;
  p.irqs = quiet_machine().irqs;
  const std::vector<ProbeMetric> known = posture_metrics(p, sampled, check_posture(p, sampled, {}));
  CHECK(std::count_if(known.begin(), known.end(),
                      [](const ProbeMetric& m) { return m.name == "jitterd_posture_cpu_isolated"; }) == 4);
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
  // This bare tree lacks most posture files: the first run names them once, in one warning.
  REQUIRE(first.warnings.size() == 1);
  CHECK_THAT(first.warnings[0], Catch::StartsWith("posture files unreadable: "));

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

namespace {

// The tuned NVMe server as `report posture` sees it: sampled 2-7 (one thread per core), its
// runbook's expectations, and the device IRQs that fired over one second: the fixture's
// /proc/interrupts against itself with `bump` added (irq -> cpu -> count).
struct TunedNvme {
  Posture posture = read_posture(jitterd::testing::fixture_reader("tuned_nvme"));
  std::vector<int> sampled{2, 3, 4, 5, 6, 7};
  PostureExpectations expect;
  TunedNvme() {
    expect.no_device_irqs = true;
    expect.smt_siblings_idle = true;
    expect.application_tasks = {"trader*"};
  }
  IrqFiring fired(const std::map<int, std::map<int, std::uint64_t>>& bump) const {
    const std::string text = jitterd::testing::fixture_reader("tuned_nvme").read_proc("interrupts").value_or("");
    const InterruptTable before = parse_proc_interrupts(text);
    InterruptTable after = before;
    for (InterruptRow& row : after.rows) {
      for (const auto& [irq, by_cpu] : bump) {
        if (row.source != std::to_string(irq)) continue;
        for (const auto& [cpu, count] : by_cpu)
          row.counts[static_cast<std::size_t>(*cpu_column(after, cpu))] += count;
      }
    }
    return IrqFiring{numbered_irq_deltas(before, after), 1.0};
  }
  std::vector<PostureCheck> irq_lines(const std::optional<IrqFiring>& firing) const {
    return lines_of(check_posture(posture, sampled, expect, {}, firing), "device_irqs");
  }
};

std::size_t fails(const std::vector<PostureCheck>& checks) {
  return static_cast<std::size_t>(std::count_if(
      checks.begin(), checks.end(), [](const PostureCheck& c) { return c.status == CheckStatus::fail; }));
}

}  // namespace

TEST_CASE("device_irqs: quiet managed NVMe queues on sampled cpus pass, named as managed", "[posture_checks]") {
  const TunedNvme machine;
  const auto checks = check_posture(machine.posture, machine.sampled, machine.expect, {}, machine.fired({}));
  CHECK(overall_status(checks) == CheckStatus::pass);
  const auto irqs = lines_of(checks, "device_irqs");
  REQUIRE(irqs.size() == 1);
  CHECK(
      irqs[0].reason ==
      "no unmanaged device IRQ may fire on a sampled cpu; managed by the kernel, quiet over the last 1.0 s "
      "(nvme queue-name heuristic: debugfs irq/irqs unreadable): irq 52 nvme0q2 (cpu 2), irq 53 nvme0q3 (cpu 3), "
      "irq 54 nvme0q4 (cpu 4), irq 55 nvme0q5 (cpu 5), irq 56 nvme0q6 (cpu 6), irq 57 nvme0q7 (cpu 7)");
}

TEST_CASE("device_irqs: a NIC queue that fires on a sampled cpu is one FAIL with its fix", "[posture_checks]") {
  TunedNvme machine;
  // mlx5_comp3 (irq 45) was moved onto cpu 4 and took 1200 interrupts there.
  for (IrqAffinity& irq : machine.posture.irqs)
    if (irq.irq == 45) irq.cpus = {4};
  const auto checks =
      check_posture(machine.posture, machine.sampled, machine.expect, {}, machine.fired({{45, {{4, 1200}}}}));
  CHECK(fails(checks) == 1);
  const auto irqs = lines_of(checks, "device_irqs");
  REQUIRE(irqs.size() == 2);  // the FAIL, and the managed queues' PASS line
  CHECK(irqs[0].cpu == 4);
  CHECK(irqs[0].status == CheckStatus::fail);
  CHECK(irqs[0].reason ==
        "1 device IRQ(s) fired on cpu 4 over the last 1.0 s: irq 45 mlx5_comp3@pci:0000:3b:00.0 (1200 times)");
  CHECK(irqs[0].fix.at(0) == "echo 0-1,8-9 > /proc/irq/45/smp_affinity_list");
  CHECK(irqs[1].status == CheckStatus::pass);
  // Without the expectation it is a WARN; exempt by name, it is not judged.
  machine.expect.no_device_irqs = false;
  CHECK(machine.irq_lines(machine.fired({{45, {{4, 1200}}}}))[0].status == CheckStatus::warn);
  machine.expect.no_device_irqs = true;
  machine.expect.irq_exempt = {"mlx5_*"};
  const auto exempt = machine.irq_lines(machine.fired({{45, {{4, 1200}}}}));
  REQUIRE(exempt.size() == 1);
  CHECK(exempt[0].status == CheckStatus::pass);
  CHECK_THAT(exempt[0].reason,
             Catch::EndsWith("; exempt by expect.irq_exempt: irq 45 mlx5_comp3@pci:0000:3b:00.0 (cpu 4)"));
}

TEST_CASE("device_irqs: a managed queue that fired FAILs too; its fix cannot be an echo", "[posture_checks]") {
  const TunedNvme machine;
  const auto irqs = machine.irq_lines(machine.fired({{53, {{3, 40}}}}));
  REQUIRE(irqs.size() == 2);
  CHECK(irqs[0].cpu == 3);
  CHECK(irqs[0].status == CheckStatus::fail);
  CHECK(irqs[0].reason ==
        "1 device IRQ(s) fired on cpu 3 over the last 1.0 s: irq 53 nvme0q3 (40 times, managed)");
  REQUIRE(irqs[0].fix.size() == 1);
  CHECK_THAT(irqs[0].fix[0], Catch::StartsWith("# irq 53 nvme0q3 is kernel-managed"));
}

TEST_CASE("device_irqs: fired judges firing only; may-fire alone passes, unmeasured says so", "[posture_checks]") {
  TunedNvme machine;
  for (IrqAffinity& irq : machine.posture.irqs)
    if (irq.irq == 45) irq.cpus = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};  // may fire on 2-7, quiet
  CHECK(fails(machine.irq_lines(machine.fired({}))) == 6);         // true: affinity is judged
  machine.expect.device_irqs_fired_only = true;
  const auto quiet = machine.irq_lines(machine.fired({}));
  REQUIRE(quiet.size() == 1);
  CHECK(quiet[0].status == CheckStatus::pass);
  CHECK_THAT(quiet[0].reason, Catch::StartsWith("no device IRQ fired on a sampled cpu over the last 1.0 s"));
  CHECK(fails(machine.irq_lines(machine.fired({{45, {{6, 3}}}}))) == 1);
  const auto unmeasured = machine.irq_lines(std::nullopt);
  REQUIRE(unmeasured.size() == 2);
  CHECK(unmeasured[0].status == CheckStatus::warn);
  CHECK_THAT(unmeasured[0].reason, Catch::StartsWith("cannot check yet"));
}

TEST_CASE("irq_name_matches: fnmatch patterns against the name and each action of a shared IRQ",
          "[posture_checks]") {
  CHECK(irq_name_matches("nvme0q3", {"nvme*"}));
  CHECK_FALSE(irq_name_matches("nvme0q3", {"mlx5*"}));
  CHECK_FALSE(irq_name_matches("nvme0q3", {}));
  CHECK(irq_name_matches("idma64.0, i801_smbus", {"i801_*"}));
  CHECK(irq_name_matches("idma64.0, i801_smbus", {"idma64.?"}));
  CHECK(irq_name_matches("eth0-rx-[1]", {"eth0-rx-\\[1\\]"}));
}

TEST_CASE("smt: a sampled sibling is a plan note, not a WARN", "[posture_checks]") {
  Posture p = quiet_machine();
  p.smt.thread_siblings[2] = {2, 3};
  p.smt.thread_siblings[3] = {2, 3};
  const auto smt = lines_of(check_posture(p, {2, 3}, {}, {{2, 1.0}, {3, 1.0}}), "smt");
  REQUIRE(smt.size() == 1);
  CHECK(smt[0].status == CheckStatus::pass);
  CHECK(
      smt_plan_notes(p, {2, 3}) ==
      std::vector<std::string>{"cpus 2-3 share one core and are all sampled: their spinning samplers compete for "
                               "its pipeline, so each one's numbers include the others (cpus_per_core: one with "
                               "cpus: auto, or a cpus list with one thread per core, leaves the siblings idle)"});
  CHECK(smt_plan_notes(p, {2}).empty());
}

TEST_CASE("every WARN and FAIL carries a fix; PASS lines none", "[posture_checks]") {
  Posture p = quiet_machine();
  p.isolated = {2};
  p.irqs.push_back({45, "mlx5_comp3", {3}, true, {}});
  p.cpufreq[3].governor = "powersave";
  p.cpuidle[3].states[2].enabled = true;
  p.thp.enabled = "always";
  p.sysctls.nmi_watchdog = "1";
  p.sysctls.stat_interval = "1";
  p.workqueue_cpus = std::vector<int>{0, 1, 2, 3, 40};
  p.clocksource->current = "hpet";
  for (const PostureCheck& c : check_posture(p, {2, 3}, {})) {
    INFO(c.check << ": " << c.reason);
    CHECK(c.fix.empty() == (c.status == CheckStatus::pass));
  }
  const auto checks = check_posture(p, {2, 3}, {});
  const auto fix_of = [&](const std::string& check) { return lines_of(checks, check).at(0).fix; };
  CHECK(
      fix_of("isolated").at(0) ==
      "# kernel command line: set isolcpus=managed_irq,domain,2-3 (GRUB_CMDLINE_LINUX in /etc/default/grub, then "
      "update-grub and reboot)");
  CHECK(fix_of("device_irqs").at(0) == "echo 0-1 > /proc/irq/45/smp_affinity_list");
  CHECK(fix_of("governor").at(0) == "cpupower -c 3 frequency-set -g performance");
  CHECK(fix_of("cstates").at(0) == "cpupower -c 3 idle-set -D 10");
  CHECK(fix_of("workqueue").at(0) == "echo 100,00000003 > /sys/devices/virtual/workqueue/cpumask");
  CHECK(fix_of("clocksource").at(0) ==
        "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource");
  CHECK(fix_of("thp").at(0) == "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled");
  CHECK(fix_of("nmi_watchdog").at(0) == "sysctl -w kernel.nmi_watchdog=0");
  CHECK(fix_of("stat_interval").at(0) == "sysctl -w vm.stat_interval=10");
}

TEST_CASE("stray tasks: per-cpu kernel threads and the application belong; a stray is one line per cpu",
          "[posture_checks]") {
  TunedNvme machine;
  machine.expect.no_stray_tasks = true;
  machine.expect.application_tasks = {"trader*"};
  const auto lines = [&] {
    return lines_of(check_posture(machine.posture, machine.sampled, machine.expect), "stray_tasks");
  };
  const auto quiet = lines();
  REQUIRE(quiet.size() == 1);
  CHECK(quiet[0].status == CheckStatus::pass);
  CHECK(
      quiet[0].reason ==
      "no stray task ran on or may run on a sampled cpu (there: 24 per-cpu kernel threads, 2 application tasks)");
  // Without the application's pattern its pinned threads are strays.
  machine.expect.application_tasks.clear();
  CHECK(fails(lines()) == 2);
  machine.expect.application_tasks = {"trader*"};
  // sshd is allowed on cpu 6 and last ran there; a kworker of cpu 2 on cpu 6 is out of place too.
  for (TaskSeen& task : machine.posture.tasks) {
    if (task.comm == "sshd") task = {812, 812, "sshd", 6, {0, 1, 6, 8, 9}, false, 0, std::nullopt};
    if (task.comm == "kworker/2:1H") task.processor = 6;
  }
  const auto stray = lines();
  REQUIRE(stray.size() == 1);
  CHECK(stray[0].cpu == 6);
  CHECK(stray[0].status == CheckStatus::fail);
  CHECK(stray[0].reason == "2 stray task(s) last ran on cpu 6: kworker/2:1H (31), sshd (812)");
  CHECK(stray[0].fix.at(0) == "taskset -a -p -c 0-1,8-9 812");
  const auto task_series = [&] {
    std::size_t n = 0;
    for (const ProbeMetric& m :
         posture_metrics(machine.posture, machine.sampled, {}, 0, std::nullopt, {"trader*"}))
      n += m.name == "jitterd_posture_cpu_tasks";
    return n;
  };
  CHECK(task_series() == 4 * 12);  // sampled 2-7 and isolated 10-15, four classes each
  // Only jitterd's own tasks visible: cannot check, and no counts that would read as quiet.
  machine.posture.reader_pid = 7;
  machine.posture.tasks = {{7, 7, "jitterd", 0, {0}, false, 0, std::nullopt}};
  CHECK_THAT(lines().at(0).reason, Catch::StartsWith("cannot check: no task but jitterd's own is visible"));
  CHECK(task_series() == 0);
}

TEST_CASE("task classes: the kernel threads bound to a cpu belong only on it", "[posture_checks]") {
  const TaskSeen ksoftirqd{10, 10, "ksoftirqd/3", 3, {3}, true, 0, std::nullopt};
  CHECK(classify_task(ksoftirqd, 3, 1, {}) == TaskClass::kernel_percpu);
  CHECK(classify_task(ksoftirqd, 4, 1, {}) == TaskClass::stray);
  CHECK(classify_task({11, 11, "kworker/3:0-events", 3, {3}, true, 0, std::nullopt}, 3, 1, {}) ==
        TaskClass::kernel_percpu);
  CHECK(classify_task({11, 11, "kworker/u32:0", 3, {0, 1, 2, 3}, true, 0, std::nullopt}, 3, 1, {}) ==
        TaskClass::stray);
  CHECK(classify_task({12, 12, "ksoftirqd/3", 3, {3}, false, 0, std::nullopt}, 3, 1, {}) ==
        TaskClass::stray);  // not a kthread
  CHECK(classify_task({1, 5, "sampler", 3, {3}, false, 0, std::nullopt}, 3, 1, {}) == TaskClass::jitterd);
  CHECK(classify_task({40, 40, "trader-md", 3, {3}, false, 0, std::nullopt}, 3, 1, {"trader*"}) ==
        TaskClass::application);
  CHECK(to_string(TaskClass::kernel_percpu) == "kernel_percpu");
}

TEST_CASE("posture checks: a kernel without CONFIG_NO_HZ_FULL is never told to add nohz_full=",
          "[posture_checks]") {
  Posture p = quiet_machine();
  p.nohz_full = {};
  p.nohz_full_supported = false;
  const std::vector<PostureCheck> checks = check_posture(p, {2, 3}, {});
  const std::vector<PostureCheck> lines = lines_of(checks, "nohz_full");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].status == CheckStatus::warn);
  CHECK_FALSE(lines[0].cpu.has_value());
  CHECK(lines[0].reason.find("CONFIG_NO_HZ_FULL") != std::string::npos);
  for (const PostureCheck& c : checks)
    for (const std::string& fix : c.fix) {
      INFO(c.check << ": " << fix);
      CHECK(fix.find("nohz_full=2") == std::string::npos);
      CHECK((fix.rfind("#", 0) == 0 || fix.find("nohz_full=") == std::string::npos));
    }

  PostureExpectations expect;
  expect.nohz_full = std::vector<int>{2, 3};
  const std::vector<PostureCheck> expected = lines_of(check_posture(p, {2, 3}, expect), "nohz_full");
  REQUIRE(expected.size() == 1);
  CHECK(expected[0].status == CheckStatus::fail);
  CHECK(expected[0].reason.find("expected nohz_full cpus 2-3") != std::string::npos);
}
