// SPDX-License-Identifier: Apache-2.0
// The isolation checklist: a Posture (host/posture.h) judged for the CPUs jitterd samples, line
// by line PASS, WARN or FAIL with the reason. Two kinds of line: the expectations the operator
// wrote (`expect:`; unmet is FAIL and is exported as jitterd_expectation_unmet{check,cpu}), and
// the rules of thumb every isolation guide gives (sampled CPUs isolated, tickless, without RCU
// callbacks, device IRQs or busy SMT siblings, performance governor, shallow C-states, a stable
// clocksource, no THP compaction, quiet vmstat and NMI watchdog; unmet is WARN). A cgroup v2
// cpuset partition the kernel marks invalid is a FAIL judged like an expectation without an
// `expect:` line: the operator asked the kernel for that partition. A file the
// kernel does not offer is a WARN saying what could not be checked. Pure functions on plain
// values: `jitterd report posture` and the posture probe call them from any one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/posture.h"

namespace jitterd {

// What the posture should be (the `expect:` configuration section); unset means unchecked.
struct PostureExpectations {
  std::optional<std::vector<int>> isolated;                  // the effective isolated set, exactly
  std::optional<std::vector<int>> nohz_full;                 // the effective nohz_full set, exactly
  std::optional<std::string> governor;                       // of every sampled CPU
  std::optional<std::string> clocksource;                    // the current one
  bool no_device_irqs = false;                               // on sampled CPUs
  std::optional<std::chrono::nanoseconds> max_exit_latency;  // of enabled C-states, sampled CPUs
  // Every other thread of a sampled CPU's core offline, or idle: at most kIdleSiblingShare busy
  // where its busy share was measured, else isolated.
  bool smt_siblings_idle = false;
  // `no_device_irqs: fired`: judge only the IRQs seen firing on a sampled CPU over the posture
  // interval, not those whose affinity merely allows it (no_device_irqs is true as well).
  bool device_irqs_fired_only = false;
  // IRQs whose name matches one of these fnmatch(3) patterns ("nvme*") are not judged at all.
  std::vector<std::string> irq_exempt;
  // No stray task (not jitterd's, not a per-CPU kernel thread of that CPU, not the
  // application's) ran on or may run on a sampled CPU.
  bool no_stray_tasks = false;
  // fnmatch(3) patterns of the application's task names ("trader*"): not strays.
  std::vector<std::string> application_tasks;
  bool operator==(const PostureExpectations&) const = default;
};

enum class CheckStatus { pass, warn, fail };
std::string_view to_string(CheckStatus status);  // "PASS", "WARN", "FAIL"

struct PostureCheck {
  std::string check;       // isolated, nohz_full, rcu_nocbs, device_irqs, governor, ...
  std::optional<int> cpu;  // for per-CPU lines
  CheckStatus status = CheckStatus::pass;
  std::string reason;
  bool expectation = false;  // from `expect:`: exported as jitterd_expectation_unmet
  // For WARN and FAIL: the change that would fix it, as precisely as the facts allow. Each line
  // is either a shell command (`sysctl -w vm.stat_interval=10`) or a comment starting with "# "
  // (a kernel parameter to set, a file to edit). jitterd never runs them.
  std::vector<std::string> fix;
};

// Device IRQs that fired over an interval (from two readings of /proc/interrupts): IRQ -> CPU ->
// count, counts > 0 only (numbered_irq_deltas in host/interrupt_counts.h).
struct IrqFiring {
  std::map<int, std::map<int, std::uint64_t>> counts;
  double seconds = 0;  // the interval's length
};

// A sibling busy at most this share of the time measured counts as idle.
inline constexpr double kIdleSiblingShare = 0.01;

// Above this exit latency an enabled C-state earns a WARN when no expectation is set.
inline constexpr std::chrono::microseconds kDeepCstateWarning{10};

// Every line of the checklist in a stable order: check by check (isolated, cpuset_partition,
// partition_isolation, kubelet_cpus, nohz_full, rcu_nocbs, device_irqs, smt, governor, cstates,
// workqueue, clocksource, thp, nmi_watchdog, stat_interval), each with its per-CPU lines by CPU
// or one machine-wide line; the three run-time isolation checks only where there are partitions
// or the kubelet gives exclusive CPUs (posture_partition_checks.cpp). `sampled` (sorted)
// are the CPUs judged per CPU. `busy`: each CPU's busy share over a recent interval (from
// busy_shares in host/posture.h), where measured; the smt check judges siblings by it. `fired`:
// the device IRQs that fired over the same kind of interval, where measured; the device_irqs
// check judges both what may fire (affinity) and what did (these counts).
std::vector<PostureCheck> check_posture(const Posture& posture, const std::vector<int>& sampled,
                                        const PostureExpectations& expect, const std::map<int, double>& busy = {},
                                        const std::optional<IrqFiring>& fired = std::nullopt);

// Whether an IRQ's name matches one of the fnmatch(3) patterns; a shared IRQ ("a, b") matches
// when any of its actions does.
bool irq_name_matches(const std::string& name, const std::vector<std::string>& patterns);

// Findings about jitterd's own sampling plan rather than the machine, one line each: sampled CPUs
// that share a core with another sampled CPU (two spinning samplers compete for one core's
// pipeline, so each one's numbers include the other). Shown by `report posture` as plan notes,
// never as WARN or FAIL: the machine is not at fault.
std::vector<std::string> smt_plan_notes(const Posture& posture, const std::vector<int>& sampled);

// The worst status present (pass for an empty list).
CheckStatus overall_status(const std::vector<PostureCheck>& checks);

}  // namespace jitterd
