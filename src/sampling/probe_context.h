// SPDX-License-Identifier: Apache-2.0
// The context probes run in under a sampling plan: the machine, the counter, the sampled and
// housekeeping CPUs, and how to reach a CPU. Outside the daemon (`jitterd report`) every CPU is
// reached through a temporary pinned thread; in the daemon a sampled CPU is reached through its
// sampler, paused while the work runs, so a probe never competes with a sampler for its CPU.
// Build from the main thread; the context is then used by the probe scheduler's one thread.
#pragma once

#include <memory>

#include "measure/counter_calibration.h"
#include "probes/probe.h"
#include "sampling/sampler_set.h"
#include "sampling/sampling_plan.h"

namespace jitterd {

ProbeContext make_probe_context(const SamplingPlan& plan, const HostReader& host,
                                const CounterFrequency& frequency);

// As above, but a CPU with a running sampler in `samplers` is borrowed from it (run_on_cpu) and
// its counters are visible to probes (sampler_of).
ProbeContext make_probe_context(const SamplingPlan& plan, const HostReader& host,
                                const CounterFrequency& frequency, std::shared_ptr<SamplerSet> samplers);

}  // namespace jitterd
