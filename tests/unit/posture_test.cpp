// SPDX-License-Identifier: Apache-2.0
// Isolation posture and fingerprint: the parsers on literal kernel text, then read_posture on the
// tuned_server (isolated, tickless, one IRQ leaking onto an isolated CPU), untuned_laptop
// (powersave, deep C-states, IRQs everywhere) and vm_missing (a KVM guest lacking most files)
// fixtures.
#include "host/posture.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "fixture_tree.h"
#include "host/interrupt_counts.h"

using jitterd::CmdlineParam;
using jitterd::Fingerprint;
using jitterd::HostReader;
using jitterd::IsolationParams;
using jitterd::Posture;
using jitterd::read_posture;

namespace {

using jitterd::testing::fixture_reader;
using jitterd::testing::fixtures;
using jitterd::testing::ScratchTree;

using Cpus = std::vector<int>;
using Strings = std::vector<std::string>;

std::vector<int> irq_numbers(const std::vector<jitterd::IrqAffinity>& irqs) {
  std::vector<int> out;
  for (const auto& irq : irqs) out.push_back(irq.irq);
  return out;
}

const jitterd::IrqAffinity* find_irq(const Posture& posture, int irq) {
  for (const auto& entry : posture.irqs)
    if (entry.irq == irq) return &entry;
  return nullptr;
}

}  // namespace

TEST_CASE("parse_kernel_cmdline splits like the kernel, honouring quotes", "[posture]") {
  const std::vector<CmdlineParam> params = jitterd::parse_kernel_cmdline(
      "BOOT_IMAGE=/vmlinuz-6.1.0 ro  quiet acpi_osi=\"!Windows 2020\" \"dyndbg=file a.c +p\" "
      "nohz_full= isolcpus=nohz,domain,managed_irq,2-7\tidle=poll -- single init=/bin/sh\n");
  CHECK(params == std::vector<CmdlineParam>{
                      {"BOOT_IMAGE", "/vmlinuz-6.1.0"},
                      {"ro", std::nullopt},
                      {"quiet", std::nullopt},
                      {"acpi_osi", "!Windows 2020"},
                      {"dyndbg", "file a.c +p"},
                      {"nohz_full", ""},
                      {"isolcpus", "nohz,domain,managed_irq,2-7"},
                      {"idle", "poll"},
                  });
  CHECK(jitterd::parse_kernel_cmdline("").empty());
  CHECK(jitterd::parse_kernel_cmdline("  \n").empty());
  // An unterminated quote runs to the end, as in the kernel.
  CHECK(jitterd::parse_kernel_cmdline("a=\"b c") == std::vector<CmdlineParam>{{"a", "b c"}});
  CHECK(jitterd::parse_kernel_cmdline("a=\"\"") == std::vector<CmdlineParam>{{"a", ""}});
}

TEST_CASE("isolation parameters separate isolcpus flags from the cpu list", "[posture]") {
  const IsolationParams iso = jitterd::parse_isolation_params(jitterd::parse_kernel_cmdline(
      "isolcpus=nohz,domain,managed_irq,2-7 nohz_full=2-7 rcu_nocbs=2-7 rcu_nocb_poll "
      "irqaffinity=0-1 skew_tick=1 intel_idle.max_cstate=1 processor.max_cstate=1 idle=poll "
      "mitigations=off"));
  CHECK(iso.isolcpus == "2-7");
  CHECK(iso.isolcpus_flags == Strings{"nohz", "domain", "managed_irq"});
  CHECK(iso.nohz_full == "2-7");
  CHECK(iso.rcu_nocbs == "2-7");
  CHECK(iso.rcu_nocb_poll);
  CHECK(iso.irqaffinity == "0-1");
  CHECK(iso.skew_tick == "1");
  CHECK(iso.intel_idle_max_cstate == "1");
  CHECK(iso.processor_max_cstate == "1");
  CHECK(iso.idle == "poll");
  CHECK(iso.mitigations == "off");

  const IsolationParams plain = jitterd::parse_isolation_params(jitterd::parse_kernel_cmdline("ro isolcpus=1,3"));
  CHECK(plain.isolcpus == "1,3");
  CHECK(plain.isolcpus_flags.empty());
  CHECK_FALSE(plain.nohz_full);
  CHECK_FALSE(plain.rcu_nocb_poll);
  CHECK_FALSE(plain.mitigations);

  // The last occurrence wins, and '-' matches '_' in keys as in the kernel's parameq().
  const IsolationParams repeated = jitterd::parse_isolation_params(
      jitterd::parse_kernel_cmdline("isolcpus=domain,1 isolcpus=4-5 intel-idle.max_cstate=0 nohz-full=4"));
  CHECK(repeated.isolcpus == "4-5");
  CHECK(repeated.isolcpus_flags.empty());
  CHECK(repeated.intel_idle_max_cstate == "0");
  CHECK(repeated.nohz_full == "4");
}

