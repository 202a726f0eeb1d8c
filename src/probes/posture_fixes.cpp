// SPDX-License-Identifier: Apache-2.0
#include "probes/posture_fixes.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "host/cpu_list.h"
#include "host/posture_parse.h"

namespace jitterd {
namespace {

// How a kernel parameter gets set, appended to the lines that name one.
constexpr std::string_view kBootHow = " (GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub and reboot)";

// Where IRQs should go: irqaffinity= when it names CPUs, else the housekeeping CPUs.
std::vector<int> irq_target_cpus(const Posture& p, const std::vector<int>& sampled) {
  const std::optional<std::vector<int>> listed = param_cpus(p.isolation.irqaffinity);
  return listed && !listed->empty() ? *listed : housekeeping_cpus(p, sampled);
}

std::string persist_sysctl(const std::string& key, const std::string& value) {
  return "# persist: \"" + key + " = " + value + "\" in /etc/sysctl.d/90-isolation.conf";
}

// "# kernel command line: set PARAM=VALUE (GRUB_CMDLINE_LINUX ...)".
std::string kernel_param_fix(const std::string& param, const std::string& value) {
  return "# kernel command line: set " + param + "=" + value + std::string(kBootHow);
}

// isolcpus= with the flags already in use, or those tuned's cpu-partitioning profile sets
// (managed_irq,domain), for `cpus`.
std::string isolcpus_value(const Posture& p, const std::vector<int>& cpus) {
  std::string flags;
  for (const std::string& flag : p.isolation.isolcpus_flags) flags += flag + ",";
  return (flags.empty() ? std::string("managed_irq,domain,") : flags) + format_cpu_list(cpus);
}

// The kernel's hex cpumask format ("303", "1,00000003"): 32-bit groups, most significant first.
std::string cpu_mask_hex(const std::vector<int>& cpus) {
  if (cpus.empty()) return "0";
  std::vector<unsigned> groups(static_cast<std::size_t>(cpus.back() / 32 + 1), 0);
  for (int cpu : cpus) groups[static_cast<std::size_t>(cpu / 32)] |= 1u << (cpu % 32);
  std::string out;
  for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
    char text[16];
    std::snprintf(text, sizeof text, out.empty() ? "%x" : ",%08x", *it);
    out += text;
  }
  return out;
}

}  // namespace

std::vector<int> housekeeping_cpus(const Posture& p, const std::vector<int>& sampled) {
  std::vector<int> out = cpus_minus(cpus_minus(p.online, p.isolated), sampled);
  return out.empty() ? cpus_minus(p.online, sampled) : out;
}

std::string irq_label(const IrqAffinity& irq) { return "irq " + std::to_string(irq.irq) + " " + irq.name; }

std::vector<std::string> cpu_set_fix(const Posture& p, const std::string& check, const std::vector<int>& target) {
  const std::string boot_how(kBootHow);
  if (check != "isolated") {
    if (target.empty()) return {"# kernel command line: remove nohz_full=" + boot_how};
    return {kernel_param_fix("nohz_full", format_cpu_list(target))};
  }
  if (target.empty()) return {"# kernel command line: remove isolcpus=" + boot_how};
  const std::vector<int> others = cpus_minus(p.online, target);
  std::vector<std::string> fix{kernel_param_fix("isolcpus", isolcpus_value(p, target))};
  if (!others.empty()) {
    fix.push_back("# and keep services off them: CPUAffinity=" + format_cpu_list(others) +
                  " in /etc/systemd/system.conf (takes effect at the next boot)");
  }
  return fix;
}

std::vector<std::string> rcu_nocbs_fix(const std::vector<int>& cpus, bool unreadable_form) {
  return {kernel_param_fix("rcu_nocbs", format_cpu_list(cpus)) +
          (unreadable_form ? ", a list this check can read" : "")};
}

