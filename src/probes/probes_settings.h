// SPDX-License-Identifier: Apache-2.0
// The probes' settings, one member per probe, each of the probe's own type: what the
// configuration's `probes:` section fills (config/probe_sections.h) and the registry builds probes
// from. Pure data; safe from any thread.
#pragma once

#include "probes/attribution_probe.h"
#include "probes/c2c_probe.h"
#include "probes/clock_probe.h"
#include "probes/kernel_cost_probe.h"
#include "probes/loops_probe.h"
#include "probes/pacing_probe.h"
#include "probes/pinning_probe.h"
#include "probes/posture_probe.h"
#include "probes/watch_probe.h"

namespace jitterd {

struct ProbesSettings {
  ClockSettings clock;
  PacingSettings pacing;
  KernelCostSettings kernel_cost;
  PinningSettings pinning;
  C2cSettings c2c;
  PostureSettings posture;
  AttributionSettings attribution;
  WatchSettings watch;  // the top-level watch: and application: sections
  LoopSettings loops;   // the top-level loops: section
  bool operator==(const ProbesSettings&) const = default;
};

}  // namespace jitterd
