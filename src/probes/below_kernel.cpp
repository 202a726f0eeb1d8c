// SPDX-License-Identifier: Apache-2.0
#include "probes/below_kernel.h"

#include <unistd.h>

#include <algorithm>
#include <numeric>

#include "host/attribution.h"
#include "host/cpu_list.h"
#include "host/msr_pmu.h"

namespace jitterd {

std::vector<std::string_view> below_kernel_causes(const std::vector<TimedInterval>& gaps,
                                                  const std::vector<SmiWindow>& windows, bool steal,
                                                  std::uint64_t slack_ns) {
  std::vector<std::string_view> out(gaps.size(), steal ? hypervisor_cause : std::string_view("unexplained"));
  std::vector<std::uint64_t> left(windows.size());
  std::transform(windows.begin(), windows.end(), left.begin(), [](const SmiWindow& w) { return w.smis; });
  std::vector<std::size_t> order(gaps.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const auto length = [&](std::size_t i) { return gaps[i].end_ns - std::min(gaps[i].start_ns, gaps[i].end_ns); };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return length(a) > length(b); });
  for (std::size_t i : order) {
    for (std::size_t w = 0; w < windows.size(); ++w) {
      const bool overlaps = left[w] > 0 && gaps[i].start_ns <= windows[w].to_ns + slack_ns &&
                            windows[w].from_ns <= gaps[i].end_ns + slack_ns;
      if (!overlaps) continue;
      --left[w];
      out[i] = smi_cause;
      break;
    }
  }
  return out;
}

std::map<int, std::uint64_t> read_steal_ticks(const HostReader& host) {
  std::map<int, std::uint64_t> out;
  for (const auto& [cpu, times] : parse_proc_stat(host.read_proc("stat").value_or("")))
    if (times.has_steal) out[cpu] = times.steal;
  return out;
}

void push_below_kernel_series(const std::string& cpu, const BelowKernelCounts& counts, double user_hz,
                              std::vector<ProbeMetric>& metrics) {
  if (counts.smis)
    metrics.push_back(
        counter("jitterd_smi_total",
                "System Management Interrupts a sampled or watched CPU took, read on that CPU from the "
                "msr PMU's smi counter (since jitterd began counting).",
                {{"cpu", cpu}}, static_cast<double>(*counts.smis)));
  if (counts.steal_ticks)
    metrics.push_back(counter("jitterd_cpu_steal_seconds_total",
                              "Time the hypervisor ran something else while this sampled or watched virtual CPU "
                              "wanted to run (/proc/stat steal; resolution 1/USER_HZ).",
                              {{"cpu", cpu}}, static_cast<double>(*counts.steal_ticks) / user_hz));
  if (!counts.cycles) return;
  metrics.push_back(
      counter("jitterd_cpu_actual_cycles_total",
              "Cycles a sampled or watched CPU ran at the frequency it actually ran at (APERF, the msr "
              "PMU's aperf counter, read on that CPU; not counted in idle states): its rate over "
              "jitterd_cpu_reference_cycles_total's is the frequency as a fraction of the base one.",
              {{"cpu", cpu}}, static_cast<double>(counts.cycles->actual)));
  metrics.push_back(
      counter("jitterd_cpu_reference_cycles_total",
              "Cycles a sampled or watched CPU ran, counted at its base frequency (MPERF, the msr PMU's "
              "mperf counter, read on that CPU at the same moment as the actual cycles).",
              {{"cpu", cpu}}, static_cast<double>(counts.cycles->reference)));
}

void add_frequency_table(const std::map<int, double>& ratios, ProbeResult& result) {
  if (ratios.empty()) return;
  ProbeTable table{"frequency over the last window (APERF/MPERF)", {"cpu", "of base frequency"}, {}};
  for (const auto& [cpu, ratio] : ratios) table.rows.push_back({Cell(cpu), Cell(ratio, 2)});
  result.tables.push_back(std::move(table));
}

void add_watched_below_kernel(const ProbeContext& context, const std::vector<int>& watched,
                              const WatchedBelowKernel& read, std::map<int, CycleCounts>& previous,
                              ProbeResult& result) {
  const std::map<int, std::uint64_t> steal = read_steal_ticks(context.host);
  const double user_hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::vector<int> counted, frequency_uncounted;
  std::map<int, double> ratios;
  for (int cpu : watched) {
    // A CPU both sampled and watched is the attribution probe's to export.
    if (std::find(context.sampled.begin(), context.sampled.end(), cpu) != context.sampled.end()) continue;
    BelowKernelCounts counts;
    if (const auto smi = read.smis.find(cpu); smi != read.smis.end() && smi->second.reads > 0) {
      counted.push_back(cpu);
      counts.smis = smi->second.count;
    }
    if (const auto ticks = steal.find(cpu); ticks != steal.end()) counts.steal_ticks = ticks->second;
    if (const auto cycles = read.cycles.find(cpu); cycles == read.cycles.end()) {
      frequency_uncounted.push_back(cpu);
    } else {
      counts.cycles = cycles->second;
      if (const auto before = previous.find(cpu); before != previous.end())
        if (const std::optional<double> ratio = frequency_ratio(before->second, cycles->second))
          ratios[cpu] = *ratio;
      previous[cpu] = cycles->second;
    }
    push_below_kernel_series(std::to_string(cpu), counts, user_hz, result.metrics);
  }
  std::string line = msr_pmu_line(context.msr_pmu);
  line += counted.empty() ? "; SMIs of the watched cpus not counted (" +
                                (read.smi_why_not.empty() ? std::string("no timer interrupt has read them yet")
                                                          : read.smi_why_not) +
                                ")"
                          : "; SMIs of watched cpus " + format_cpu_list(counted) +
                                " read by each cpu in its own timer interrupt";
  if (context.msr_pmu.has_frequency() && !frequency_uncounted.empty())
    line += "; APERF/MPERF not counted on watched cpus " + format_cpu_list(frequency_uncounted) + " (" +
            (read.frequency_why_not.empty() ? std::string("no timer interrupt has read them yet")
                                            : read.frequency_why_not) +
            ")";
  line += steal.empty()
              ? "; no steal time in /proc/stat (a kernel without steal accounting)"
              : "; steal time from /proc/stat in 1/" + std::to_string(static_cast<int>(user_hz)) + " s ticks";
  result.notes.push_back(line);
  result.states["below_kernel"] = {line, false};
  add_frequency_table(ratios, result);
}

}  // namespace jitterd