std::vector<std::string> irq_affinities_unreadable_fix() {
  return {"# mount procfs with /proc/irq readable (jitterd's --path.procfs), then run the check again"};
}

std::vector<std::string> isolated_set_unreadable_fix() {
  return {
      "# mount sysfs with devices/system/cpu/isolated readable (jitterd's --path.sysfs), then run the check "
      "again"};
}

std::vector<std::string> irqs_not_yet_measured_fix() {
  return {"# nothing to change: the next reading measures it"};
}

std::vector<std::string> irq_fix(const Posture& p, const std::vector<int>& sampled, int cpu,
                                 const std::vector<const IrqAffinity*>& fired,
                                 const std::vector<const IrqAffinity*>& may_fire, bool judge_affinity) {
  std::vector<std::string> fix;
  const std::string target = format_cpu_list(irq_target_cpus(p, sampled));
  std::vector<const IrqAffinity*> movable, managed;
  for (const IrqAffinity* irq : fired)
    (irq->management == IrqManagement::unmanaged ? movable : managed).push_back(irq);
  if (judge_affinity) movable.insert(movable.end(), may_fire.begin(), may_fire.end());
  for (const IrqAffinity* irq : movable)
    fix.push_back("echo " + target + " > /proc/irq/" + std::to_string(irq->irq) + "/smp_affinity_list");
  if (!movable.empty()) {
    fix.push_back(
        "# keep irqbalance from moving them back: IRQBALANCE_BANNED_CPULIST=" + format_cpu_list(sampled) +
        " in /etc/default/irqbalance; new IRQs at boot: irqaffinity=" + target + std::string(kBootHow));
  }
  for (const IrqAffinity* irq : managed) {
    fix.push_back("# " + irq_label(*irq) + " is kernel-managed: its affinity cannot be changed from user space; " +
                  "isolcpus=" + isolcpus_value(p, cpus_union(p.isolated, {cpu})) +
                  " (with managed_irq) keeps managed IRQs off isolated cpus where the device allows, or give the "
                  "device fewer queues");
  }
  return fix;
}

std::vector<std::string> smt_siblings_unknown_fix(int cpu) {
  return {"# the kernel lists no topology/thread_siblings_list for cpu " + std::to_string(cpu) +
          "; with SMT off (nosmt" + std::string(kBootHow) + ") there are none to check"};
}

std::vector<std::string> smt_busy_siblings_fix(const Posture& p, const std::vector<int>& sampled,
                                               const std::vector<int>& busy_siblings) {
  return {"# keep other work off its sibling(s) " + format_cpu_list(busy_siblings) + ": " +
              kernel_param_fix("isolcpus",
                               isolcpus_value(p, cpus_union(cpus_union(p.isolated, sampled), busy_siblings)))
                  .substr(2),
          "# or turn SMT off for the whole machine (nosmt on the kernel command line to keep it off):",
          "echo off > /sys/devices/system/cpu/smt/control"};
}

std::vector<std::string> tasks_invisible_fix() {
  return {"# let jitterd see other processes: ProtectProc=default in its unit (the shipped one does)"};
}

std::vector<std::string> stray_fix(const Posture& p, const std::vector<int>& sampled,
                                   const std::vector<const TaskSeen*>& strays) {
  const std::string target = format_cpu_list(housekeeping_cpus(p, sampled));
  std::vector<std::string> fix;
  std::vector<int> pids;
  bool kernel = false;
  for (const TaskSeen* task : strays) {
    kernel = kernel || task->kernel_thread;
    if (!task->kernel_thread && std::find(pids.begin(), pids.end(), task->pid) == pids.end())
      pids.push_back(task->pid);
  }
  for (int pid : pids) fix.push_back("taskset -a -p -c " + target + " " + std::to_string(pid));
  if (!pids.empty())
    fix.push_back("# for every service at boot: CPUAffinity=" + target + " in /etc/systemd/system.conf");
  if (kernel)
    fix.push_back("# unbound kernel threads follow isolcpus=domain and the workqueue cpumask: " +
                  kernel_param_fix("isolcpus", isolcpus_value(p, cpus_union(p.isolated, sampled))).substr(2));
  return fix;
}

