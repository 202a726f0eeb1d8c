// SPDX-License-Identifier: Apache-2.0
// Posture probe: re-reads the isolation posture and the machine's fingerprint every interval,
// exports them (per CPU where the value is per CPU), judges them with posture_checks.h, and
// notices a changed fingerprint (kernel, command line, microcode, BIOS, CPU model): it counts the
// change, stamps it and logs one line naming exactly what changed. Used by one thread at a time
// (the probe scheduler's); keeps the fingerprint it saw last between runs.
#pragma once

#include <map>
#include <optional>

#include "host/interrupt_counts.h"
#include "host/posture.h"
#include "probes/posture_checks.h"
#include "probes/probe.h"

namespace jitterd {

// The probe's settings: `probes.posture` in the configuration, and its top-level `expect:`.
struct PostureSettings {
  bool enabled = true;
  std::chrono::nanoseconds interval{std::chrono::minutes(1)};
  PostureExpectations expect;
  // 0: IRQs are counted per CPU only. N: also one jitterd_posture_cpu_device_irq_info series
  // (with the IRQ's number and name) for each of at most N device IRQs, lowest numbers first, per
  // sampled or isolated CPU. The configuration allows 0..64.
  std::size_t irq_detail = 0;
  bool operator==(const PostureSettings&) const = default;
};

// The metrics for one reading (fingerprint change tracking aside): the per-CPU series cover every
// online CPU for cheap yes/no facts and the count of device IRQs that may fire there, and the
// sampled and isolated CPUs for frequency, C-states, siblings and (with irq_detail) which IRQs.
// With `fired` (the device IRQs that fired since the previous reading), the sampled and isolated
// CPUs also get how many device IRQs fired there; where tasks are visible, how many last ran there
// by class (host/task_classes.h, `application_tasks` naming the application's).
std::vector<ProbeMetric> posture_metrics(const Posture& posture, const std::vector<int>& sampled,
                                         const std::vector<PostureCheck>& checks, std::size_t irq_detail = 0,
                                         const std::optional<IrqFiring>& fired = std::nullopt,
                                         const std::vector<std::string>& application_tasks = {});

class PostureProbe : public SettingsProbe<PostureSettings> {
 public:
  using SettingsProbe::SettingsProbe;
  std::string_view name() const override { return "posture"; }
  ProbeResult run(ProbeContext& context) override;

 private:
  std::optional<Fingerprint> fingerprint_;  // as last seen
  double fingerprint_since_ = 0;            // unix time it was first seen
  std::uint64_t fingerprint_changes_ = 0;
  std::vector<std::string> problems_;  // unreadable files at the previous run, as logged
  std::map<int, CpuTimes> cpu_times_;  // /proc/stat at the previous run, for busy shares
  // /proc/interrupts at the previous run and when it was read (steady clock), for IRQ firing.
  std::optional<InterruptTable> interrupts_;
  std::chrono::steady_clock::time_point interrupts_read_at_;
};

}  // namespace jitterd
