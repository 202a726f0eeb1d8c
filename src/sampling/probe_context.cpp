// SPDX-License-Identifier: Apache-2.0
#include "sampling/probe_context.h"

#include "host/affinity.h"

namespace jitterd {

ProbeContext make_probe_context(const SamplingPlan& plan, const HostReader& host,
                                const CounterFrequency& frequency) {
  ProbeContext context;
  context.host = host;
  context.method = plan.method;
  context.frequency = frequency;
  context.sampled = plan.selection.sampled;
  context.watched = plan.selection.watched;
  context.housekeeping = plan.selection.housekeeping;
  context.run_on_cpu = run_on_pinned_thread;
  return context;
}

ProbeContext make_probe_context(const SamplingPlan& plan, const HostReader& host,
                                const CounterFrequency& frequency, std::shared_ptr<SamplerSet> samplers) {
  ProbeContext context = make_probe_context(plan, host, frequency);
  context.run_on_cpu = [samplers](int cpu, const std::function<void()>& work) {
    for (std::size_t i = 0; i < samplers->size(); ++i) {
      SamplerWorker& worker = samplers->worker(i);
      if (worker.settings().cpu == cpu && worker.sampling()) {
        worker.run_paused(work).get();
        return;
      }
    }
    run_on_pinned_thread(cpu, work);
  };
  context.sampler_of = [samplers](int cpu) -> const SamplerShared* {
    for (std::size_t i = 0; i < samplers->size(); ++i) {
      const SamplerWorker& worker = samplers->worker(i);
      if (worker.settings().cpu == cpu && worker.sampling()) return worker.shared();
    }
    return nullptr;
  };
  return context;
}

}  // namespace jitterd
