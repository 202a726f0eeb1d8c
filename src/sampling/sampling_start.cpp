// SPDX-License-Identifier: Apache-2.0
#include "sampling/sampling_start.h"

#include "host/affinity.h"
#include "host/msr_pmu.h"

namespace jitterd {

CounterFrequency housekeeping_counter_frequency(const SamplingPlan& plan, std::chrono::nanoseconds window) {
  restrict_current_thread(plan.selection.housekeeping);
  return counter_frequency(plan.method, window);
}

std::shared_ptr<SamplerSet> start_samplers(const SamplingPlan& plan, const CounterFrequency& frequency,
                                           const HostReader& host) {
  restrict_current_thread(plan.selection.housekeeping);
  std::vector<SamplerSettings> settings = sampler_settings(plan, TickScale(frequency.hertz));
  // Each sampler counts its CPU's SMIs and APERF/MPERF where the msr PMU has the events (absence:
  // the attribution probe's note says why, once), for the attribution probe, their one reader:
  // without it a sampler would leave its span and read the counters for nothing.
  if (plan.config.probes.attribution.enabled) {
    for (SamplerSettings& s : settings) {
      s.smi_event = plan.msr_pmu.smi;
      if (plan.msr_pmu.has_frequency())
        std::tie(s.aperf_event, s.mperf_event) = std::tie(plan.msr_pmu.aperf, plan.msr_pmu.mperf);
    }
  }
  auto samplers = std::make_shared<SamplerSet>(settings, host);
  samplers->start();
  return samplers;
}

}  // namespace jitterd
