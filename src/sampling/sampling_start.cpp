// SPDX-License-Identifier: Apache-2.0
#include "sampling/sampling_start.h"

#include "host/affinity.h"

namespace jitterd {

CounterFrequency housekeeping_counter_frequency(const SamplingPlan& plan, std::chrono::nanoseconds window) {
  restrict_current_thread(plan.selection.housekeeping);
  return counter_frequency(plan.method, window);
}

std::shared_ptr<SamplerSet> start_samplers(const SamplingPlan& plan, const CounterFrequency& frequency,
                                           const HostReader& host) {
  restrict_current_thread(plan.selection.housekeeping);
  auto samplers = std::make_shared<SamplerSet>(sampler_settings(plan, TickScale(frequency.hertz)), host);
  samplers->start();
  return samplers;
}

}  // namespace jitterd
