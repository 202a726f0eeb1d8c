// Kernel-cost probe: median and p99 cost of a counter read, clock_gettime per clock id, a bare
// syscall, thread create+join and fork+wait, in ticks and seconds (the cpu-tests table, kept
// current). Runs pinned on one CPU: by default the first housekeeping CPU.
#pragma once

#include <optional>

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

}  // namespace jitterd
