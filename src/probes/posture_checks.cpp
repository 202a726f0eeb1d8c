// SPDX-License-Identifier: Apache-2.0
#include "probes/posture_checks.h"

#include <algorithm>
#include <map>

#include "host/cpu_list.h"
#include "host/task_classes.h"
#include "host/text.h"
#include "probes/posture_checklist.h"
#include "probes/posture_fixes.h"

namespace jitterd {
namespace {

std::string us_text(long long us) { return std::to_string(us) + " us"; }

std::string format_share(double share) {
  const int tenths = static_cast<int>(share * 1000 + 0.5);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

// isolated and nohz_full: the kernel's effective set against the expected one, or else every
// sampled CPU in it. `what` says what membership buys, for the WARN lines.
// `known`: false when the kernel's set could not be read; then one line says so instead of
// judging every CPU against an empty set.
void check_cpu_set(Checklist& list, const std::string& check, const std::vector<int>& actual, bool known,
                   const std::optional<std::vector<int>>& expected, const std::string& what) {
  if (!known) {
    list.add(check, std::nullopt, expected ? CheckStatus::fail : CheckStatus::warn,
             "cannot check: the kernel's " + check + " set could not be read", expected.has_value(),
             isolated_set_unreadable_fix());
    return;
  }
  if (expected) {
    const std::vector<std::string> fix = cpu_set_fix(list.posture(), check, *expected);
    for (int cpu : cpus_minus(*expected, actual)) {
      list.add(check, cpu, CheckStatus::fail,
               "cpu " + std::to_string(cpu) + " is not in the kernel's " + check + " set " +
                   describe_cpu_list(actual) + " (expected " + describe_cpu_list(*expected) + ")",
               true, fix);
    }
    for (int cpu : cpus_minus(actual, *expected)) {
      list.add(check, cpu, CheckStatus::fail,
               "cpu " + std::to_string(cpu) + " is in the kernel's " + check + " set " +
                   describe_cpu_list(actual) + " but not expected (" + describe_cpu_list(*expected) + ")",
               true, fix);
    }
    if (actual == *expected)
      list.add(check, std::nullopt, CheckStatus::pass,
               check + " cpus " + describe_cpu_list(actual) + ", as expected", true);
    return;
  }
  const std::vector<int> outside = cpus_minus(list.sampled(), actual);
  const std::vector<std::string> fix = cpu_set_fix(list.posture(), check, cpus_union(actual, outside));
  for (int cpu : outside) {
    list.add(check, cpu, CheckStatus::warn, "cpu " + std::to_string(cpu) + " is sampled but not " + what, false,
             fix);
  }
  if (outside.empty()) {
    list.add(check, std::nullopt, CheckStatus::pass,
             "sampled cpus " + describe_cpu_list(list.sampled()) + " are all " + check + " (" + check + " set " +
                 describe_cpu_list(actual) + ")",
             false);
  }
}

// A kernel built without CONFIG_NO_HZ_FULL has no nohz_full file and ignores nohz_full=: one line
// that says so, and a fix that names what can help (another kernel), never the boot parameter.
void check_nohz_full_unsupported(Checklist& list, const std::optional<std::vector<int>>& expected) {
  const std::string why =
      "the running kernel is built without CONFIG_NO_HZ_FULL (no devices/system/cpu/nohz_full): the "
      "scheduler tick interrupts every CPU and nohz_full= has no effect on this kernel";
  const std::vector<std::string> fix{
      "# boot a kernel built with CONFIG_NO_HZ_FULL=y (Debian's and most distributions' stock kernels are) "
      "before adding nohz_full=; this kernel cannot stop the tick"};
  if (expected && !expected->empty()) {
    list.add("nohz_full", std::nullopt, CheckStatus::fail,
             why + " (expected nohz_full cpus " + describe_cpu_list(*expected) + ")", true, fix);
    return;
  }
  if (expected) {
    list.add("nohz_full", std::nullopt, CheckStatus::pass, "no nohz_full cpus, as expected (" + why + ")", true);
    return;
  }
  if (list.sampled().empty()) return;
  list.add("nohz_full", std::nullopt, CheckStatus::warn,
           "sampled cpus " + describe_cpu_list(list.sampled()) + " keep the tick: " + why, false, fix);
}

void check_rcu_nocbs(Checklist& list, const Posture& p) {
  // nohz_full implies rcu_nocbs for its CPUs (Documentation/timers/no_hz.rst).
  const std::optional<std::vector<int>> listed = param_cpus(p.isolation.rcu_nocbs);
  if (p.isolation.rcu_nocbs && !listed) {
    // Kernel forms this reader does not expand ("all", "N", strides): say so, guess nothing.
    list.add("rcu_nocbs", std::nullopt, CheckStatus::warn,
             "cannot check: rcu_nocbs=" + *p.isolation.rcu_nocbs + " is not a plain cpu list", false,
             rcu_nocbs_fix(cpus_union(p.nohz_full, list.sampled()), true));
    return;
  }
  std::vector<int> offloaded = listed.value_or(std::vector<int>{});
  offloaded.insert(offloaded.end(), p.nohz_full.begin(), p.nohz_full.end());
  offloaded = sorted_cpus(std::move(offloaded));
  const std::vector<int> outside = cpus_minus(list.sampled(), offloaded);
  const std::vector<std::string> fix =
      rcu_nocbs_fix(cpus_union(listed.value_or(std::vector<int>{}), outside), false);
  for (int cpu : outside) {
    list.add("rcu_nocbs", cpu, CheckStatus::warn,
             "RCU callbacks run on cpu " + std::to_string(cpu) + " (not in rcu_nocbs= or nohz_full=)", false, fix);
  }
  if (outside.empty()) {
    list.add("rcu_nocbs", std::nullopt, CheckStatus::pass, "RCU callbacks are offloaded from every sampled cpu",
             false);
  }
}

void check_smt(Checklist& list, const Posture& p, bool expected, const std::map<int, double>& busy) {
  const CheckStatus bad = expected ? CheckStatus::fail : CheckStatus::warn;
  bool all_good = true;
  for (int cpu : list.sampled()) {
    const auto it = p.smt.thread_siblings.find(cpu);
    if (it == p.smt.thread_siblings.end()) {
      all_good = false;
      list.add("smt", cpu, bad, "cannot check cpu " + std::to_string(cpu) + ": its core's siblings are unknown",
               expected, smt_siblings_unknown_fix(cpu));
      continue;
    }
    // One line per sampled CPU, naming every sibling that shares its core with something.
    std::string reasons;
    std::vector<int> busy_siblings;
    for (int sibling : it->second) {
      if (sibling == cpu) continue;
      std::string why;
      // A sampled sibling is busy with jitterd's own sampler: a fact about the sampling plan
      // (smt_plan_notes), not about the machine.
      if (has_cpu(list.sampled(), sibling)) continue;
      if (const auto share = busy.find(sibling); share != busy.end()) {
        // Measured: what ran there is what shares the core, isolated or not.
        if (share->second <= kIdleSiblingShare) continue;
        why = "was busy " + format_share(share->second) + " of the time measured";
      } else if (!has_cpu(p.isolated, sibling)) {
        why = "is not isolated: tasks scheduled there share the core";
      } else {
        continue;
      }
      reasons += (reasons.empty() ? "" : "; ") + std::string("cpu ") + std::to_string(sibling) + ", which " + why;
      busy_siblings.push_back(sibling);
    }
    if (reasons.empty()) continue;
    all_good = false;
    list.add("smt", cpu, bad, "cpu " + std::to_string(cpu) + " shares a core with " + reasons, expected,
             smt_busy_siblings_fix(p, list.sampled(), busy_siblings));
  }
  if (all_good) {
    list.add(
        "smt", std::nullopt, CheckStatus::pass,
        "no sampled cpu shares its core with a busy cpu (smt " + p.smt.control.value_or("state unknown") + ")",
        expected);
  }
}

// "irqbalance (812), sshd (901), cron (77) and 2 more": how stray_tasks' reasons name tasks.
std::string task_list(const std::vector<const TaskSeen*>& tasks) {
  return first_three(tasks, [](const TaskSeen& t) { return t.comm + " (" + std::to_string(t.tid) + ")"; });
}

// Tasks seen running on (stat field 39), or allowed on (Cpus_allowed_list), each sampled CPU.
void check_stray_tasks(Checklist& list, const Posture& p, const PostureExpectations& expect) {
  const bool expected = expect.no_stray_tasks;
  const CheckStatus bad = expected ? CheckStatus::fail : CheckStatus::warn;
  const bool others_visible =
      std::any_of(p.tasks.begin(), p.tasks.end(), [&](const TaskSeen& t) { return t.pid != p.reader_pid; });
  if (!others_visible) {
    list.add("stray_tasks", std::nullopt, bad,
             "cannot check: no task but jitterd's own is visible under /proc (ProtectProc=invisible or hidepid=)",
             expected, tasks_invisible_fix());
    return;
  }
  bool any = false;
  std::size_t kernel = 0, application = 0;
  for (int cpu : list.sampled()) {
    const CpuTasks tasks = tasks_on_cpu(p.tasks, cpu, p.reader_pid, expect.application_tasks);
    kernel += tasks.running[static_cast<std::size_t>(TaskClass::kernel_percpu)].size();
    application += tasks.running[static_cast<std::size_t>(TaskClass::application)].size();
    const auto& running = tasks.running[static_cast<std::size_t>(TaskClass::stray)];
    if (running.empty() && tasks.stray_allowed.empty()) continue;
    any = true;
    std::string reason;
    if (!running.empty())
      reason = std::to_string(running.size()) + " stray task(s) last ran on cpu " + std::to_string(cpu) + ": " +
               task_list(running);
    if (!tasks.stray_allowed.empty())
      reason += (reason.empty() ? "" : "; ") + std::to_string(tasks.stray_allowed.size()) +
                " more may run there: " + task_list(tasks.stray_allowed);
    std::vector<const TaskSeen*> strays = running;
    strays.insert(strays.end(), tasks.stray_allowed.begin(), tasks.stray_allowed.end());
    list.add("stray_tasks", cpu, bad, reason, expected, stray_fix(p, list.sampled(), strays));
  }
  if (!any) {
    list.add("stray_tasks", std::nullopt, CheckStatus::pass,
             "no stray task ran on or may run on a sampled cpu (there: " + std::to_string(kernel) +
                 " per-cpu kernel threads, " + std::to_string(application) + " application tasks)",
             expected);
  }
}

void check_governor(Checklist& list, const Posture& p, const std::optional<std::string>& expected) {
  std::map<int, const CpuFreq*> by_cpu;
  for (const CpuFreq& f : p.cpufreq) by_cpu[f.cpu] = &f;
  const std::string wanted = expected.value_or("performance");
  bool all_good = true;
  for (int cpu : list.sampled()) {
    const auto it = by_cpu.find(cpu);
    const std::optional<std::string> governor = it == by_cpu.end() ? std::nullopt : it->second->governor;
    if (governor == wanted) continue;
    all_good = false;
    const std::vector<std::string> fix = governor_fix(cpu, wanted, governor.has_value());
    list.add("governor", cpu, expected ? CheckStatus::fail : CheckStatus::warn,
             governor ? "cpu " + std::to_string(cpu) + " runs the " + *governor + " governor, not " + wanted
                      : "cannot check cpu " + std::to_string(cpu) +
                            ": no cpufreq governor (frequency set by firmware or hypervisor)",
             expected.has_value(), fix);
  }
  if (all_good)
    list.add("governor", std::nullopt, CheckStatus::pass, "every sampled cpu runs the " + wanted + " governor",
             expected.has_value());
}

void check_cstates(Checklist& list, const Posture& p, const std::optional<std::chrono::nanoseconds>& expected) {
  std::map<int, const CpuIdle*> by_cpu;
  for (const CpuIdle& idle : p.cpuidle) by_cpu[idle.cpu] = &idle;
  const long long limit_us = expected ? std::chrono::duration_cast<std::chrono::microseconds>(*expected).count()
                                      : kDeepCstateWarning.count();
  const CheckStatus bad = expected ? CheckStatus::fail : CheckStatus::warn;
  bool all_good = true;
  long long deepest_seen = -1;
  for (int cpu : list.sampled()) {
    const auto it = by_cpu.find(cpu);
    if (it == by_cpu.end()) {
      all_good = false;
      list.add("cstates", cpu, bad, "cannot check cpu " + std::to_string(cpu) + ": no cpuidle states listed",
               expected.has_value(), no_cpuidle_fix());
      continue;
    }
    const IdleState* deepest = nullptr;
    const IdleState* unreadable = nullptr;
    for (const IdleState& s : it->second->states) {
      if (s.enabled && !s.exit_latency_us) unreadable = &s;
      if (s.enabled && s.exit_latency_us && (!deepest || *s.exit_latency_us > *deepest->exit_latency_us))
        deepest = &s;
    }
    if (unreadable) {
      all_good = false;
      list.add("cstates", cpu, bad,
               "cannot check cpu " + std::to_string(cpu) + ": enabled state " + unreadable->name +
                   " has no readable exit latency",
               expected.has_value(), cstate_unreadable_fix(cpu, unreadable->index));
      continue;
    }
    if (!deepest) continue;  // no enabled state at all: the CPU cannot idle deeper than polling
    deepest_seen = std::max(deepest_seen, *deepest->exit_latency_us);
    if (*deepest->exit_latency_us <= limit_us) continue;
    all_good = false;
    list.add("cstates", cpu, bad,
             "cpu " + std::to_string(cpu) + " may enter " + deepest->name + " (exit latency " +
                 us_text(*deepest->exit_latency_us) + ", limit " + us_text(limit_us) + ")",
             expected.has_value(), cstate_limit_fix(cpu, limit_us));
  }
  if (all_good) {
    list.add("cstates", std::nullopt, CheckStatus::pass,
             "no enabled C-state of a sampled cpu exits slower than " + us_text(limit_us) +
                 (deepest_seen >= 0 ? " (deepest: " + us_text(deepest_seen) + ")" : ""),
             expected.has_value());
  }
}

void check_workqueue(Checklist& list, const Posture& p) {
  if (!p.workqueue_cpus) {
    list.add("workqueue", std::nullopt, CheckStatus::warn, "cannot check: no workqueue cpumask", false,
             no_workqueue_mask_fix());
    return;
  }
  bool any = false;
  std::vector<int> target = cpus_minus(*p.workqueue_cpus, list.sampled());
  if (target.empty()) target = housekeeping_cpus(p, list.sampled());
  for (int cpu : list.sampled()) {
    if (!has_cpu(*p.workqueue_cpus, cpu)) continue;
    any = true;
    list.add("workqueue", cpu, CheckStatus::warn,
             "unbound workqueues may run on cpu " + std::to_string(cpu) + " (workqueue cpumask " +
                 describe_cpu_list(*p.workqueue_cpus) + ")",
             false, workqueue_fix(target));
  }
  if (!any)
    list.add("workqueue", std::nullopt, CheckStatus::pass,
             "unbound workqueues stay on cpus " + describe_cpu_list(*p.workqueue_cpus), false);
}

void check_clocksource(Checklist& list, const Posture& p, const std::optional<std::string>& expected) {
  if (!p.clocksource) {
    list.add("clocksource", std::nullopt, expected ? CheckStatus::fail : CheckStatus::warn,
             "cannot check: no current clocksource", expected.has_value(), no_clocksource_fix());
    return;
  }
  const std::string& current = p.clocksource->current;
  const bool good = expected ? current == *expected : current == "tsc" || current == "arch_sys_counter";
  const std::string available = joined_with(p.clocksource->available, " ");
  const auto& offered = p.clocksource->available;
  std::string wanted = expected.value_or("tsc");
  if (!expected && std::find(offered.begin(), offered.end(), "arch_sys_counter") != offered.end())
    wanted = "arch_sys_counter";
  const std::vector<std::string> fix = clocksource_fix(wanted, offered, available);
  list.add("clocksource", std::nullopt,
           good       ? CheckStatus::pass
           : expected ? CheckStatus::fail
                      : CheckStatus::warn,
           "current clocksource " + current +
               (expected ? ", expected " + *expected
                : good   ? ""
                         : ": slower to read than the CPU counter") +
               " (available: " + (available.empty() ? "unknown" : available) + ")",
           expected.has_value(), fix);
}

void check_machine_wide(Checklist& list, const Posture& p) {
  const auto& thp = p.thp.enabled;
  list.add("thp", std::nullopt,
           !thp               ? CheckStatus::warn
           : *thp == "always" ? CheckStatus::warn
                              : CheckStatus::pass,
           !thp ? "cannot check: transparent hugepages state unknown"
                : "transparent hugepages " + *thp +
                      (*thp == "always" ? ": khugepaged may compact and collapse pages under any task" : ""),
           false, thp_fix(thp.has_value()));
  const auto& nmi = p.sysctls.nmi_watchdog;
  list.add("nmi_watchdog", std::nullopt, nmi && *nmi == "0" ? CheckStatus::pass : CheckStatus::warn,
           !nmi ? "cannot check: kernel.nmi_watchdog unknown"
           : *nmi == "0"
               ? "kernel.nmi_watchdog 0"
               : "kernel.nmi_watchdog " + *nmi + ": the hard-lockup detector sends every cpu a periodic NMI",
           false, nmi_watchdog_fix(nmi.has_value()));
  const auto stat = p.sysctls.stat_interval ? parse_integer(*p.sysctls.stat_interval) : std::nullopt;
  list.add("stat_interval", std::nullopt, stat && *stat > 1 ? CheckStatus::pass : CheckStatus::warn,
           !stat ? "cannot check: vm.stat_interval unknown"
           : *stat > 1
               ? "vm.stat_interval " + std::to_string(*stat)
               : "vm.stat_interval " + std::to_string(*stat) +
                     ": vmstat refreshes every second on every busy cpu; isolation guides raise it (e.g. 10)",
           false, stat_interval_fix(stat.has_value()));
}

}  // namespace

std::string_view to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::pass:
      return "PASS";
    case CheckStatus::warn:
      return "WARN";
    case CheckStatus::fail:
      return "FAIL";
  }
  return "?";
}

