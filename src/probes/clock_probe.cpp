// SPDX-License-Identifier: Apache-2.0
#include "probes/clock_probe.h"

#include "host/clock_info.h"
#include "host/text.h"
#include "measure/sleep_overshoot.h"

namespace jitterd {

namespace {
std::string seconds_label(std::chrono::nanoseconds d) {
  // Base units in the label too: "1e-06" for 1 us, like Prometheus' own le labels.
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", std::chrono::duration<double>(d).count());
  return buffer;
}
}  // namespace

std::vector<ProbeMetric> clock_metrics(const ClockReading& reading) {
  std::vector<ProbeMetric> out;
  if (reading.tsc_known_freq) {
    out.push_back(
        gauge("jitterd_clock_tsc_known_freq",
              "1 if the kernel knows the TSC frequency from hardware (cpuinfo flag tsc_known_freq), else 0.", {},
              *reading.tsc_known_freq ? 1 : 0));
  }
  for (const auto& [method, hz] : reading.estimates) {
    out.push_back(gauge("jitterd_clock_frequency_hertz", "Counter frequency estimated or declared by each method.",
                        {{"method", method}}, hz));
    out.push_back(gauge("jitterd_clock_frequency_disagreement_ratio",
                        "Estimate divided by the frequency in use, minus 1.", {{"method", method}},
                        hz / reading.in_use_hertz - 1));
  }
  if (reading.drift_ratio) {
    out.push_back(gauge("jitterd_clock_drift_ratio",
                        "Counter time over CLOCK_MONOTONIC_RAW time since the previous clock probe, minus 1.", {},
                        *reading.drift_ratio));
  }
  if (reading.clocksource) {
    // node_exporter's node_time_clocksource_{current,available}_info, with our prefix.
    out.push_back(gauge("jitterd_clocksource_current_info", "The kernel's current clocksource; value 1.",
                        {{"clocksource", reading.clocksource->current}}, 1));
    for (const auto& name : reading.clocksource->available) {
      out.push_back(gauge("jitterd_clocksource_available_info", "A clocksource the kernel offers; value 1.",
                          {{"clocksource", name}}, 1));
    }
  }
  for (const SleepOvershoot& o : reading.sleep_overshoots) {
    const auto seconds = [](std::int64_t ns) { return static_cast<double>(ns) * 1e-9; };
    out.push_back(summary_metric(
        "jitterd_clock_sleep_overshoot_seconds",
        "How much longer than requested a relative clock_nanosleep slept (quantile 1 is the maximum).",
        {{"requested_seconds", seconds_label(o.requested)}},
        {{0.5, seconds(o.median_ns)}, {0.99, seconds(o.p99_ns)}, {1, seconds(o.max_ns)}}, o.samples,
        seconds(o.sum_ns)));
  }
  return out;
}

ProbeResult ClockProbe::run(ProbeContext& context) {
  ProbeResult result;
  ClockReading reading;
  reading.in_use_hertz = context.frequency.hertz;
  add_estimates(context, result, reading);
  add_drift(context, result, reading);
  add_clocksource(context, result, reading);
  add_sleep_overshoot(context, result, reading);
  result.metrics = clock_metrics(reading);
  return result;
}

void ClockProbe::add_estimates(ProbeContext& context, ProbeResult& result, ClockReading& reading) {
  const double in_use = context.frequency.hertz;
  std::vector<std::pair<std::string, double>> estimates;
  const CounterFrequency busy = calibrate_pause_loop(context.method, settings_.calibration_window);
  estimates.emplace_back("pause_loop", busy.hertz);
  context.check_cancelled();
  const CounterFrequency sleeping = calibrate_against_monotonic_raw(context.method, settings_.calibration_window);
  estimates.emplace_back("nanosleep", sleeping.hertz);
  if (auto hz = architectural_counter_hertz()) estimates.emplace_back("cntfrq_el0", *hz);
  if (auto hz = cpuid_15h_hertz()) estimates.emplace_back("cpuid_15h", *hz);
  if (auto hz = cpuid_16h_base_hertz()) estimates.emplace_back("cpuid_16h_base", *hz);
  std::vector<std::string> problems;
  if (auto cpuinfo = read_cpuinfo_clock(context.host, &problems)) {
    if (!cpuinfo->mhz.empty()) estimates.emplace_back("cpuinfo_mhz", cpuinfo->mhz.front().second * 1e6);
    if (!cpuinfo->flags.empty() && context.method != TickMethod::cntvct) {
      reading.tsc_known_freq = has_flag(*cpuinfo, "tsc_known_freq");
    }
  }
  for (auto& p : problems) result.notes.push_back(std::move(p));

  ProbeTable table{
      "counter frequency estimates (in use: " + decimal_text(in_use, 0) + " Hz, " + context.frequency.source + ")",
      {"method", "hertz", "disagreement_ppm"},
      {}};
  for (const auto& [method, hz] : estimates) {
    const double disagreement = hz / in_use - 1;
    table.rows.push_back({method, Cell(hz, 0), Cell(disagreement * 1e6, 2)});
  }
  result.tables.push_back(std::move(table));
  reading.estimates = std::move(estimates);
}

void ClockProbe::add_drift(ProbeContext& context, ProbeResult& result, ClockReading& reading) {
  const ClockTickPair now = pair_clock_with_ticks(context.method);
  if (previous_pair_) {
    const double drift = counter_drift(*previous_pair_, now, context.frequency.hertz);
    reading.drift_ratio = drift;
    result.tables.push_back(
        {"counter drift against CLOCK_MONOTONIC_RAW since the previous run",
         {"elapsed_s", "drift_ppm"},
         {{Cell(static_cast<double>(now.clock_ns - previous_pair_->clock_ns) / 1e9, 1), Cell(drift * 1e6, 3)}}});
  } else {
    result.notes.push_back("drift needs two runs: it appears from the second clock probe on");
  }
  previous_pair_ = now;
}

void ClockProbe::add_clocksource(ProbeContext& context, ProbeResult& result, ClockReading& reading) {
  std::vector<std::string> problems;
  const auto clocksource = read_clocksource(context.host, &problems);
  for (auto& p : problems) result.notes.push_back(std::move(p));
  if (!clocksource) return;
  reading.clocksource = clocksource;
  result.tables.push_back({"clocksource",
                           {"current", "available"},
                           {{clocksource->current, joined_with(clocksource->available, " ")}}});
}

void ClockProbe::add_sleep_overshoot(ProbeContext& context, ProbeResult& result, ClockReading& reading) {
  ProbeTable table{"nanosleep overshoot (actual - requested)",
                   {"requested_us", "samples", "median_us", "p99_us", "max_us"},
                   {}};
  for (const auto requested : settings_.sleep_requests) {
    context.check_cancelled();
    const SleepOvershoot o = measure_sleep_overshoot(requested, settings_.sleep_samples);
    reading.sleep_overshoots.push_back(o);
    table.rows.push_back({Cell(std::chrono::duration<double, std::micro>(requested).count(), 0), o.samples,
                          Cell(static_cast<double>(o.median_ns) / 1e3, 1),
                          Cell(static_cast<double>(o.p99_ns) / 1e3, 1),
                          Cell(static_cast<double>(o.max_ns) / 1e3, 1)});
  }
  result.tables.push_back(std::move(table));
}

}  // namespace jitterd