std::vector<std::string> governor_fix(int cpu, const std::string& wanted, bool has_governor) {
  if (!has_governor) {
    return {
        "# no cpufreq driver: set the performance or maximum-frequency policy in the BIOS, or on the "
        "hypervisor for a VM"};
  }
  return {"cpupower -c " + std::to_string(cpu) + " frequency-set -g " + wanted,
          "# persist: tuned's cpu-partitioning profile sets it at boot, or a systemd unit running the line above"};
}

std::vector<std::string> no_cpuidle_fix() {
  return {"# no cpuidle driver: limit C-states in the BIOS, or on the hypervisor for a VM"};
}

std::vector<std::string> cstate_unreadable_fix(int cpu, int state_index) {
  return {"cpupower -c " + std::to_string(cpu) + " idle-set -d " + std::to_string(state_index)};
}

std::vector<std::string> cstate_limit_fix(int cpu, long long limit_us) {
  return {"cpupower -c " + std::to_string(cpu) + " idle-set -D " + std::to_string(limit_us),
          "# at boot (x86): intel_idle.max_cstate=1 processor.max_cstate=1 on the kernel command line, or "
          "tuned's force_latency"};
}

std::vector<std::string> no_workqueue_mask_fix() {
  return {
      "# the kernel offers no /sys/devices/virtual/workqueue/cpumask (older than 4.2?): "
      "workqueue.unbound_cpus= or isolcpus=domain keeps unbound work off isolated cpus"};
}

std::vector<std::string> workqueue_fix(const std::vector<int>& target) {
  return {"echo " + cpu_mask_hex(target) + " > /sys/devices/virtual/workqueue/cpumask",
          "# that is cpus " + format_cpu_list(target) + "; tuned's cpu-partitioning writes the same at boot"};
}

std::vector<std::string> no_clocksource_fix() {
  return {"# the kernel offers no /sys/devices/system/clocksource/clocksource0/current_clocksource"};
}

std::vector<std::string> clocksource_fix(const std::string& wanted, const std::vector<std::string>& offered,
                                         const std::string& available) {
  if (std::find(offered.begin(), offered.end(), wanted) != offered.end()) {
    return {"echo " + wanted + " > /sys/devices/system/clocksource/clocksource0/current_clocksource",
            kernel_param_fix("clocksource", wanted) +
                (wanted == "tsc" ? "; tsc=reliable stops the watchdog from demoting it" : "")};
  }
  return {"# " + wanted + " is not offered (available: " + (available.empty() ? "unknown" : available) +
          "): the kernel judged it unstable; check the BIOS (TSC sync across sockets) or the hypervisor"};
}

std::vector<std::string> thp_fix(bool readable) {
  if (!readable) return {"# the kernel offers no /sys/kernel/mm/transparent_hugepage/enabled"};
  return {"echo madvise > /sys/kernel/mm/transparent_hugepage/enabled",
          kernel_param_fix("transparent_hugepage", "madvise") + " (or never)"};
}

std::vector<std::string> nmi_watchdog_fix(bool readable) {
  if (!readable) {
    return {
        "# the kernel offers no /proc/sys/kernel/nmi_watchdog (built without the lockup detector: nothing to "
        "change)"};
  }
  return {"sysctl -w kernel.nmi_watchdog=0",
          persist_sysctl("kernel.nmi_watchdog", "0") + ", or nowatchdog on the kernel command line"};
}

std::vector<std::string> stat_interval_fix(bool readable) {
  if (!readable) return {"# the kernel offers no /proc/sys/vm/stat_interval"};
  return {"sysctl -w vm.stat_interval=10", persist_sysctl("vm.stat_interval", "10")};
}

}  // namespace jitterd