TEST_CASE("param_cpus turns a cpu-list parameter into CPUs", "[posture]") {
  CHECK(jitterd::param_cpus(std::string("2-4,8")) == Cpus{2, 3, 4, 8});
  CHECK(jitterd::param_cpus(std::nullopt) == std::nullopt);
  std::string error;
  CHECK(jitterd::param_cpus(std::string("3-1"), &error) == std::nullopt);
  CHECK(error.find("\"3-1\"") != std::string::npos);
}

TEST_CASE("small sysfs formats: bracketed choices, integers, cpuinfo fields", "[posture]") {
  CHECK(jitterd::parse_bracketed_choice("[always] madvise never") == "always");
  CHECK(jitterd::parse_bracketed_choice("always defer defer+madvise [madvise] never\n") == "madvise");
  CHECK(jitterd::parse_bracketed_choice("always madvise never") == std::nullopt);
  CHECK(jitterd::parse_bracketed_choice("[] x") == std::nullopt);

  CHECK(jitterd::parse_integer("-1\n") == -1);
  CHECK(jitterd::parse_integer(" 3600105 ") == 3600105);
  CHECK(jitterd::parse_integer("") == std::nullopt);
  CHECK(jitterd::parse_integer("12kHz") == std::nullopt);

  const std::string x86 =
      "processor\t: 0\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz\n"
      "microcode\t: 0x2007006\n\nprocessor\t: 1\nmicrocode\t: 0x2007007\n";
  CHECK(jitterd::cpuinfo_field(x86, "model name") == "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz");
  CHECK(jitterd::cpuinfo_field(x86, "model") == "85");             // matched whole, not as a prefix
  CHECK(jitterd::cpuinfo_field(x86, "microcode") == "0x2007006");  // the first one
  CHECK(jitterd::cpuinfo_field(x86, "flags") == std::nullopt);
}

TEST_CASE("fingerprint fields keep their order and changes name the field", "[posture]") {
  Fingerprint before{"6.1.0-9-amd64",
                     "ro quiet",
                     "0x2007006",
                     "Dell Inc.",
                     "2.17.1",
                     "11/03/2022",
                     "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz",
                     "no"};
  Fingerprint after = before;
  CHECK(jitterd::fingerprint_changes(before, after).empty());
  after.kernel = "6.1.0-10-amd64";
  after.bios_version = "2.19.1";
  CHECK(jitterd::fingerprint_changes(before, after) ==
        Strings{"kernel: \"6.1.0-9-amd64\" -> \"6.1.0-10-amd64\"", "bios_version: \"2.17.1\" -> \"2.19.1\""});
  Strings keys;
  for (const auto& [key, value] : jitterd::fingerprint_fields(before)) keys.push_back(key);
  CHECK(keys == Strings{"kernel", "cmdline", "microcode", "bios_vendor", "bios_version", "bios_date", "cpu_model",
                        "hypervisor"});
}

TEST_CASE("a fingerprint field whose file vanished keeps its known value and is no change", "[posture]") {
  const Fingerprint known{"6.1.0-9-amd64",
                          "quiet isolcpus=2-7",
                          "0x2007006",
                          "Dell Inc.",
                          "2.17.1",
                          "11/03/2022",
                          "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz",
                          "yes"};
  Fingerprint now = known;
  now.cmdline.clear();  // /proc/cmdline unreadable this time
  now.bios_date.clear();
  now.hypervisor.clear();         // cpuinfo unreadable
  now.kernel = "6.1.0-10-amd64";  // a real change read at the same time
  const Fingerprint seen = jitterd::keep_unread_fields(known, now);
  CHECK(seen.cmdline == known.cmdline);
  CHECK(seen.bios_date == known.bios_date);
  CHECK(seen.hypervisor == "yes");
  CHECK(jitterd::fingerprint_changes(known, seen) == Strings{"kernel: \"6.1.0-9-amd64\" -> \"6.1.0-10-amd64\""});
}

