// Every periodic probe, listed once: its name (as in metrics, probe="...", and as the topic of
// `jitterd report <probe>`), its settings inside ProbesSettings, and how to build it. The
// configuration's `probes:` section fills a ProbesSettings with the probes' own settings types.
// There is no self-registration and no second list. Pure; safe from any thread.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "probes/attribution_probe.h"
#include "probes/c2c_probe.h"
#include "probes/clock_probe.h"
#include "probes/kernel_cost_probe.h"
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
  bool operator==(const ProbesSettings&) const = default;
};

// The probe names in the order the scheduler first runs them (cheap, machine-wide ones first).
const std::vector<std::string_view>& probe_names();

// Those a baseline may run (`jitterd baseline --probes`): the probes that measure once and give
// figures to compare; not posture or attribution, which judge the machine over time.
const std::vector<std::string_view>& baseline_probe_names();

// One probe by name, enabled or not (for `jitterd report`); nullptr for an unknown name.
std::unique_ptr<Probe> make_probe(std::string_view name, const ProbesSettings& settings);

// The enabled probes, in probe_names() order.
std::vector<std::unique_ptr<Probe>> make_enabled_probes(const ProbesSettings& settings);

}  // namespace jitterd
