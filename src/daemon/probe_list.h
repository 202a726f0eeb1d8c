// Every periodic probe, listed in one place (no self-registration), built from the `probes:`
// section of the configuration (and `expect:`, for posture). Call from the main thread.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "sampling/sampling_plan.h"
#include "probes/c2c_probe.h"
#include "probes/probe.h"

namespace jitterd {

// The probe names, as used in metrics (probe="...") and by `jitterd report <topic>`.
const std::vector<std::string_view>& probe_names();

// The enabled probes, in the order the scheduler first runs them.
std::vector<std::unique_ptr<Probe>> make_enabled_probes(const Config& config);

// One probe by name, enabled or not (for `jitterd report`); nullptr for an unknown name.
std::unique_ptr<Probe> make_probe(std::string_view name, const Config& config);

// The c2c probe's settings from its config section (report c2c adjusts them before use).
C2cSettings c2c_settings(const C2cProbeConfig& config);

// The context probes run in under `plan`; it reaches every CPU through a temporary pinned thread
// (the daemon replaces run_on_cpu to borrow its samplers).
ProbeContext make_probe_context(const SamplingPlan& plan, const HostReader& host, const CounterFrequency& frequency);

}  // namespace jitterd