TEST_CASE("a tuned two-socket server: isolation asked for and done", "[posture]") {
  const Posture posture = read_posture(fixture_reader("tuned_server"));
  CHECK(posture.problems == Strings{});
  CHECK(posture.isolation.isolcpus == "2-7,10-15");
  CHECK(posture.isolation.isolcpus_flags == Strings{"managed_irq", "domain"});
  CHECK(posture.isolation.nohz_full == "2-7,10-15");
  CHECK(posture.isolation.rcu_nocbs == "2-7,10-15");
  CHECK(posture.isolation.irqaffinity == "0-1,8-9");
  CHECK(posture.isolation.intel_idle_max_cstate == "1");
  CHECK(posture.isolation.processor_max_cstate == "1");
  CHECK(posture.isolation.skew_tick == "1");
  CHECK(posture.isolation.mitigations == "off");
  CHECK_FALSE(posture.isolation.rcu_nocb_poll);

  const Cpus isolated{2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15};
  CHECK(posture.isolated == isolated);
  CHECK(posture.nohz_full == isolated);
  CHECK(posture.online.size() == 16);
  CHECK(posture.offline.empty());
  CHECK(posture.smt.control == "on");
  CHECK(posture.smt.active == true);
  CHECK(posture.smt.thread_siblings.at(3) == Cpus{3, 11});
  CHECK(posture.smt.thread_siblings.at(12) == Cpus{4, 12});

  REQUIRE(posture.cpufreq.size() == 16);
  for (const jitterd::CpuFreq& freq : posture.cpufreq) {
    INFO("cpu " << freq.cpu);
    CHECK(freq.governor == "performance");
    CHECK(freq.min_khz == 1200000);
    CHECK(freq.max_khz == 3700000);
  }
  CHECK(posture.cpufreq[0].cur_khz == 3600105);

  REQUIRE(posture.cpuidle.size() == 16);
  const std::vector<jitterd::IdleState>& states = posture.cpuidle[5].states;
  CHECK(posture.cpuidle[5].cpu == 5);
  REQUIRE(states.size() == 3);
  CHECK(states[0].name == "POLL");
  CHECK(states[0].enabled);
  CHECK(states[1].name == "C1");
  CHECK(states[1].exit_latency_us == 2);
  CHECK(states[1].enabled);
  CHECK(states[2].index == 2);
  CHECK(states[2].name == "C6");
  CHECK(states[2].exit_latency_us == 133);
  CHECK_FALSE(states[2].enabled);

  REQUIRE(posture.clocksource);
  CHECK(posture.clocksource->current == "tsc");
  CHECK(posture.thp.enabled == "never");
  CHECK(posture.thp.defrag == "never");
  CHECK(posture.sysctls.nmi_watchdog == "0");
  CHECK(posture.sysctls.timer_migration == "0");
  CHECK(posture.sysctls.stat_interval == "10");
  CHECK(posture.sysctls.sched_rt_runtime_us == "-1");
  CHECK(posture.sysctls.watchdog_cpumask == "0-1,8-9");
  CHECK(posture.workqueue_cpus == Cpus{0, 1, 8, 9});

  const Fingerprint& fp = posture.fingerprint;
  CHECK(fp.kernel == "6.1.0-18-amd64");
  CHECK(fp.cmdline == posture.cmdline);
  CHECK(fp.cmdline.rfind("BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 ", 0) == 0);
  CHECK(fp.microcode == "0x2007006");
  CHECK(fp.bios_vendor == "Dell Inc.");
  CHECK(fp.bios_version == "2.19.1");
  CHECK(fp.bios_date == "06/20/2023");
  CHECK(fp.cpu_model == "Intel(R) Xeon(R) Gold 5122 CPU @ 3.60GHz");
  CHECK(fp.hypervisor == "no");  // flags without "hypervisor": bare metal
}

