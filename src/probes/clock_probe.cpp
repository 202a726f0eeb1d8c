#include "probes/clock_probe.h"

#include "host/clock_info.h"
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

ProbeResult ClockProbe::run(ProbeContext& context) {
  ProbeResult result;
  add_estimates(context, result);
  add_drift(context, result);
  add_clocksource(context, result);
  add_sleep_overshoot(context, result);
  return result;
}

void ClockProbe::add_estimates(ProbeContext& context, ProbeResult& result) {
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
      result.metrics.push_back(
          gauge("jitterd_clock_tsc_known_freq",
                "1 if the kernel knows the TSC frequency from hardware (cpuinfo flag tsc_known_freq), else 0.", {},
                has_flag(*cpuinfo, "tsc_known_freq") ? 1 : 0));
    }
  }
  for (auto& p : problems) result.notes.push_back(std::move(p));

  ProbeTable table{"counter frequency estimates (in use: " + format_number(in_use, 0) + " Hz, " +
                       context.frequency.source + ")",
                   {"method", "hertz", "disagreement_ppm"},
                   {}};
  for (const auto& [method, hz] : estimates) {
    const double disagreement = hz / in_use - 1;
    result.metrics.push_back(gauge("jitterd_clock_frequency_hertz",
                                   "Counter frequency estimated or declared by each method.", {{"method", method}},
                                   hz));
    result.metrics.push_back(gauge("jitterd_clock_frequency_disagreement_ratio",
                                   "Estimate divided by the frequency in use, minus 1.", {{"method", method}},
                                   disagreement));
    table.rows.push_back({method, format_number(hz, 0), format_number(disagreement * 1e6, 2)});
  }
  result.tables.push_back(std::move(table));
}

void ClockProbe::add_drift(ProbeContext& context, ProbeResult& result) {
  const ClockTickPair now = pair_clock_with_ticks(context.method);
  if (previous_pair_) {
    const double drift = counter_drift(*previous_pair_, now, context.frequency.hertz);
    result.metrics.push_back(
        gauge("jitterd_clock_drift_ratio",
              "Counter time over CLOCK_MONOTONIC_RAW time since the previous clock probe, minus 1.", {}, drift));
    result.tables.push_back(
        {"counter drift against CLOCK_MONOTONIC_RAW since the previous run",
         {"elapsed_s", "drift_ppm"},
         {{format_number(static_cast<double>(now.clock_ns - previous_pair_->clock_ns) / 1e9, 1),
           format_number(drift * 1e6, 3)}}});
  } else {
    result.notes.push_back("drift needs two runs: it appears from the second clock probe on");
  }
  previous_pair_ = now;
}

void ClockProbe::add_clocksource(ProbeContext& context, ProbeResult& result) {
  std::vector<std::string> problems;
  const auto clocksource = read_clocksource(context.host, &problems);
  for (auto& p : problems) result.notes.push_back(std::move(p));
  if (!clocksource) return;
  result.metrics.push_back(gauge("jitterd_clocksource_current", "The kernel's current clocksource; value 1.",
                                 {{"clocksource", clocksource->current}}, 1));
  std::string available;
  for (const auto& name : clocksource->available) {
    result.metrics.push_back(gauge("jitterd_clocksource_available", "A clocksource the kernel offers; value 1.",
                                   {{"clocksource", name}}, 1));
    available += (available.empty() ? "" : " ") + name;
  }
  result.tables.push_back({"clocksource", {"current", "available"}, {{clocksource->current, available}}});
}

void ClockProbe::add_sleep_overshoot(ProbeContext& context, ProbeResult& result) {
  ProbeTable table{"nanosleep overshoot (actual - requested)",
                   {"requested_us", "samples", "median_us", "p99_us", "max_us"},
                   {}};
  for (const auto requested : settings_.sleep_requests) {
    context.check_cancelled();
    const SleepOvershoot o = measure_sleep_overshoot(requested, settings_.sleep_samples);
    const std::string label = seconds_label(requested);
    for (const auto& [stat, ns] : {std::pair{"median", o.median_ns}, {"p99", o.p99_ns}, {"max", o.max_ns}}) {
      result.metrics.push_back(
          gauge("jitterd_clock_sleep_overshoot_seconds",
                "How much longer than requested a relative clock_nanosleep slept, by statistic.",
                {{"requested_seconds", label}, {"stat", stat}}, static_cast<double>(ns) * 1e-9));
    }
    table.rows.push_back({format_number(std::chrono::duration<double, std::micro>(requested).count(), 0),
                          std::to_string(o.samples), format_number(static_cast<double>(o.median_ns) / 1e3, 1),
                          format_number(static_cast<double>(o.p99_ns) / 1e3, 1),
                          format_number(static_cast<double>(o.max_ns) / 1e3, 1)});
  }
  result.tables.push_back(std::move(table));
}

}  // namespace jitterd
