// SPDX-License-Identifier: Apache-2.0
#include "probes/watch_window.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "host/cpu_list.h"
#include "host/text.h"
#include "measure/gap_counts.h"

namespace jitterd {
namespace {

std::string ns_text(double ns) { return std::to_string(std::llround(ns)) + " ns"; }

std::uint64_t longest_of(const PairedCpuFigures& cpu) {
  std::uint64_t longest = 0;
  for (const SourceFigures& f : cpu.sources) longest = std::max(longest, f.max_ns);
  return longest;
}

}  // namespace

std::uint64_t total_of(const std::map<std::string, std::uint64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const auto& entry) { return sum + entry.second; });
}

std::vector<WatchWindow> counts_windows(const WatchReading& now, const std::vector<WatchedCpu>& before,
                                        const std::vector<double>& thresholds_ns) {
  std::vector<WatchWindow> out;
  for (const WatchedCpu& c : now.cpus) {
    WatchWindow w;
    w.cpu = c.cpu;
    w.over_threshold.assign(thresholds_ns.size(), std::nullopt);
    w.tail_unknown = "the counts method measures no lengths";
    const WatchedCpu* then = entry_of_cpu(before, c.cpu);
    if (then != nullptr && c.online && now.window_seconds > 0) {
      w.seconds = now.window_seconds;
      w.interruptions = counter_rise(total_of(c.interrupts), total_of(then->interrupts)) +
                        counter_rise(total_of(c.softirqs), total_of(then->softirqs));
      w.preemptions = counter_rise(c.preemptions, then->preemptions);
      w.stolen_seconds = static_cast<double>(counter_rise(c.wait_ns, then->wait_ns)) * 1e-9;
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::vector<WatchWindow> paired_windows(const PairedReading& now, const PairedReading& before, double seconds,
                                        double outlier_threshold_ns, const std::vector<double>& thresholds_ns) {
  std::vector<WatchWindow> out;
  for (const PairedCpuFigures& c : now.cpus) {
    WatchWindow w;
    w.cpu = c.cpu;
    w.over_threshold.assign(thresholds_ns.size(), std::nullopt);
    const PairedCpuFigures* then = entry_of_cpu(before.cpus, c.cpu);
    if (then == nullptr || seconds <= 0) {
      w.tail_unknown = "no window";
      out.push_back(std::move(w));
      continue;
    }
    w.seconds = seconds;
    std::uint64_t ns = 0;
    for (std::size_t s = 0; s < c.sources.size(); ++s) {
      const SourceFigures was = s < then->sources.size() ? then->sources[s] : SourceFigures{};
      const std::uint64_t count = counter_rise(c.sources[s].count, was.count);
      (watch_source_task_class(s).empty() ? w.interruptions : w.preemptions) += count;
      ns += counter_rise(c.sources[s].ns, was.ns);
    }
    w.stolen_seconds = static_cast<double>(ns) * 1e-9;
    std::vector<std::uint64_t> lengths;
    for (const PairedOutlier& o : now.outliers)
      if (o.cpu == c.cpu) lengths.push_back(o.duration_ns);
    const std::uint64_t lost = counter_rise(c.outliers_lost, then->outliers_lost);
    const std::uint64_t longest_now = longest_of(c);
    std::optional<double> longest;
    if (!lengths.empty()) longest = static_cast<double>(*std::max_element(lengths.begin(), lengths.end()));
    if (longest_now > longest_of(*then))  // a new all-time longest: it happened in this window
      longest = std::max(longest.value_or(0), static_cast<double>(longest_now));
    w.longest_ns = longest;
    std::vector<std::string> why;
    if (lost > 0) why.push_back(std::to_string(lost) + " outliers lost (the ring was full)");
    if (now.outliers_dropped > 0)
      why.push_back(std::to_string(now.outliers_dropped) + " outliers drained beyond " +
                    std::to_string(kMaxOutliersPerReading) + " in one reading, not kept");
    for (std::size_t t = 0; t < thresholds_ns.size(); ++t) {
      if (outlier_threshold_ns > thresholds_ns[t]) {
        why.push_back("watch.outlier_threshold (" + ns_text(outlier_threshold_ns) + ") is above the " +
                      ns_text(thresholds_ns[t]) + " tail threshold");
        continue;
      }
      if (lost > 0 || now.outliers_dropped > 0) continue;
      w.over_threshold[t] =
          static_cast<std::uint64_t>(std::count_if(lengths.begin(), lengths.end(), [&](std::uint64_t n) {
            return static_cast<double>(n) >= thresholds_ns[t];
          }));
    }
    w.tail_unknown = joined_with(why, "; ");
    out.push_back(std::move(w));
  }
  return out;
}

StolenNs paired_stolen_by_cause(const PairedCpuFigures& now, const PairedCpuFigures& before) {
  StolenNs out{};
  for (std::size_t s = 0; s < now.sources.size(); ++s) {
    const std::uint64_t was = s < before.sources.size() ? before.sources[s].ns : 0;
    const std::optional<std::size_t> cause = stolen_cause_index(watch_source_cause(s));
    if (cause) out[*cause] += counter_rise(now.sources[s].ns, was);
  }
  return out;
}

StolenNs counts_stolen_by_cause(const WatchedCpu& now, const WatchedCpu& before) {
  StolenNs out{};
  out[*stolen_cause_index("preempted")] = counter_rise(now.wait_ns, before.wait_ns);
  return out;
}

}  // namespace jitterd
