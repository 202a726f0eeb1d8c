// SPDX-License-Identifier: Apache-2.0
// Clock probe: is the counter still what the samplers think it is? Calibrates it two ways
// (busy pause loop and across a sleep, both against CLOCK_MONOTONIC_RAW), reads what the
// architecture and kernel claim (cntfrq_el0, CPUID 0x15/0x16, cpuinfo MHz, tsc_known_freq), and
// reports every estimate with its disagreement from the frequency in use, the counter's drift
// against CLOCK_MONOTONIC_RAW since the previous run, the clocksource (a move off tsc is the
// classic regression after an upgrade) and nanosleep overshoot. Runs on the scheduler thread.
#pragma once

#include <optional>
#include <vector>

#include "host/clock_info.h"
#include "measure/counter_calibration.h"
#include "measure/sleep_overshoot.h"
#include "probes/probe.h"

namespace jitterd {

// The probe's settings, as the `probes.clock` section of the configuration sets them (ranges there).
struct ClockSettings {
  bool enabled = true;
  std::chrono::nanoseconds interval{std::chrono::minutes(5)};
  std::chrono::nanoseconds calibration_window{std::chrono::milliseconds(200)};
  std::vector<std::chrono::nanoseconds> sleep_requests{std::chrono::microseconds(1), std::chrono::microseconds(10),
                                                       std::chrono::microseconds(100),
                                                       std::chrono::milliseconds(1)};
  std::size_t sleep_samples = 50;
  bool operator==(const ClockSettings&) const = default;
};

// What one run found, as its metrics are made from it.
struct ClockReading {
  double in_use_hertz = 0;                                // the frequency the samplers convert with
  std::vector<std::pair<std::string, double>> estimates;  // method, hertz
  std::optional<bool> tsc_known_freq;
  std::optional<double> drift_ratio;  // from the second run on
  std::optional<ClocksourceInfo> clocksource;
  std::vector<SleepOvershoot> sleep_overshoots;
};
std::vector<ProbeMetric> clock_metrics(const ClockReading& reading);

class ClockProbe : public SettingsProbe<ClockSettings> {
 public:
  using SettingsProbe::SettingsProbe;
  std::string_view name() const override { return "clock"; }
  ProbeResult run(ProbeContext& context) override;

 private:
  void add_estimates(ProbeContext& context, ProbeResult& result, ClockReading& reading);
  void add_drift(ProbeContext& context, ProbeResult& result, ClockReading& reading);
  void add_clocksource(ProbeContext& context, ProbeResult& result, ClockReading& reading);
  void add_sleep_overshoot(ProbeContext& context, ProbeResult& result, ClockReading& reading);

  std::optional<ClockTickPair> previous_pair_;  // from the previous run, for drift
};

}  // namespace jitterd
