#include "probes/posture_checks.h"

#include <algorithm>
#include <map>

#include "host/cpu_list.h"

namespace jitterd {
namespace {

std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::string us_text(long long us) { return std::to_string(us) + " us"; }

std::string format_share(double share) {
  const int tenths = static_cast<int>(share * 1000 + 0.5);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + "%";
}

class Checklist {
 public:
  explicit Checklist(const std::vector<int>& sampled) : sampled_(sampled) {}
  void add(std::string check, std::optional<int> cpu, CheckStatus status, std::string reason, bool expectation) {
    checks_.push_back({std::move(check), cpu, status, std::move(reason), expectation});
  }
  const std::vector<int>& sampled() const { return sampled_; }
  std::vector<PostureCheck> take() { return std::move(checks_); }

 private:
  const std::vector<int>& sampled_;
  std::vector<PostureCheck> checks_;
};

// isolated and nohz_full: the kernel's effective set against the expected one, or else every
// sampled CPU in it. `what` says what membership buys, for the WARN lines.
void check_cpu_set(Checklist& list, const std::string& check, const std::vector<int>& actual,
                   const std::optional<std::vector<int>>& expected, const std::string& what) {
  if (expected) {
    for (int cpu : minus(*expected, actual)) {
      list.add(check, cpu, CheckStatus::fail,
               "cpu " + std::to_string(cpu) + " is not in the kernel's " + check + " set " +
                   describe_cpu_list(actual) + " (expected " + describe_cpu_list(*expected) + ")",
               true);
    }
    for (int cpu : minus(actual, *expected)) {
      list.add(check, cpu, CheckStatus::fail,
               "cpu " + std::to_string(cpu) + " is in the kernel's " + check + " set " +
                   describe_cpu_list(actual) + " but not expected (" + describe_cpu_list(*expected) + ")",
               true);
    }
    if (actual == *expected)
      list.add(check, std::nullopt, CheckStatus::pass,
               check + " cpus " + describe_cpu_list(actual) + ", as expected", true);
    return;
  }
  const std::vector<int> outside = minus(list.sampled(), actual);
  for (int cpu : outside) {
    list.add(check, cpu, CheckStatus::warn, "cpu " + std::to_string(cpu) + " is sampled but not " + what, false);
  }
  if (outside.empty()) {
    list.add(check, std::nullopt, CheckStatus::pass,
             "sampled cpus " + describe_cpu_list(list.sampled()) + " are all " + check + " (" + check + " set " +
                 describe_cpu_list(actual) + ")",
             false);
  }
}

void check_rcu_nocbs(Checklist& list, const Posture& p) {
  // nohz_full implies rcu_nocbs for its CPUs (Documentation/timers/no_hz.rst).
  const std::optional<std::vector<int>> listed = param_cpus(p.isolation.rcu_nocbs);
  if (p.isolation.rcu_nocbs && !listed) {
    // Kernel forms this reader does not expand ("all", "N", strides): say so, guess nothing.
    list.add("rcu_nocbs", std::nullopt, CheckStatus::warn,
             "cannot check: rcu_nocbs=" + *p.isolation.rcu_nocbs + " is not a plain cpu list", false);
    return;
  }
  std::vector<int> offloaded = listed.value_or(std::vector<int>{});
  offloaded.insert(offloaded.end(), p.nohz_full.begin(), p.nohz_full.end());
  offloaded = sorted_cpus(std::move(offloaded));
  const std::vector<int> outside = minus(list.sampled(), offloaded);
  for (int cpu : outside) {
    list.add("rcu_nocbs", cpu, CheckStatus::warn,
             "RCU callbacks run on cpu " + std::to_string(cpu) + " (not in rcu_nocbs= or nohz_full=)", false);
  }
  if (outside.empty()) {
    list.add("rcu_nocbs", std::nullopt, CheckStatus::pass, "RCU callbacks are offloaded from every sampled cpu",
             false);
  }
}

std::string irq_list(const std::vector<IrqAffinity>& irqs) {
  std::string out;
  const std::size_t shown = std::min<std::size_t>(irqs.size(), 3);
  for (std::size_t i = 0; i < shown; ++i) {
    out += (i ? ", " : "") + std::string("irq ") + std::to_string(irqs[i].irq) + " " + irqs[i].name;
  }
  if (irqs.size() > shown) out += " and " + std::to_string(irqs.size() - shown) + " more";
  return out;
}

void check_device_irqs(Checklist& list, const Posture& p, bool expected) {
  if (p.irqs.empty()) {
    list.add("device_irqs", std::nullopt, expected ? CheckStatus::fail : CheckStatus::warn,
             "cannot check: no IRQ affinities could be read", expected);
    return;
  }
  bool any = false;
  for (int cpu : list.sampled()) {
    std::vector<IrqAffinity> irqs;
    for (IrqAffinity& irq : irqs_on_cpu(p, cpu)) {
      if (!irq.name.empty()) irqs.push_back(std::move(irq));  // no action: nothing to run
    }
    if (irqs.empty()) continue;
    any = true;
    const bool effective = std::all_of(irqs.begin(), irqs.end(), [](const IrqAffinity& i) { return i.effective; });
    list.add("device_irqs", cpu, expected ? CheckStatus::fail : CheckStatus::warn,
             std::to_string(irqs.size()) + " device IRQ(s) may fire on cpu " + std::to_string(cpu) + ": " +
                 irq_list(irqs) +
                 (effective ? " (effective affinity)" : " (requested affinity; the effective one is unknown)"),
             expected);
  }
  if (!any)
    list.add("device_irqs", std::nullopt, CheckStatus::pass, "no device IRQ may fire on a sampled cpu", expected);
}

void check_smt(Checklist& list, const Posture& p, bool expected, const std::map<int, double>& busy) {
  const CheckStatus bad = expected ? CheckStatus::fail : CheckStatus::warn;
  bool all_good = true;
  for (int cpu : list.sampled()) {
    const auto it = p.smt.thread_siblings.find(cpu);
    if (it == p.smt.thread_siblings.end()) {
      all_good = false;
      list.add("smt", cpu, bad, "cannot check cpu " + std::to_string(cpu) + ": its core's siblings are unknown",
               expected);
      continue;
    }
    // One line per sampled CPU, naming every sibling that shares its core with something.
    std::string reasons;
    for (int sibling : it->second) {
      if (sibling == cpu) continue;
      std::string why;
      if (has_cpu(list.sampled(), sibling)) {
        why = "is sampled too: two spinning samplers share one core's pipeline";
      } else if (const auto share = busy.find(sibling); share != busy.end()) {
        // Measured: what ran there is what shares the core, isolated or not.
        if (share->second <= kIdleSiblingShare) continue;
        why = "was busy " + format_share(share->second) + " of the time measured";
      } else if (!has_cpu(p.isolated, sibling)) {
        why = "is not isolated: tasks scheduled there share the core";
      } else {
        continue;
      }
      reasons += (reasons.empty() ? "" : "; ") + std::string("cpu ") + std::to_string(sibling) + ", which " + why;
    }
    if (reasons.empty()) continue;
    all_good = false;
    list.add("smt", cpu, bad, "cpu " + std::to_string(cpu) + " shares a core with " + reasons, expected);
  }
  if (all_good) {
    list.add(
        "smt", std::nullopt, CheckStatus::pass,
        "no sampled cpu shares its core with a busy cpu (smt " + p.smt.control.value_or("state unknown") + ")",
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
    list.add("governor", cpu, expected ? CheckStatus::fail : CheckStatus::warn,
             governor ? "cpu " + std::to_string(cpu) + " runs the " + *governor + " governor, not " + wanted
                      : "cannot check cpu " + std::to_string(cpu) +
                            ": no cpufreq governor (frequency set by firmware or hypervisor)",
             expected.has_value());
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
               expected.has_value());
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
               expected.has_value());
      continue;
    }
    if (!deepest) continue;  // no enabled state at all: the CPU cannot idle deeper than polling
    deepest_seen = std::max(deepest_seen, *deepest->exit_latency_us);
    if (*deepest->exit_latency_us <= limit_us) continue;
    all_good = false;
    list.add("cstates", cpu, bad,
             "cpu " + std::to_string(cpu) + " may enter " + deepest->name + " (exit latency " +
                 us_text(*deepest->exit_latency_us) + ", limit " + us_text(limit_us) + ")",
             expected.has_value());
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
    list.add("workqueue", std::nullopt, CheckStatus::warn, "cannot check: no workqueue cpumask", false);
    return;
  }
  bool any = false;
  for (int cpu : list.sampled()) {
    if (!has_cpu(*p.workqueue_cpus, cpu)) continue;
    any = true;
    list.add("workqueue", cpu, CheckStatus::warn,
             "unbound workqueues may run on cpu " + std::to_string(cpu) + " (workqueue cpumask " +
                 describe_cpu_list(*p.workqueue_cpus) + ")",
             false);
  }
  if (!any)
    list.add("workqueue", std::nullopt, CheckStatus::pass,
             "unbound workqueues stay on cpus " + describe_cpu_list(*p.workqueue_cpus), false);
}

