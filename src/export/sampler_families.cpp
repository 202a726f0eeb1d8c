// SPDX-License-Identifier: Apache-2.0
#include "export/sampler_families.h"

#include <chrono>
#include <limits>

#include "export/metric_families.h"

namespace jitterd {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The per-CPU families, in the order /metrics shows them, each filled by add() one reading at a time.
struct SamplerFamilies {
  MetricFamily histogram =
      family("jitterd_sampler_gap_seconds", "Gaps between consecutive counter reads of the sampler loop.",
             MetricType::Histogram);
  MetricFamily interruptions = family("jitterd_sampler_interruptions_total",
                                      "Gaps at or above the interruption threshold.", MetricType::Counter);
  MetricFamily stolen =
      family("jitterd_sampler_stolen_seconds_total",
             "Total duration of the gaps at or above the interruption threshold.", MetricType::Counter);
  MetricFamily sampled = family("jitterd_sampler_sampled_seconds_total",
                                "Time spent sampling (sum of all gaps; excludes burst pauses and probe pauses).",
                                MetricType::Counter);
  MetricFamily quantiles = family("jitterd_sampler_window_gap_seconds",
                                  "Gap quantiles over the rolling window (upper edge of the histogram bucket, at "
                                  "most the window max); sum and count are cumulative.",
                                  MetricType::Summary);
  MetricFamily window_max = family("jitterd_sampler_window_max_gap_seconds",
                                   "Exact largest gap over the rolling window.", MetricType::Gauge);
  MetricFamily floor =
      family("jitterd_sampler_loop_floor_seconds",
             "Smallest gap seen in the warm-up window: the resolution floor of the loop.", MetricType::Gauge);
  MetricFamily threshold = family("jitterd_sampler_interruption_threshold_seconds",
                                  "Gap at or above which a gap counts as an interruption.", MetricType::Gauge);
  MetricFamily duty =
      family("jitterd_sampler_duty_cycle_ratio",
             "Share of wall time the sampler is configured to spin (1 = continuous).", MetricType::Gauge);
  MetricFamily pinned =
      family("jitterd_sampler_pinned",
             "1 while the sampler thread is pinned to and running on its CPU; 0 if it could not pin at start or "
             "has lost its CPU (offline, or its affinity changed) and waits to pin back.",
             MetricType::Gauge);
  MetricFamily cpu_losses = family("jitterd_sampler_cpu_losses_total",
                                   "Times the sampler found itself off its CPU (the CPU went offline or its "
                                   "affinity was changed) and stopped sampling until it could pin back.",
                                   MetricType::Counter);
  MetricFamily locked =
      family("jitterd_sampler_memory_locked", "1 if the sampler's memory is locked in RAM.", MetricType::Gauge);
  MetricFamily realtime =
      family("jitterd_sampler_realtime_priority",
             "SCHED_FIFO priority of the sampler thread, 0 for normal scheduling.", MetricType::Gauge);
  MetricFamily switches = family("jitterd_sampler_context_switches_total",
                                 "Context switches of the sampler thread, by kind.", MetricType::Counter);
  MetricFamily up =
      family("jitterd_sampler_up", "1 while the sampler thread runs and makes progress.", MetricType::Gauge);

