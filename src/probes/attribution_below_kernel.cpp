// SPDX-License-Identifier: Apache-2.0
// The attribution probe's part below the kernel (probes/attribution_probe.h): each sampled CPU's
// SMIs, steal time and APERF/MPERF into its window, the window's unexplained gaps given to smi and hypervisor
// (host/attribution.h split_below_kernel), their export and the one line that says what is counted.
#include <algorithm>
#include <tuple>

#include "host/attribution.h"
#include "host/cpu_list.h"
#include "host/msr_pmu.h"
#include "probes/attribution_probe.h"  // the class whose members these are
#include "probes/below_kernel.h"

namespace jitterd {

void AttributionProbe::keep_below_kernel(CpuTotals& totals, const CpuWindow& before, const CpuWindow& now) {
  std::tie(totals.smis, totals.steal_ticks, totals.cycles) = std::tie(now.smis, now.steal_ticks, now.cycles);
  totals.frequency = before.cycles && now.cycles ? frequency_ratio(*before.cycles, *now.cycles) : std::nullopt;
}

std::pair<std::uint64_t, bool> AttributionProbe::below_kernel_window(const CpuWindow& before,
                                                                     const CpuWindow& now) {
  // Only an SMI that came while the sampler spun can have made one of its gaps (a burst sampler
  // sleeps through most of the window): the in-span count, not the CPU's.
  const std::uint64_t smis = before.smis && now.smis && now.smis_in_spans >= before.smis_in_spans
                                 ? now.smis_in_spans - before.smis_in_spans
                                 : 0;
  return {smis, before.steal_ticks && now.steal_ticks && *now.steal_ticks > *before.steal_ticks};
}

void AttributionProbe::settle_unexplained(CpuTotals& totals, const CpuWindow& before, const CpuWindow& now,
                                          std::map<std::string, std::uint64_t>& by_cause) {
  const auto [smis, steal] = below_kernel_window(before, now);
  const BelowKernel split = split_below_kernel(unexplained_ns_, smis, steal);
  const std::pair<std::string_view, std::pair<std::uint64_t, std::uint64_t>> parts[] = {
      {smi_cause, {split.smi, split.smi_ns}},
      {hypervisor_cause, {split.hypervisor, split.hypervisor_ns}},
      {unexplained_cause, {split.unexplained, split.unexplained_ns}}};
  for (const auto& [cause, part] : parts) {
    const std::string name(cause);
    by_cause[name] += part.first;
    totals.stolen_seconds[name] += static_cast<double>(part.second) * 1e-9;
  }
}

void AttributionProbe::note_below_kernel(const ProbeContext& context, ProbeResult& result) const {
  const MsrPmu& pmu = context.msr_pmu;
  std::string line = msr_pmu_line(pmu);
  // One reason for all CPUs where they share it (a unit without CAP_PERFMON refuses every one).
  std::map<std::string, std::vector<int>> refused, refused_frequency;
  std::map<int, double> ratios;
  for (const auto& [cpu, totals] : totals_) {
    const SamplerCounterErrors errors =
        context.sampler_counter_errors_of ? context.sampler_counter_errors_of(cpu) : SamplerCounterErrors{};
    if (pmu.smi && !totals.smis) refused[errors.smi.empty() ? "not read yet" : errors.smi].push_back(cpu);
    if (pmu.has_frequency() && !totals.cycles)
      refused_frequency[errors.frequency.empty() ? "not read yet" : errors.frequency].push_back(cpu);
    if (totals.frequency) ratios[cpu] = *totals.frequency;
  }
  for (const auto& [why, cpus] : refused)
    line += "; SMIs not counted on cpus " + format_cpu_list(cpus) + ": " + why;
  for (const auto& [why, cpus] : refused_frequency)
    line += "; APERF/MPERF not counted on cpus " + format_cpu_list(cpus) + ": " + why;
  const bool steal =
      std::any_of(totals_.begin(), totals_.end(), [](const auto& t) { return t.second.steal_ticks.has_value(); });
  line += steal ? "; steal time from /proc/stat in 1/" + std::to_string(static_cast<int>(user_hz_)) + " s ticks"
                : "; no steal time in /proc/stat (a kernel without steal accounting)";
  result.notes.push_back(line);
  result.states["below_kernel"] = {line, false};
  add_frequency_table(ratios, result);
}

}  // namespace jitterd