TEST_CASE("the tuned server's IRQs: one leaks onto isolated cpu 3", "[posture]") {
  const Posture posture = read_posture(fixture_reader("tuned_server"));
  CHECK(irq_numbers(posture.irqs) == Cpus{0, 4, 8, 9, 16, 25, 26, 33, 41, 42, 43, 44, 45, 50, 51});
  const jitterd::IrqAffinity* leak = find_irq(posture, 45);
  REQUIRE(leak != nullptr);
  CHECK(leak->name == "mlx5_comp3@pci:0000:3b:00.0");
  CHECK(leak->cpus == Cpus{3});
  CHECK(leak->effective);
  // IRQ 4 has a descriptor but no handler: not in /proc/interrupts, never activated.
  const jitterd::IrqAffinity* idle = find_irq(posture, 4);
  REQUIRE(idle != nullptr);
  CHECK(idle->name.empty());
  CHECK(idle->cpus.empty());

  const auto on_cpu3 = jitterd::irqs_on_cpu(posture, 3);
  CHECK(irq_numbers(on_cpu3) == Cpus{45});
  for (int cpu : posture.isolated) {
    if (cpu == 3) continue;
    INFO("cpu " << cpu);
    CHECK(jitterd::irqs_on_cpu(posture, cpu).empty());
  }
  CHECK(irq_numbers(jitterd::irqs_on_cpu(posture, 0)) == Cpus{0, 25, 42, 50});
}