  void add(const SamplerReading& r) {
    const auto& bounds = gap_histogram_bounds();
    const SamplerSettings& s = r.settings;
    const std::string cpu = cpu_label(s.cpu);
    sample(duty, {{"cpu", cpu}}, s.duty_cycle());
    sample(pinned, {{"cpu", cpu}}, r.startup.pinned && !r.off_cpu ? 1 : 0);
    sample(locked, {{"cpu", cpu}}, r.startup.memory_locked ? 1 : 0);
    sample(realtime, {{"cpu", cpu}}, r.startup.realtime_priority);
    sample(up, {{"cpu", cpu}}, r.up ? 1 : 0);
    if (!r.sampling) return;
    sample(cpu_losses, {{"cpu", cpu}}, static_cast<double>(r.cpu_losses));
    // The whole run's figures (the window's are r.window_detail.summary); /metrics exports seconds.
    CpuFigures run;
    set_counted(run, r.sampled_ticks, r.interruptions, r.interrupted_ticks, s.scale);
    set_limits(run, r.startup.floor_ticks, r.startup.threshold_ticks, s.scale);
    sample(floor, {{"cpu", cpu}}, ns_to_seconds(run.floor_ns));
    sample(threshold, {{"cpu", cpu}}, ns_to_seconds(run.threshold_ns));
    ClientMetric h;
    h.label = {{"cpu", cpu}};
    const auto counts = coarse_cumulative_counts(r.gaps, s.scale, bounds);
    for (std::size_t b = 0; b < bounds.size(); ++b) h.histogram.bucket.push_back({counts[b], bounds[b]});
    h.histogram.sample_count = r.gaps.total();
    h.histogram.bucket.push_back({h.histogram.sample_count, std::numeric_limits<double>::infinity()});
    h.histogram.sample_sum = run.sampled_seconds;
    const std::uint64_t h_count = h.histogram.sample_count;
    const double h_sum = h.histogram.sample_sum;
    histogram.metric.push_back(std::move(h));
    sample(interruptions, {{"cpu", cpu}}, static_cast<double>(run.interruptions));
    sample(stolen, {{"cpu", cpu}}, run.stolen_seconds);
    sample(sampled, {{"cpu", cpu}}, run.sampled_seconds);
    const CpuFigures& summary = r.window_detail.summary;
    ClientMetric q;
    q.label = {{"cpu", cpu}};
    q.summary.sample_count = h_count;
    q.summary.sample_sum = h_sum;
    if (summary.valid) {
      q.summary.quantile = {{0.5, ns_to_seconds(summary.p50_ns)},
                            {0.99, ns_to_seconds(summary.p99_ns)},
                            {0.999, ns_to_seconds(summary.p999_ns)},
                            {0.9999, ns_to_seconds(summary.p9999_ns)}};
      sample(window_max, {{"cpu", cpu}}, ns_to_seconds(summary.max_ns));
    }
    quantiles.metric.push_back(std::move(q));
    if (const auto& cs = r.window_detail.context_switches) {
      sample(switches, {{"cpu", cpu}, {"kind", "voluntary"}}, static_cast<double>(cs->voluntary));
      sample(switches, {{"cpu", cpu}, {"kind", "involuntary"}}, static_cast<double>(cs->involuntary));
    }
  }

  void move_into(std::vector<MetricFamily>& out) {
    for (MetricFamily* f : {&histogram, &interruptions, &stolen, &sampled, &quantiles, &window_max, &floor,
                            &threshold, &duty, &pinned, &cpu_losses, &locked, &realtime, &switches, &up}) {
      out.push_back(std::move(*f));
    }
  }
};

}  // namespace

void add_tick_families(std::vector<MetricFamily>& out, const CounterFrequency& frequency, TickMethod method) {
  add_single(
      out,
      family("jitterd_tick_info", "1, labelled with the counter read method and how its frequency was obtained.",
             MetricType::Gauge),
      {{"method", std::string(to_string(method))}, {"frequency_source", frequency.source}}, 1);
  add_single(
      out,
      family("jitterd_tick_frequency_hertz",
             "Tick counter frequency used to convert ticks to seconds (how it was obtained: jitterd_tick_info).",
             MetricType::Gauge),
      {}, frequency.hertz);
  add_single(out,
             family("jitterd_tick_frequency_uncertainty_ratio",
                    "Bound on the relative error of the counter frequency (0 when the architecture states it).",
                    MetricType::Gauge),
             {}, frequency.uncertainty_ppm * 1e-6);
  add_single(out,
             family("jitterd_tick_resolution_seconds",
                    "Duration of one counter tick: the resolution of every gap.", MetricType::Gauge),
             {}, 1.0 / frequency.hertz);
}

void add_sampler_families(std::vector<MetricFamily>& out, const std::vector<SamplerReading>& readings) {
  if (!readings.empty()) {
    add_single(
        out,
        family("jitterd_sampler_window_seconds",
               "Configured length of the rolling window behind the window quantiles and max.", MetricType::Gauge),
        {}, std::chrono::duration<double>(readings.front().settings.window).count());
  }
  SamplerFamilies families;
  for (const SamplerReading& r : readings) families.add(r);
  families.move_into(out);
}

}  // namespace jitterd
