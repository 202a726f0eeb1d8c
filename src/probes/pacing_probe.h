// SPDX-License-Identifier: Apache-2.0
// Pacing probe: how accurately can this machine send at a target rate? Two pacers (a counter
// busy-wait and a clock_gettime busy-wait) schedule sends on absolute slots at each configured
// rate for a fixed duration, on one CPU (by default the first housekeeping CPU; a sampled CPU's
// sampler is paused for it). A send is a UDP datagram to a loopback socket the probe owns, or
// nothing. Reports achieved/target, per-send lateness and the unthrottled maximum rate.
#pragma once

#include <optional>
#include <vector>

#include "measure/pacer.h"
#include "probes/probe.h"

namespace jitterd {

enum class PacingSend { udp, noop };

// The probe's settings, as the `probes.pacing` section of the configuration sets them.
struct PacingSettings {
  bool enabled = true;
  std::chrono::nanoseconds interval{std::chrono::minutes(15)};
  std::optional<int> cpu;  // nullopt: the first housekeeping CPU
  std::vector<double> rates{1000, 10000, 100000};
  std::chrono::nanoseconds duration{std::chrono::milliseconds(500)};
  PacingSend send = PacingSend::udp;
  bool operator==(const PacingSettings&) const = default;
};

class PacingProbe : public SettingsProbe<PacingSettings> {
 public:
  using SettingsProbe::SettingsProbe;
  std::string_view name() const override { return "pacing"; }
  ProbeResult run(ProbeContext& context) override;
};

// Upper bounds (seconds) of the exported lateness histogram.
const std::vector<double>& pacing_lateness_bounds();

// One pacer at one rate, its times in `units_per_second` (counter ticks or nanoseconds).
struct PacingRun {
  std::string method;  // "counter" or "clock_gettime"
  double rate;
  PacingResult result;
  double units_per_second;
};

// The metrics of one probe run: per run achieved/target, lateness and its maximum; per pacer the
// unthrottled rate.
std::vector<ProbeMetric> pacing_metrics(const std::vector<PacingRun>& runs, double unthrottled_counter,
                                        double unthrottled_clock);

}  // namespace jitterd
