// SPDX-License-Identifier: Apache-2.0
#include "sampling/probe_context.h"

#include <unistd.h>

#include "host/affinity.h"
#include "host/msr_pmu.h"

namespace jitterd {
namespace {

// What the context's probes want of the one BPF engine, from the configuration: the watch where
// its method may be bpf, the attribution probe where bpf is allowed and samplers run (it has
// nothing to attribute without them).
SharedBpfWatch::Wants bpf_wants(const SamplingPlan& plan, bool samplers) {
  const ProbesSettings& probes = plan.config.probes;
  SharedBpfWatch::Wants wants;
  const WatchSettings& watch = probes.watch;
  if (watch.enabled && (watch.method == WatchMethod::automatic || watch.method == WatchMethod::bpf))
    wants.watched = plan.selection.watched;
  wants.outlier_threshold_ns = static_cast<std::uint64_t>(watch.outlier_threshold.count());
  if (samplers && probes.attribution.enabled && probes.attribution.bpf) wants.sampled = plan.selection.sampled;
  wants.jitterd_tgid = static_cast<int>(getpid());
  if (!wants.watched.empty()) wants.msr_pmu = plan.msr_pmu;
  return wants;
}

// The worker sampling `cpu` now, or null.
SamplerWorker* sampling_worker(SamplerSet& samplers, int cpu) {
  for (std::size_t i = 0; i < samplers.size(); ++i) {
    SamplerWorker& worker = samplers.worker(i);
    if (worker.settings().cpu == cpu && worker.sampling()) return &worker;
  }
  return nullptr;
}

}  // namespace

ProbeContext make_probe_context(const SamplingPlan& plan, const HostReader& host,
                                const CounterFrequency& frequency) {
  ProbeContext context;
  context.host = host;
  context.method = plan.method;
  context.frequency = frequency;
  context.sampled = plan.selection.sampled;
  context.watched = plan.selection.watched;
  context.housekeeping = plan.selection.housekeeping;
  context.msr_pmu = plan.msr_pmu;
  context.run_on_cpu = run_on_pinned_thread;
  context.bpf = std::make_shared<SharedBpfWatch>(bpf_wants(plan, false));
  context.watch_engine = std::make_shared<WatchEngineSlot>();
  return context;
}

ProbeContext make_probe_context(const SamplingPlan& plan, const HostReader& host,
                                const CounterFrequency& frequency, std::shared_ptr<SamplerSet> samplers) {
  ProbeContext context = make_probe_context(plan, host, frequency);
  context.bpf = std::make_shared<SharedBpfWatch>(bpf_wants(plan, true));
  context.run_on_cpu = [samplers](int cpu, const std::function<void()>& work) {
    if (SamplerWorker* worker = sampling_worker(*samplers, cpu))
      worker->run_paused(work).get();
    else
      run_on_pinned_thread(cpu, work);
  };
  context.sampler_of = [samplers](int cpu) -> const SamplerShared* {
    const SamplerWorker* worker = sampling_worker(*samplers, cpu);
    return worker ? worker->shared() : nullptr;
  };
  context.sampler_counter_errors_of = [samplers](int cpu) -> SamplerCounterErrors {
    const SamplerWorker* worker = sampling_worker(*samplers, cpu);
    if (!worker) return {};
    return {worker->startup().smi_error, worker->startup().frequency_error};
  };
  const double hertz = frequency.hertz;
  context.sampler_thread_of = [samplers, hertz](int cpu) -> std::optional<SamplerThread> {
    const SamplerWorker* worker = sampling_worker(*samplers, cpu);
    if (!worker) return std::nullopt;
    const SamplerStartup& startup = worker->startup();
    return SamplerThread{
        startup.tid,
        hertz > 0 ? static_cast<std::uint64_t>(static_cast<double>(startup.threshold_ticks) * 1e9 / hertz) : 0};
  };
  return context;
}

}  // namespace jitterd
