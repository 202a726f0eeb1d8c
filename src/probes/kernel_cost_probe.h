// SPDX-License-Identifier: Apache-2.0
// Kernel-cost probe: min, median and p99 cost of a counter read, clock_gettime per clock id, a
// bare syscall, thread create+join and fork+wait (the cpu-tests table, kept current; exported in
// seconds, shown in ticks too). Runs pinned on one CPU: by default the first housekeeping CPU.
//
// Thread create+join and fork+wait wait for another task to run on that CPU, so where the CPU is
// shared with other runnable tasks their cost is mostly how long the scheduler made them wait, and
// two runs of an unchanged machine differed by 2x and more (two `yes` hogs: fork_wait's median 350,
// 401 and 724 us back to back). Beside each of them the probe measures how much the CPU was shared
// (cpu_shared: the share of a kContentionSpin spin on that CPU spent waiting to run, from the
// thread's schedstat), and compare shows those rows untested above kCpuSharedAtMost
// (probes/probe_registry.cpp).
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

class KernelCostProbe : public SettingsProbe<KernelCostSettings> {
 public:
  using SettingsProbe::SettingsProbe;
  std::string_view name() const override { return "kernel_cost"; }
  ProbeResult run(ProbeContext& context) override;
};

inline constexpr std::chrono::milliseconds kContentionSpin{20};
inline constexpr double kCpuSharedAtMost = 0.10;

// The share of a `spin` of the calling thread, busy on its CPU, that it spent runnable but waiting
// for the CPU (<procfs>/thread-self/schedstat through `host`): about 0 on a CPU of its own, about
// 1/2 beside one busy task of the same weight. nullopt where the file cannot be read.
std::optional<double> cpu_shared(const HostReader& host, std::chrono::nanoseconds spin);

// The metrics of one run: a summary in seconds per operation (quantile 0 is the minimum).
std::vector<ProbeMetric> kernel_cost_metrics(const std::vector<OpCost>& costs, const TickScale& scale);

}  // namespace jitterd
