// SPDX-License-Identifier: Apache-2.0
#include "export/sampler_families.h"

#include <chrono>

#include "export/metric_families.h"
#include "probes/gap_metrics.h"

namespace jitterd {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The per-CPU families, in the order /metrics shows them, each filled by add() one reading at a time:
// first the gap families a loop has too (probes/gap_metrics.h), then the sampler's own.
struct SamplerFamilies {
  std::vector<MetricFamily> gaps = [] {
    std::vector<MetricFamily> out;
    for (const GapFamilyText& t : sampler_gap_families())
      out.push_back(family(t.name, t.help, to_metric_type(t.type)));
    return out;
  }();
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
    const SamplerSettings& s = r.settings;
    const std::string cpu = std::to_string(s.cpu);
    sample(duty, {{"cpu", cpu}}, s.duty_cycle());
    sample(pinned, {{"cpu", cpu}}, r.startup.pinned && !r.off_cpu ? 1 : 0);
    sample(locked, {{"cpu", cpu}}, r.startup.memory_locked ? 1 : 0);
    sample(realtime, {{"cpu", cpu}}, r.startup.realtime_priority);
    sample(up, {{"cpu", cpu}}, r.up ? 1 : 0);
    if (!r.sampling) return;
    sample(cpu_losses, {{"cpu", cpu}}, static_cast<double>(r.cpu_losses));
    // The whole run's counters and the window's figures (r.window_detail.summary).
    const GapReading reading{r.counts, s.scale, &r.window_detail.summary,
                             GapReading::Limits{r.startup.floor_ticks, r.startup.threshold_ticks}};
    for (const GapMetric& g : gap_samples(reading)) {
      ClientMetric& c = gaps[static_cast<std::size_t>(g.family)].metric.emplace_back(to_client_metric(g.metric));
      c.label = {{"cpu", cpu}};
    }
    if (const auto& cs = r.window_detail.context_switches) {
      sample(switches, {{"cpu", cpu}, {"kind", "voluntary"}}, static_cast<double>(cs->voluntary));
      sample(switches, {{"cpu", cpu}, {"kind", "involuntary"}}, static_cast<double>(cs->involuntary));
    }
  }

  void move_into(std::vector<MetricFamily>& out) {
    for (MetricFamily& f : gaps) out.push_back(std::move(f));
    for (MetricFamily* f : {&duty, &pinned, &cpu_losses, &locked, &realtime, &switches, &up})
      out.push_back(std::move(*f));
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
