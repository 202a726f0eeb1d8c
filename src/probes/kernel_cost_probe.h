// SPDX-License-Identifier: Apache-2.0
// Kernel-cost probe: min, median and p99 cost of a counter read, clock_gettime per clock id, a
// bare syscall, thread create+join and fork+wait (the cpu-tests table, kept current; exported in
// seconds, shown in ticks too). Runs pinned on one CPU: by default the first housekeeping CPU.
#pragma once

#include <optional>

#include "measure/op_cost.h"
#include "probes/probe.h"

namespace jitterd {

// The probe's settings, as the `probes.kernel_cost` section of the configuration sets them.
struct KernelCostSettings {
  bool enabled = true;
  std::chrono::nanoseconds interval{std::chrono::minutes(15)};
  std::optional<int> cpu;  // nullopt: the first housekeeping CPU
  std::size_t samples = 1000;
  bool operator==(const KernelCostSettings&) const = default;
};

class KernelCostProbe : public Probe {
 public:
  explicit KernelCostProbe(KernelCostSettings settings) : settings_(settings) {}
  std::string_view name() const override { return "kernel_cost"; }
  std::chrono::nanoseconds interval() const override { return settings_.interval; }
  ProbeResult run(ProbeContext& context) override;

 private:
  KernelCostSettings settings_;
};

// The metrics of one run: a summary in seconds per operation (quantile 0 is the minimum).
std::vector<ProbeMetric> kernel_cost_metrics(const std::vector<OpCost>& costs, const TickScale& scale);

}  // namespace jitterd
