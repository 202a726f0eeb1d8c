// SPDX-License-Identifier: Apache-2.0
// The fixes of the isolation checklist (posture_checks.h): for each WARN and FAIL, the change that
// would fix it, as precisely as the facts allow, in the words of the tool that makes it. Each line
// is either a shell command (`sysctl -w vm.stat_interval=10`) or a comment starting with "# " (a
// kernel parameter to set, a file to edit); `jitterd report posture --format script` prints them
// as a commented script, and jitterd never runs them. Pure functions on plain values.
#pragma once

#include <string>
#include <vector>

#include "host/posture.h"

namespace jitterd {

// Where work moved off sampled CPUs should go: online CPUs neither isolated nor sampled (or, if
// that leaves none, just not sampled).
std::vector<int> housekeeping_cpus(const Posture& p, const std::vector<int>& sampled);

// "irq 45 eth0-rx-0": how the checklist names an IRQ, in reasons and fixes alike.
std::string irq_label(const IrqAffinity& irq);

// isolated, nohz_full: the boot-time change that makes the kernel's `check` set `target`.
std::vector<std::string> cpu_set_fix(const Posture& p, const std::string& check, const std::vector<int>& target);

// rcu_nocbs= naming `cpus`; `unreadable_form`: the current value is a form the check cannot read.
std::vector<std::string> rcu_nocbs_fix(const std::vector<int>& cpus, bool unreadable_form);

// device_irqs. No IRQ affinity readable at all.
std::vector<std::string> irq_affinities_unreadable_fix();
// The kernel's isolated set (devices/system/cpu/isolated) could not be read.
std::vector<std::string> isolated_set_unreadable_fix();
// `no_device_irqs: fired` before a second reading of /proc/interrupts: nothing to change.
std::vector<std::string> irqs_not_yet_measured_fix();
// IRQs of `cpu` (sampled): those that fired there move to irqaffinity= or the housekeeping CPUs
// (managed ones cannot move: isolcpus=managed_irq or fewer queues), and with `judge_affinity`
// those that may fire there too.
std::vector<std::string> irq_fix(const Posture& p, const std::vector<int>& sampled, int cpu,
                                 const std::vector<const IrqAffinity*>& fired,
                                 const std::vector<const IrqAffinity*>& may_fire, bool judge_affinity);

// smt. The kernel lists no siblings of `cpu`.
std::vector<std::string> smt_siblings_unknown_fix(int cpu);
// Siblings of sampled CPUs busy with other work: isolate them too, or SMT off.
std::vector<std::string> smt_busy_siblings_fix(const Posture& p, const std::vector<int>& sampled,
                                               const std::vector<int>& busy_siblings);

// stray_tasks. /proc shows jitterd only its own tasks.
std::vector<std::string> tasks_invisible_fix();
// Move the strays' processes to the housekeeping CPUs; kernel threads follow isolcpus=domain.
std::vector<std::string> stray_fix(const Posture& p, const std::vector<int>& sampled,
                                   const std::vector<const TaskSeen*>& strays);

// governor: `wanted` on `cpu`; `has_governor` false: no cpufreq driver to set it with.
std::vector<std::string> governor_fix(int cpu, const std::string& wanted, bool has_governor);

// cstates. No cpuidle driver.
std::vector<std::string> no_cpuidle_fix();
// An enabled state whose exit latency cannot be read: disable it.
std::vector<std::string> cstate_unreadable_fix(int cpu, int state_index);
// States deeper than `limit_us` on `cpu`.
std::vector<std::string> cstate_limit_fix(int cpu, long long limit_us);

// workqueue. No workqueue cpumask file.
std::vector<std::string> no_workqueue_mask_fix();
// Unbound workqueues onto `target`.
std::vector<std::string> workqueue_fix(const std::vector<int>& target);

// clocksource. No current clocksource.
std::vector<std::string> no_clocksource_fix();
// `wanted`, if the kernel offers it; `available`: the offered ones, space-separated ("" unknown).
std::vector<std::string> clocksource_fix(const std::string& wanted, const std::vector<std::string>& offered,
                                         const std::string& available);

// Machine-wide sysfs and sysctl checks; `readable` false: the kernel offers no such file.
std::vector<std::string> thp_fix(bool readable);
std::vector<std::string> nmi_watchdog_fix(bool readable);
std::vector<std::string> stat_interval_fix(bool readable);

}  // namespace jitterd
