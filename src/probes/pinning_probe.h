// SPDX-License-Identifier: Apache-2.0
// Pinning probe: the sampler's gap loop for a short window pinned to one housekeeping CPU, then
// unpinned (allowed on every housekeeping CPU), with percentiles and migrations side by side:
// what pinning buys on this machine right now.
#pragma once

#include "measure/migration_loop.h"
#include "probes/probe.h"

namespace jitterd {

// The probe's settings, as the `probes.pinning` section of the configuration sets them.
struct PinningSettings {
  bool enabled = true;
  std::chrono::nanoseconds interval{std::chrono::minutes(15)};
  std::chrono::nanoseconds window{std::chrono::milliseconds(500)};
  bool operator==(const PinningSettings&) const = default;
};

class PinningProbe : public SettingsProbe<PinningSettings> {
 public:
  using SettingsProbe::SettingsProbe;
  std::string_view name() const override { return "pinning"; }
  ProbeResult run(ProbeContext& context) override;
};

// The metrics of one run: per mode, the gap quantiles as a summary and the migrations seen.
std::vector<ProbeMetric> pinning_metrics(const MigrationLoopResult& pinned, const MigrationLoopResult& unpinned,
                                         const TickScale& scale);

}  // namespace jitterd