TEST_CASE("an untuned laptop: powersave, deep C-states, IRQs everywhere", "[posture]") {
  const Posture posture = read_posture(fixture_reader("untuned_laptop"));
  CHECK(posture.problems == Strings{});
  CHECK(posture.isolation == IsolationParams{});
  CHECK(jitterd::parse_kernel_cmdline(posture.cmdline)[5] == CmdlineParam{"acpi_osi", "!Windows 2020"});
  CHECK(posture.isolated.empty());
  CHECK(posture.nohz_full.empty());
  CHECK(posture.online == Cpus{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(posture.smt.thread_siblings.at(1) == Cpus{1, 5});

  REQUIRE(posture.cpufreq.size() == 8);
  CHECK(posture.cpufreq[3].governor == "powersave");
  CHECK(posture.cpufreq[3].cur_khz == 899998);
  CHECK(posture.cpufreq[7].cur_khz == 4501234);

  REQUIRE(posture.cpuidle.size() == 8);
  const std::vector<jitterd::IdleState>& states = posture.cpuidle[0].states;
  REQUIRE(states.size() == 9);
  CHECK(states.back().name == "C10");
  CHECK(states.back().exit_latency_us == 890);
  CHECK(std::all_of(states.begin(), states.end(), [](const auto& s) { return s.enabled; }));

  CHECK(posture.thp.enabled == "always");
  CHECK(posture.thp.defrag == "madvise");
  CHECK(posture.sysctls.nmi_watchdog == "1");
  CHECK(posture.sysctls.timer_migration == "1");
  CHECK(posture.sysctls.stat_interval == "1");
  CHECK(posture.sysctls.sched_rt_runtime_us == "950000");
  CHECK(posture.workqueue_cpus == Cpus{0, 1, 2, 3, 4, 5, 6, 7});

  for (int cpu : posture.online) {
    INFO("cpu " << cpu);
    CHECK_FALSE(jitterd::irqs_on_cpu(posture, cpu).empty());
  }
  const jitterd::IrqAffinity* shared = find_irq(posture, 16);
  REQUIRE(shared != nullptr);
  CHECK(shared->name == "idma64.0, i801_smbus");

  CHECK(posture.fingerprint.bios_vendor == "LENOVO");
  CHECK(posture.fingerprint.bios_version == "N2QET46W (1.40 )");
  CHECK(posture.fingerprint.microcode == "0xf8");
  CHECK(posture.fingerprint.cpu_model == "Intel(R) Core(TM) i7-8565U CPU @ 1.80GHz");
}

TEST_CASE("a KVM guest missing most files: one problem per missing thing", "[posture]") {
  const HostReader host = fixture_reader("vm_missing");
  Posture posture;
  REQUIRE_NOTHROW(posture = read_posture(host));
  const std::string sys = (fixtures / "vm_missing/sys").string();
  const std::string proc = (fixtures / "vm_missing/proc").string();
  CHECK(posture.problems ==
        Strings{
            sys + "/class/dmi/id/bios_vendor: missing",
            sys + "/class/dmi/id/bios_version: missing",
            sys + "/class/dmi/id/bios_date: missing",
            sys + "/devices/system/cpu/smt: missing (no CONFIG_HOTPLUG_SMT, or not x86); "
                  "SMT control unknown",
            sys + "/devices/system/cpu/cpu0/cpufreq: missing on every online CPU; "
                  "governor and frequencies unknown",
            sys + "/devices/system/cpu/cpu0/cpuidle: missing on every online CPU; "
                  "idle states unknown",
            sys + "/devices/virtual/workqueue/cpumask: missing; unbound workqueue CPUs unknown",
            proc + "/irq/0/effective_affinity_list: missing (and for 10 other IRQs); "
                   "using smp_affinity_list, the requested rather than the effective affinity",
        });
  CHECK(posture.isolation == IsolationParams{});
  CHECK(posture.online == Cpus{0, 1, 2, 3});
  CHECK(posture.nohz_full.empty());  // "(null)"
  CHECK_FALSE(posture.smt.control);
  CHECK_FALSE(posture.smt.active);
  CHECK(posture.cpufreq.empty());
  CHECK(posture.cpuidle.empty());
  CHECK_FALSE(posture.workqueue_cpus);
  REQUIRE(posture.clocksource);
  CHECK(posture.clocksource->current == "kvm-clock");
  CHECK(posture.clocksource->available == Strings{"kvm-clock", "tsc", "acpi_pm"});
  CHECK(posture.thp.enabled == "madvise");

  REQUIRE(posture.irqs.size() == 11);
  CHECK(std::none_of(posture.irqs.begin(), posture.irqs.end(), [](const auto& irq) { return irq.effective; }));
  const jitterd::IrqAffinity* rx = find_irq(posture, 25);
  REQUIRE(rx != nullptr);
  CHECK(rx->name == "virtio0-input.0");
  CHECK(rx->cpus == Cpus{0});
  CHECK(irq_numbers(jitterd::irqs_on_cpu(posture, 3)) == Cpus{0, 1, 4, 8, 9, 12, 24, 27});

  CHECK(posture.fingerprint.kernel == "6.1.0-18-cloud-amd64");
  CHECK(posture.fingerprint.microcode == "0x1");
  CHECK(posture.fingerprint.bios_vendor.empty());
  CHECK(posture.fingerprint.cpu_model == "Intel Xeon Processor (Icelake)");
  CHECK(posture.fingerprint.hypervisor == "yes");  // the guest's cpuinfo flags say so
}

TEST_CASE("an aarch64 fingerprint names the core by implementer and part", "[posture]") {
  std::vector<std::string> problems;
  const Fingerprint fp = jitterd::read_fingerprint(fixture_reader("aarch64_vm"), &problems);
  CHECK(fp.cpu_model == "CPU implementer 0x41, part 0xd0c");
  CHECK(fp.hypervisor.empty());  // aarch64 has no such flag: unknown, not "no"
  CHECK(fp.microcode.empty());
  const std::string machine = (fixtures / "aarch64_vm").string();
  CHECK(std::count(problems.begin(), problems.end(),
                   machine + "/sys/devices/system/cpu/cpu0/microcode/version: missing, and " + machine +
                       "/proc/cpuinfo has no microcode field; "
                       "the microcode revision is unknown") == 1);
  CHECK(jitterd::read_fingerprint(fixture_reader("aarch64_vm"), nullptr) == fp);
}

TEST_CASE("an empty tree gives problems, not exceptions", "[posture]") {
  const ScratchTree tree;
  Posture posture;
  REQUIRE_NOTHROW(posture = read_posture(tree.reader()));
  CHECK(posture.fingerprint == Fingerprint{});
  CHECK(posture.irqs.empty());
  const std::string proc = (tree.root() / "proc").string();
  for (const std::string& expected :
       {proc + "/cmdline: missing; the kernel command line is unknown",
        proc + "/sys/kernel/osrelease: missing; the kernel release is unknown",
        proc + "/interrupts: missing; IRQ names unknown", proc + "/irq: missing or empty; IRQ affinities unknown",
        proc + "/sys/vm/stat_interval: missing"}) {
    INFO(expected);
    CHECK(std::count(posture.problems.begin(), posture.problems.end(), expected) == 1);
  }
}

TEST_CASE("unparsable files and cmdline cpu lists are problems naming the path", "[posture]") {
  const ScratchTree tree;
  tree.write("proc/cmdline", "isolcpus=domain,7-3 nohz_full=2-3\n");
  tree.write("kernel/mm/transparent_hugepage/enabled", "always madvise never\n");
  tree.write("devices/virtual/workqueue/cpumask", "zz\n");
  tree.add_cpu(0);
  tree.write("devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "fast\n");
  tree.write("proc/irq/5/effective_affinity_list", "1-0\n");
  const Posture posture = read_posture(tree.reader());
  const auto has = [&](const std::string& prefix) {
    return std::any_of(posture.problems.begin(), posture.problems.end(),
                       [&](const std::string& line) { return line.rfind(prefix, 0) == 0; });
  };
  const std::string root = tree.root().string();
  CHECK(has(root + "/proc/cmdline: isolcpus: bad cpu range \"7-3\""));
  CHECK(has(root + "/kernel/mm/transparent_hugepage/enabled: no [selected] word in "
                   "\"always madvise never\""));
  CHECK(has(root + "/devices/virtual/workqueue/cpumask: bad cpu mask group \"zz\""));
  CHECK(has(root + "/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq: not an integer: "
                   "\"fast\""));
  CHECK(has(root + "/proc/irq/5/effective_affinity_list: bad cpu range \"1-0\""));
  CHECK(posture.isolation.nohz_full == "2-3");
  CHECK_FALSE(posture.thp.enabled);
  REQUIRE(posture.cpufreq.size() == 1);
  CHECK_FALSE(posture.cpufreq[0].cur_khz);
  CHECK(posture.irqs.empty());
}

TEST_CASE("parse_proc_stat: per-cpu busy and total ticks; busy_shares between two readings", "[posture]") {
  const auto before = jitterd::parse_proc_stat(
      "cpu  1262549 436758 145981 587628 4032 0 2417 15008 0 0\n"
      "cpu0 100 0 50 800 50 0 0 0 0 0\n"
      "cpu1 10 0 0 990 0 0 0 0 0 0\n"
      "cpu3 5 5\n"
      "intr 5860268 0 0\n"
      "ctxt 4045020\n");
  REQUIRE(before.size() == 2);  // the sum line, a short line and the other rows are skipped
  CHECK(before.at(0) == jitterd::CpuTimes{150, 1000, 0, true});
  CHECK(before.at(1) == jitterd::CpuTimes{10, 1000, 0, true});
  const auto after = jitterd::parse_proc_stat(
      "cpu0 100 0 50 900 50 0 0 0 0 0\n"  // idle only: 0% busy
      "cpu1 60 0 10 1020 0 0 5 5 0 0\n"   // +70 busy (user, system, irq, steal) of +100
      "cpu2 1 0 0 1 0 0 0 0 0 0\n");      // new: no share
  const auto shares = jitterd::busy_shares(before, after);
  REQUIRE(shares.size() == 2);
  CHECK(shares.at(0) == Approx(0.0));
  CHECK(shares.at(1) == Approx(0.70));
  // iowait (the fifth field) went backwards by more than busy grew: no share, not one above 1.
  const auto backwards = jitterd::parse_proc_stat("cpu0 180 0 50 800 0 0 0 0 0 0\n");
  CHECK(jitterd::busy_shares(before, backwards).empty());
}

TEST_CASE("parse_proc_stat: steal is the eighth column, absent on older kernels' shorter lines", "[posture]") {
  const auto times = jitterd::parse_proc_stat(
      "cpu0 3304262 281723 458045 885048 3913 0 10459 5186 0 0\n"
      "cpu1 10 0 0 990 0 0 5\n");  // seven columns: a kernel without steal accounting
  REQUIRE(times.size() == 2);
  CHECK(times.at(0).has_steal);
  CHECK(times.at(0).steal == 5186);
  CHECK_FALSE(times.at(1).has_steal);
  CHECK(times.at(1).steal == 0);
}

TEST_CASE("managed IRQs: debugfs flags where readable, else nvme I/O queues bound to one cpu", "[posture]") {
  using jitterd::irq_management;
  using jitterd::IrqManagement;
  const std::string managed =
      "handler:  handle_edge_irq\ndstate:   0x01600200\n            IRQD_ACTIVATED\n"
      "            IRQD_AFFINITY_MANAGED\nnode:     0\n";
  const std::string plain = "handler:  handle_edge_irq\ndstate:   0x00400000\n            IRQD_ACTIVATED\n";
  CHECK(irq_management(managed, "mlx5_comp3", {3, 4}) == IrqManagement::managed);
  // debugfs is the kernel's word: it overrides the name heuristic both ways.
  CHECK(irq_management(plain, "nvme0q3", {3}) == IrqManagement::unmanaged);
  CHECK(irq_management(std::nullopt, "nvme0q3", {3}) == IrqManagement::managed_by_name);
  CHECK(irq_management(std::nullopt, "nvme12q100", {7}) == IrqManagement::managed_by_name);
  CHECK(irq_management(std::nullopt, "nvme0q0", {0}) == IrqManagement::unmanaged);  // the admin queue
  CHECK(irq_management(std::nullopt, "nvme0q3", {2, 3}) == IrqManagement::unmanaged);
  CHECK(irq_management(std::nullopt, "nvmeq3", {3}) == IrqManagement::unmanaged);
  CHECK(irq_management(std::nullopt, "mlx5_comp3", {3}) == IrqManagement::unmanaged);
}

TEST_CASE("the tuned NVMe server: managed queues on isolated cpus, the NIC queue on housekeeping", "[posture]") {
  const Posture posture = read_posture(fixture_reader("tuned_nvme"));
  const jitterd::IrqAffinity* queue = find_irq(posture, 54);
  REQUIRE(queue != nullptr);
  CHECK(queue->name == "nvme0q4");
  CHECK(queue->cpus == Cpus{4});
  CHECK(queue->management == jitterd::IrqManagement::managed_by_name);
  CHECK(find_irq(posture, 50)->management == jitterd::IrqManagement::unmanaged);  // nvme0q0, admin
  CHECK(find_irq(posture, 45)->cpus == Cpus{9});
}

TEST_CASE("numbered_irq_deltas: device IRQs that fired, by irq and cpu", "[posture]") {
  const auto table = [](std::uint64_t nic_on_cpu1) {
    return jitterd::parse_proc_interrupts(
        "           CPU0       CPU1\n"
        " 24:         10        " +
        std::to_string(nic_on_cpu1) +
        "   PCI-MSI eth0-rx-0\n"
        " 25:          5          0   PCI-MSI nvme0q1\n"
        "LOC:        100        200   Local timer interrupts\n");
  };
  const auto fired = jitterd::numbered_irq_deltas(table(7), table(19));
  CHECK(fired == std::map<int, std::map<int, std::uint64_t>>{{24, {{1, 12}}}});
  CHECK(jitterd::numbered_irq_deltas(table(7), table(7)).empty());
}

TEST_CASE("task stat and status: comm with blanks and parentheses, processor, kernel-thread flag", "[posture]") {
  const std::string tail =
      " S 1 2 3 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 12 0 0 18446744073709551615 0 0 0 0 0 0 "
      "0 2147483647 0 0 0 0 17 6 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
  const auto stat = jitterd::parse_task_stat("812 (my (odd) name)" + tail);
  REQUIRE(stat);
  CHECK(stat->comm == "my (odd) name");
  CHECK(stat->processor == 6);
  CHECK((stat->flags & 0x00200000) != 0);  // 2129984 = 0x208040: PF_KTHREAD
  CHECK_FALSE(jitterd::parse_task_stat("812 (short) S 1 2 3\n"));
  CHECK_FALSE(jitterd::parse_task_stat("no parentheses"));
  CHECK(jitterd::parse_cpus_allowed_list("Name:\tx\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n") == Cpus{0, 1});
  CHECK_FALSE(jitterd::parse_cpus_allowed_list("Name:\tx\n"));
}

TEST_CASE("the tuned NVMe server's tasks: per-cpu kernel threads, the trader's pinned threads, sshd",
          "[posture]") {
  const Posture posture = read_posture(fixture_reader("tuned_nvme"));
  REQUIRE(posture.tasks.size() == 71);
  const auto md = std::find_if(posture.tasks.begin(), posture.tasks.end(),
                               [](const jitterd::TaskSeen& t) { return t.tid == 5001; });
  REQUIRE(md != posture.tasks.end());
  CHECK(md->pid == 5000);
  CHECK(md->comm == "trader-md");
  CHECK(md->processor == 3);
  CHECK(md->allowed == Cpus{3});
  CHECK_FALSE(md->kernel_thread);
  CHECK(posture.tasks.front().comm == "systemd");
  CHECK(read_posture(fixture_reader("tuned_server")).tasks.empty());
}
