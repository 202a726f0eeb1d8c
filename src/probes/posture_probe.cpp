// SPDX-License-Identifier: Apache-2.0
#include "probes/posture_probe.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "host/cpu_list.h"
#include "host/task_classes.h"
#include "host/text.h"
#include "measure/clock_ns.h"
#include "probes/posture_isolation.h"

namespace jitterd {
namespace {

// The CPUs in either list, sorted and unique.
std::vector<int> either(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return sorted_cpus(std::move(a));
}

// The IRQs whose affinity includes each CPU, in IRQ order (as irqs_on_cpu gives them), built once:
// the metrics ask per online CPU, and a 1,024-CPU machine has a thousand IRQs.
using IrqsByCpu = std::map<int, std::vector<const IrqAffinity*>>;

IrqsByCpu irqs_by_cpu(const Posture& p) {
  IrqsByCpu out;
  for (const IrqAffinity& irq : p.irqs)
    for (int cpu : irq.cpus) out[cpu].push_back(&irq);
  return out;
}

const std::vector<const IrqAffinity*>& irqs_of(const IrqsByCpu& index, int cpu) {
  static const std::vector<const IrqAffinity*> none;
  const auto found = index.find(cpu);
  return found == index.end() ? none : found->second;
}

void add_cpu_flags(const Posture& p, const IrqsByCpu& irqs_on, std::vector<ProbeMetric>& out) {
  for (int cpu : either(p.online, p.offline)) {
    out.push_back(gauge("jitterd_posture_cpu_online", "1 if the CPU is online, 0 if present but offline.",
                        {{"cpu", std::to_string(cpu)}}, has_cpu(p.online, cpu)));
  }
  // A set that could not be read exports no series rather than a 0 that reads as "not isolated"
  // (and no IRQs): jitterd_posture_unreadable_files says what is missing.
  for (int cpu : p.online) {
    const ProbeLabels labels{{"cpu", std::to_string(cpu)}};
    if (p.isolated_known) {
      out.push_back(gauge("jitterd_posture_cpu_isolated",
                          "1 if the CPU is in the kernel's effective isolated set.", labels,
                          has_cpu(p.isolated, cpu)));
    }
    out.push_back(gauge("jitterd_posture_cpu_nohz_full",
                        "1 if the CPU is in the kernel's effective nohz_full set.", labels,
                        has_cpu(p.nohz_full, cpu)));
    if (p.workqueue_cpus) {
      out.push_back(gauge("jitterd_posture_cpu_workqueue", "1 if unbound workqueues may run on the CPU.", labels,
                          has_cpu(*p.workqueue_cpus, cpu)));
    }
    if (p.irqs.empty()) continue;  // /proc/irq unreadable: the check says "cannot check"
    double irqs = 0;
    for (const IrqAffinity* irq : irqs_of(irqs_on, cpu)) irqs += irq->name.empty() ? 0 : 1;
    out.push_back(gauge("jitterd_posture_cpu_device_irqs",
                        "Device IRQs (with a handler) whose affinity includes the CPU.", labels, irqs));
  }
}

// Frequency, governor, C-states and siblings of the CPUs that matter: sampled and isolated ones.
void add_cpu_power(const Posture& p, const std::vector<int>& interest, std::vector<ProbeMetric>& out) {
  for (const CpuFreq& f : p.cpufreq) {
    if (!has_cpu(interest, f.cpu)) continue;
    const std::string cpu = std::to_string(f.cpu);
    if (f.governor) {
      out.push_back(gauge("jitterd_posture_cpufreq_governor_info", "1, labelled with the CPU's cpufreq governor.",
                          {{"cpu", cpu}, {"governor", *f.governor}}, 1));
    }
    // One name each, as node_exporter's node_cpu_scaling_frequency{,_min,_max}_hertz: a sum over
    // minimum, maximum and current would mean nothing.
    const std::tuple<const char*, const char*, std::optional<long long>> frequencies[] = {
        {"jitterd_posture_cpufreq_min_hertz", "The CPU's cpufreq scaling minimum frequency.", f.min_khz},
        {"jitterd_posture_cpufreq_max_hertz", "The CPU's cpufreq scaling maximum frequency.", f.max_khz},
        {"jitterd_posture_cpufreq_current_hertz", "The CPU's current frequency as cpufreq last saw it.",
         f.cur_khz}};
    for (const auto& [name, help, khz] : frequencies) {
      if (khz) out.push_back(gauge(name, help, {{"cpu", cpu}}, static_cast<double>(*khz) * 1e3));
    }
  }
  for (const CpuIdle& idle : p.cpuidle) {
    if (!has_cpu(interest, idle.cpu)) continue;
    for (const IdleState& state : idle.states) {
      if (!state.enabled || !state.exit_latency_us) continue;
      out.push_back(gauge("jitterd_posture_cpuidle_exit_latency_seconds",
                          "Exit latency of each enabled idle state of the CPU (the kernel's cpuidle latency).",
                          {{"cpu", std::to_string(idle.cpu)}, {"state", state.name}},
                          static_cast<double>(*state.exit_latency_us) * 1e-6));
    }
  }
  for (const auto& [cpu, siblings] : p.smt.thread_siblings) {
    if (!has_cpu(interest, cpu)) continue;
    out.push_back(gauge("jitterd_posture_cpu_siblings_info",
                        "1, labelled with the CPUs sharing the CPU's core (itself included).",
                        {{"cpu", std::to_string(cpu)}, {"siblings", format_cpu_list(siblings)}}, 1));
  }
}

void add_machine(const Posture& p, std::vector<ProbeMetric>& out) {
  if (p.smt.active)
    out.push_back(gauge("jitterd_posture_smt_active", "1 if SMT (hyper-threading) is active.", {}, *p.smt.active));
  if (p.smt.control) {
    out.push_back(gauge("jitterd_posture_smt_control_info", "1, labelled with devices/system/cpu/smt/control.",
                        {{"control", *p.smt.control}}, 1));
  }
  const IsolationParams& i = p.isolation;
  const std::pair<const char*, std::optional<std::string>> params[] = {
      {"isolcpus", i.isolcpus},
      {"nohz_full", i.nohz_full},
      {"rcu_nocbs", i.rcu_nocbs},
      {"irqaffinity", i.irqaffinity},
      {"rcu_nocb_poll", i.rcu_nocb_poll ? std::optional<std::string>("") : std::nullopt},
      {"skew_tick", i.skew_tick},
      {"intel_idle.max_cstate", i.intel_idle_max_cstate},
      {"processor.max_cstate", i.processor_max_cstate},
      {"idle", i.idle},
      {"mitigations", i.mitigations}};
  for (const auto& [param, value] : params) {
    if (!value) continue;
    std::string shown = *value;
    if (std::string(param) == "isolcpus") {
      for (auto it = i.isolcpus_flags.rbegin(); it != i.isolcpus_flags.rend(); ++it) shown = *it + "," + shown;
    }
    out.push_back(gauge("jitterd_posture_kernel_param_info",
                        "1 per isolation parameter on the kernel command line, with its value.",
                        {{"param", param}, {"value", shown}}, 1));
  }
  if (p.thp.enabled || p.thp.defrag) {
    out.push_back(
        gauge("jitterd_posture_thp_info", "1, labelled with the transparent hugepage enabled and defrag settings.",
              {{"enabled", p.thp.enabled.value_or("unknown")}, {"defrag", p.thp.defrag.value_or("unknown")}}, 1));
  }
  // One metric per sysctl, since their units differ, in base units: sched_rt_runtime_us becomes
  // seconds, except -1 (no limit), which stays -1.
  const std::tuple<const char*, const char*, const std::optional<std::string>&, double> sysctls[] = {
      {"jitterd_posture_sysctl_kernel_nmi_watchdog", "kernel.nmi_watchdog: 1 while the NMI watchdog runs.",
       p.sysctls.nmi_watchdog, 1},
      {"jitterd_posture_sysctl_kernel_timer_migration",
       "kernel.timer_migration: 1 if timers may move off an idle CPU.", p.sysctls.timer_migration, 1},
      {"jitterd_posture_sysctl_vm_stat_interval_seconds",
       "vm.stat_interval: how often per-CPU VM statistics are folded.", p.sysctls.stat_interval, 1},
      {"jitterd_posture_sysctl_kernel_sched_rt_runtime_seconds",
       "kernel.sched_rt_runtime_us in seconds: RT tasks' share of each RT period, -1 for no limit.",
       p.sysctls.sched_rt_runtime_us, 1e-6}};
  for (const auto& [name, help, text, unit] : sysctls) {
    const std::optional<long long> value = text ? parse_integer(*text) : std::nullopt;
    if (value) out.push_back(gauge(name, help, {}, static_cast<double>(*value) * (*value < 0 ? 1 : unit)));
  }
  if (p.sysctls.watchdog_cpumask) {
    out.push_back(gauge("jitterd_posture_watchdog_cpus_info",
                        "1, labelled with kernel.watchdog_cpumask (a CPU list).",
                        {{"cpus", *p.sysctls.watchdog_cpumask}}, 1));
  }
  out.push_back(gauge("jitterd_posture_unreadable_files",
                      "Posture files that were missing or unparsable in the last reading.", {},
                      static_cast<double>(p.problems.size())));
}

// Managed IRQs allowed on, and device IRQs seen firing on, the CPUs of interest (counts, so the
// series stay one per CPU however many IRQs the machine has).
void add_irq_counts(const IrqsByCpu& irqs_on, const std::vector<int>& interest,
                    const std::optional<IrqFiring>& fired, std::vector<ProbeMetric>& out) {
  // How many IRQs fired on each CPU, counted once rather than by a lookup per IRQ and CPU.
  std::map<int, double> fired_on;
  if (fired) {
    for (const auto& [irq, by_cpu] : fired->counts)
      for (const auto& [cpu, count] : by_cpu) fired_on[cpu] += 1;
  }
  for (int cpu : interest) {
    const ProbeLabels labels{{"cpu", std::to_string(cpu)}};
    double managed = 0;
    for (const IrqAffinity* irq : irqs_of(irqs_on, cpu))
      managed += !irq->name.empty() && irq->management != IrqManagement::unmanaged;
    out.push_back(
        gauge("jitterd_posture_cpu_managed_irqs",
              "Kernel-managed device IRQs whose affinity includes the CPU (debugfs, else nvme queue names).",
              labels, managed));
    if (!fired) continue;
    const auto found = fired_on.find(cpu);
    const double count = found == fired_on.end() ? 0 : found->second;
    out.push_back(gauge("jitterd_posture_cpu_device_irqs_fired",
                        "Device IRQs that fired on the CPU between the last two posture readings.", labels,
                        count));
  }
}

// Tasks last seen on each CPU of interest, by class (four series per CPU however many tasks).
void add_task_counts(const Posture& p, const std::vector<int>& interest,
                     const std::vector<std::string>& application, std::vector<ProbeMetric>& out) {
  // Only jitterd's own tasks visible (ProtectProc=invisible, hidepid=): a count of 0 strays would
  // read as a quiet CPU, so there are no counts at all (the stray_tasks check says why).
  if (std::none_of(p.tasks.begin(), p.tasks.end(), [&](const TaskSeen& t) { return t.pid != p.reader_pid; }))
    return;
  for (int cpu : interest) {
    const CpuTasks tasks = tasks_on_cpu(p.tasks, cpu, p.reader_pid, application);
    for (TaskClass task_class : kTaskClasses) {
      out.push_back(gauge("jitterd_posture_cpu_tasks",
                          "Tasks (threads) that last ran on the CPU, by class: jitterd, kernel_percpu, "
                          "application, stray.",
                          {{"cpu", std::to_string(cpu)}, {"class", std::string(to_string(task_class))}},
                          static_cast<double>(tasks.running[static_cast<std::size_t>(task_class)].size())));
    }
    out.push_back(gauge("jitterd_posture_cpu_stray_tasks_allowed",
                        "Stray tasks allowed on the CPU (Cpus_allowed_list) that last ran elsewhere.",
                        {{"cpu", std::to_string(cpu)}}, static_cast<double>(tasks.stray_allowed.size())));
  }
}

// Which device IRQs may fire on the CPUs of interest: the per-CPU count is always there
// (jitterd_posture_cpu_device_irqs); names cost a series each, so only at most `limit` per CPU.
void add_irq_detail(const IrqsByCpu& irqs_on, const std::vector<int>& interest, std::size_t limit,
                    std::vector<ProbeMetric>& out) {
  for (int cpu : interest) {
    std::size_t shown = 0;
    for (const IrqAffinity* irq_pointer : irqs_of(irqs_on, cpu)) {
      const IrqAffinity& irq = *irq_pointer;
      if (irq.name.empty()) continue;
      if (shown++ == limit) break;
      out.push_back(gauge("jitterd_posture_cpu_device_irq_info",
                          "1 for a device IRQ whose affinity includes a sampled or isolated CPU (at most "
                          "probes.posture.irq_detail per CPU, lowest IRQ numbers first).",
                          {{"cpu", std::to_string(cpu)}, {"irq", std::to_string(irq.irq)}, {"name", irq.name}},
                          1));
    }
  }
}

// Expectations judged per CPU get a series for every sampled CPU (0 or 1) whatever the outcome,
// so a series goes to 0 when its expectation is met again instead of vanishing; machine-wide ones
// get one series with cpu="".
void add_checks(const std::vector<PostureCheck>& checks, const std::vector<int>& sampled,
                std::vector<ProbeMetric>& out) {
  static const std::set<std::string> per_cpu = {"isolated", "nohz_full", "device_irqs",
                                                "smt",      "governor",  "cstates"};
  std::map<std::string, std::map<std::string, double>> unmet;  // check -> cpu label -> 0 or 1
  std::map<std::string, double> warnings;
  for (const PostureCheck& c : checks) {
    if (!c.expectation) {
      warnings[c.check] += c.status == CheckStatus::warn;
      continue;
    }
    double& value = unmet[c.check][c.cpu ? std::to_string(*c.cpu) : ""];
    value = std::max(value, c.status != CheckStatus::pass ? 1.0 : 0.0);
  }
  for (auto& [check, series] : unmet) {
    if (per_cpu.count(check) != 0) {
      if (series.count("") != 0 && series[""] == 0) series.erase("");  // the "all met" line: the CPUs say it
      for (int cpu : sampled) series.emplace(std::to_string(cpu), 0.0);
    }
    for (const auto& [cpu, value] : series) {
      out.push_back(
          gauge("jitterd_expectation_unmet",
                "1 for each unmet expectation of the expect: configuration (check, and cpu where per CPU), 0 "
                "for a met one.",
                {{"check", check}, {"cpu", cpu}}, value));
    }
  }
  for (const auto& [check, count] : warnings) {
    out.push_back(gauge("jitterd_posture_warnings",
                        "WARN lines of the posture checklist's rules of thumb, per check.", {{"check", check}},
                        count));
  }
}

}  // namespace

std::vector<ProbeMetric> posture_metrics(const Posture& posture, const std::vector<int>& sampled,
                                         const std::vector<PostureCheck>& checks, std::size_t irq_detail,
                                         const std::optional<IrqFiring>& fired,
                                         const std::vector<std::string>& application_tasks) {
  std::vector<ProbeMetric> out;
  const std::vector<int> interest = either(sampled, all_isolated_cpus(posture));
  const IrqsByCpu irqs_on = irqs_by_cpu(posture);
  add_cpu_flags(posture, irqs_on, out);
  add_isolation_metrics(posture, out);
  add_cpu_power(posture, interest, out);
  add_machine(posture, out);
  add_irq_counts(irqs_on, interest, fired, out);
  add_task_counts(posture, interest, application_tasks, out);
  add_irq_detail(irqs_on, interest, irq_detail, out);
  add_checks(checks, sampled, out);
  return out;
}

namespace {
// The lines of `now` not in `before`; both sorted.
std::string lines_not_in(const std::vector<std::string>& now, const std::vector<std::string>& before) {
  std::vector<std::string> added;
  std::set_difference(now.begin(), now.end(), before.begin(), before.end(), std::back_inserter(added));
  return joined_with(added, "; ");
}

// The fingerprint's series: its fields as the _info's labels, its changes and since when it holds.
std::vector<ProbeMetric> fingerprint_metrics(const Fingerprint& fingerprint, std::uint64_t changes, double since) {
  ProbeLabels fields;
  for (auto& [field, value] : fingerprint_fields(fingerprint)) fields.emplace_back(field, value);
  std::vector<ProbeMetric> metrics;
  metrics.push_back(gauge("jitterd_fingerprint_info",
                          "1, labelled with the kernel release and command line, microcode revision, BIOS vendor, "
                          "version and date, CPU model, and whether the CPU says it runs under a hypervisor.",
                          fields, 1));
  metrics.push_back(counter("jitterd_fingerprint_changes_total", "Fingerprint changes seen since jitterd started.",
                            {}, static_cast<double>(changes)));
  metrics.push_back(gauge("jitterd_fingerprint_since_timestamp_seconds",
                          "When the current fingerprint was first seen: start-up, or its last change (Unix time).",
                          {}, since));
  return metrics;
}

// The isolation checklist as a table: a row per check, its fix one line per step.
ProbeTable checklist_table(const std::vector<int>& sampled, const std::vector<PostureCheck>& checks) {
  ProbeTable table{"isolation checklist for sampled cpus " + format_cpu_list(sampled),
                   {"status", "check", "cpu", "reason", "fix"},
                   {}};
  for (const PostureCheck& c : checks) {
    table.rows.push_back(
        {to_string(c.status), c.check, c.cpu ? Cell(*c.cpu) : Cell(), c.reason, joined_with(c.fix, "\n")});
  }
  return table;
}
}  // namespace

ProbeResult PostureProbe::run(ProbeContext& context) {
  // /proc/interrupts once, for both the IRQs' names and which of them fired since the last run.
  const auto read_at = std::chrono::steady_clock::now();
  const std::optional<std::string> interrupts_text = context.host.read_proc("interrupts");
  std::optional<InterruptTable> interrupts;
  if (interrupts_text) interrupts = parse_proc_interrupts(*interrupts_text);
  Posture posture = read_posture(context.host, interrupts);
  if (fingerprint_) posture.fingerprint = keep_unread_fields(*fingerprint_, std::move(posture.fingerprint));
  std::vector<int> sampled = context.sampled;
  std::sort(sampled.begin(), sampled.end());
  // Busy shares since the previous run (none on the first): the smt check judges siblings by them.
  std::map<int, CpuTimes> times = parse_proc_stat(context.host.read_proc("stat").value_or(""));
  const std::map<int, double> busy = busy_shares(cpu_times_, times);
  cpu_times_ = std::move(times);
  // Device IRQs that fired since the previous run (none measured on the first).
  std::optional<IrqFiring> fired;
  if (interrupts_ && interrupts && !interrupts->cpus.empty()) {
    fired = IrqFiring{numbered_irq_deltas(*interrupts_, *interrupts),
                      std::chrono::duration<double>(read_at - interrupts_read_at_).count()};
  }
  interrupts_ = std::move(interrupts);
  interrupts_read_at_ = read_at;
  const std::vector<PostureCheck> checks = check_posture(posture, sampled, settings_.expect, busy, fired);
  ProbeResult result;
  result.metrics =
      posture_metrics(posture, sampled, checks, settings_.irq_detail, fired, settings_.expect.application_tasks);

  const double now = unix_seconds();
  if (!fingerprint_) {
    fingerprint_since_ = now;
  } else if (*fingerprint_ != posture.fingerprint) {
    result.warnings.push_back("the machine's fingerprint changed: " +
                              joined_with(fingerprint_changes(*fingerprint_, posture.fingerprint), "; "));
    ++fingerprint_changes_;
    fingerprint_since_ = now;
  }
  fingerprint_ = posture.fingerprint;
  result.machine =
      MachineReading{machine_facts(context.host, posture, sampled), fingerprint_since_, fingerprint_changes_};
  for (ProbeMetric& m : fingerprint_metrics(posture.fingerprint, fingerprint_changes_, fingerprint_since_))
    result.metrics.push_back(std::move(m));
  result.tables.push_back(checklist_table(sampled, checks));
  result.tables.push_back(isolation_table(posture));
  result.notes = isolation_notes(posture);
  result.notes.insert(result.notes.end(), posture.problems.begin(), posture.problems.end());
  // Files that vanish or come back mid-run are logged when it happens, not at every run.
  std::vector<std::string> problems = posture.problems;
  std::sort(problems.begin(), problems.end());
  if (const std::string lost = lines_not_in(problems, problems_); !lost.empty())
    result.warnings.push_back("posture files unreadable: " + lost);
  if (const std::string back = lines_not_in(problems_, problems); !back.empty())
    result.warnings.push_back("posture files readable again (were: " + back + ")");
  problems_ = std::move(problems);
  return result;
}

}  // namespace jitterd