std::vector<PostureCheck> check_posture(const Posture& posture, const std::vector<int>& sampled,
                                        const PostureExpectations& expect, const std::map<int, double>& busy,
                                        const std::optional<IrqFiring>& fired) {
  Checklist list(posture, sampled);
  check_cpu_set(list, "isolated", posture.isolated, posture.isolated_known, expect.isolated,
                "isolated: the scheduler may place tasks on it");
  check_runtime_partitions(list, posture);
  if (posture.nohz_full_supported)
    check_cpu_set(list, "nohz_full", posture.nohz_full, true, expect.nohz_full,
                  "nohz_full: the scheduler tick interrupts it");
  else
    check_nohz_full_unsupported(list, expect.nohz_full);
  check_rcu_nocbs(list, posture);
  check_device_irqs(list, posture, expect, fired);
  check_smt(list, posture, expect.smt_siblings_idle, busy);
  check_stray_tasks(list, posture, expect);
  check_governor(list, posture, expect.governor);
  check_cstates(list, posture, expect.max_exit_latency);
  check_workqueue(list, posture);
  check_clocksource(list, posture, expect.clocksource);
  check_machine_wide(list, posture);
  return list.take();
}

std::vector<std::string> smt_plan_notes(const Posture& posture, const std::vector<int>& sampled) {
  std::vector<std::string> notes;
  for (int cpu : sampled) {
    const auto it = posture.smt.thread_siblings.find(cpu);
    if (it == posture.smt.thread_siblings.end()) continue;
    std::vector<int> sampled_core;
    for (int sibling : it->second)
      if (has_cpu(sampled, sibling)) sampled_core.push_back(sibling);
    // One note per core, from its lowest sampled CPU.
    if (sampled_core.size() < 2 || sampled_core.front() != cpu) continue;
    notes.push_back("cpus " + format_cpu_list(sampled_core) +
                    " share one core and are all sampled: their spinning samplers compete for its pipeline, "
                    "so each one's numbers include the others (cpus_per_core: one with cpus: auto, or a cpus "
                    "list with one thread per core, leaves the siblings idle)");
  }
  return notes;
}

CheckStatus overall_status(const std::vector<PostureCheck>& checks) {
  CheckStatus worst = CheckStatus::pass;
  for (const PostureCheck& c : checks) worst = std::max(worst, c.status);
  return worst;
}

}  // namespace jitterd
