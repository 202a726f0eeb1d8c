// The isolation checklist: a Posture (host/posture.h) judged for the CPUs jitterd samples, line
// by line PASS, WARN or FAIL with the reason. Two kinds of line: the expectations the operator
// wrote (`expect:`; unmet is FAIL and is exported as jitterd_expectation_unmet{check,cpu}), and
// the rules of thumb every isolation guide gives (sampled CPUs isolated, tickless, without RCU
// callbacks, device IRQs or busy SMT siblings, performance governor, shallow C-states, a stable
// clocksource, no THP compaction, quiet vmstat and NMI watchdog; unmet is WARN). A file the
// kernel does not offer is a WARN saying what could not be checked. Pure functions on plain
// values: `jitterd report posture` and the posture probe call them from any one thread.
#pragma once

#include <chrono>
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
};

// A sibling busy at most this share of the time measured counts as idle.
inline constexpr double kIdleSiblingShare = 0.01;

// Above this exit latency an enabled C-state earns a WARN when no expectation is set.
inline constexpr std::chrono::microseconds kDeepCstateWarning{10};

// Every line of the checklist in a stable order: check by check (isolated, nohz_full, rcu_nocbs,
// device_irqs, smt, governor, cstates, workqueue, clocksource, thp, nmi_watchdog,
// stat_interval), each with its per-CPU lines by CPU or one machine-wide line. `sampled` (sorted)
// are the CPUs judged per CPU. `busy`: each CPU's busy share over a recent interval (from
// busy_shares in host/posture.h), where measured; the smt check judges siblings by it.
std::vector<PostureCheck> check_posture(const Posture& posture, const std::vector<int>& sampled,
                                        const PostureExpectations& expect, const std::map<int, double>& busy = {});

// The worst status present (pass for an empty list).
CheckStatus overall_status(const std::vector<PostureCheck>& checks);

}  // namespace jitterd