void check_clocksource(Checklist& list, const Posture& p, const std::optional<std::string>& expected) {
  if (!p.clocksource) {
    list.add("clocksource", std::nullopt, expected ? CheckStatus::fail : CheckStatus::warn,
             "cannot check: no current clocksource", expected.has_value());
    return;
  }
  const std::string& current = p.clocksource->current;
  const bool good = expected ? current == *expected : current == "tsc" || current == "arch_sys_counter";
  std::string available;
  for (const std::string& c : p.clocksource->available) available += (available.empty() ? "" : " ") + c;
  list.add("clocksource", std::nullopt,
           good       ? CheckStatus::pass
           : expected ? CheckStatus::fail
                      : CheckStatus::warn,
           "current clocksource " + current +
               (expected ? ", expected " + *expected
                : good   ? ""
                         : ": slower to read than the CPU counter") +
               " (available: " + (available.empty() ? "unknown" : available) + ")",
           expected.has_value());
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
           false);
  const auto& nmi = p.sysctls.nmi_watchdog;
  list.add("nmi_watchdog", std::nullopt, nmi && *nmi == "0" ? CheckStatus::pass : CheckStatus::warn,
           !nmi ? "cannot check: kernel.nmi_watchdog unknown"
           : *nmi == "0"
               ? "kernel.nmi_watchdog 0"
               : "kernel.nmi_watchdog " + *nmi + ": the hard-lockup detector sends every cpu a periodic NMI",
           false);
  const auto stat = p.sysctls.stat_interval ? parse_integer(*p.sysctls.stat_interval) : std::nullopt;
  list.add("stat_interval", std::nullopt, stat && *stat > 1 ? CheckStatus::pass : CheckStatus::warn,
           !stat ? "cannot check: vm.stat_interval unknown"
           : *stat > 1
               ? "vm.stat_interval " + std::to_string(*stat)
               : "vm.stat_interval " + std::to_string(*stat) +
                     ": vmstat refreshes every second on every busy cpu; isolation guides raise it (e.g. 10)",
           false);
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
                                        const PostureExpectations& expect, const std::map<int, double>& busy) {
  Checklist list(sampled);
  check_cpu_set(list, "isolated", posture.isolated, expect.isolated,
                "isolated: the scheduler may place tasks on it");
  check_cpu_set(list, "nohz_full", posture.nohz_full, expect.nohz_full,
                "nohz_full: the scheduler tick interrupts it");
  check_rcu_nocbs(list, posture);
  check_device_irqs(list, posture, expect.no_device_irqs);
  check_smt(list, posture, expect.smt_siblings_idle, busy);
  check_governor(list, posture, expect.governor);
  check_cstates(list, posture, expect.max_exit_latency);
  check_workqueue(list, posture);
  check_clocksource(list, posture, expect.clocksource);
  check_machine_wide(list, posture);
  return list.take();
}

CheckStatus overall_status(const std::vector<PostureCheck>& checks) {
  CheckStatus worst = CheckStatus::pass;
  for (const PostureCheck& c : checks) worst = std::max(worst, c.status);
  return worst;
}

}  // namespace jitterd
