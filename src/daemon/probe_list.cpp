#include "daemon/probe_list.h"

#include "probes/attribution_probe.h"
#include "probes/c2c_probe.h"
#include "probes/clock_probe.h"
#include "probes/kernel_cost_probe.h"
#include "probes/pacing_probe.h"
#include "probes/pinning_probe.h"
#include "probes/posture_probe.h"

namespace jitterd {

const std::vector<std::string_view>& probe_names() {
  static const std::vector<std::string_view> names = {"posture", "attribution", "clock", "kernel_cost", "pinning", "pacing", "c2c"};
  return names;
}

std::unique_ptr<Probe> make_probe(std::string_view name, const Config& config) {
  const ProbesConfig& c = config.probes;
  if (name == "clock") {
    return std::make_unique<ClockProbe>(
        ClockSettings{c.clock.interval, c.clock.calibration_window, c.clock.sleep_requests, c.clock.sleep_samples});
  }
  if (name == "kernel_cost") {
    return std::make_unique<KernelCostProbe>(
        KernelCostSettings{c.kernel_cost.interval, c.kernel_cost.cpu.cpu, c.kernel_cost.samples});
  }
  if (name == "pinning") return std::make_unique<PinningProbe>(PinningSettings{c.pinning.interval, c.pinning.window});
  if (name == "pacing") {
    return std::make_unique<PacingProbe>(PacingSettings{c.pacing.interval, c.pacing.cpu.cpu, c.pacing.rates, c.pacing.duration,
                                                        c.pacing.action == PacingAction::udp ? PacingSend::udp : PacingSend::noop});
  }
  if (name == "posture") {
    return std::make_unique<PostureProbe>(PostureSettings{c.posture.interval, config.expect, c.posture.irq_detail});
  }
  if (name == "attribution") {
    return std::make_unique<AttributionProbe>(
        AttributionSettings{c.attribution.interval, c.attribution.tracepoints, c.attribution.source_detail});
  }
  if (name == "c2c") return std::make_unique<C2cProbe>(c2c_settings(c.c2c));
  return nullptr;
}

C2cSettings c2c_settings(const C2cProbeConfig& c) {
  C2cSettings s;
  s.interval = c.interval;
  s.method = c.method;
  s.samples = c.samples;
  s.round_trips = c.round_trips;
  s.pairs.selection = c.pairs;
  s.pairs.list = c.pair_list;
  s.budget = c.budget;
  s.allow_unsampled = c.allow_unsampled;
  return s;
}

ProbeContext make_probe_context(const SamplingPlan& plan, const HostReader& host, const CounterFrequency& frequency) {
  ProbeContext context;
  context.host = host;
  context.method = plan.method;
  context.frequency = frequency;
  context.sampled = plan.selection.sampled;
  context.housekeeping = plan.selection.housekeeping;
  context.run_on_cpu = run_on_pinned_thread;
  return context;
}

std::vector<std::unique_ptr<Probe>> make_enabled_probes(const Config& config) {
  const ProbesConfig& c = config.probes;
  const bool enabled[] = {c.posture.enabled, c.attribution.enabled, c.clock.enabled, c.kernel_cost.enabled, c.pinning.enabled, c.pacing.enabled, c.c2c.enabled};
  std::vector<std::unique_ptr<Probe>> probes;
  for (std::size_t i = 0; i < probe_names().size(); ++i) {
    if (enabled[i]) probes.push_back(make_probe(probe_names()[i], config));
  }
  return probes;
}

}  // namespace jitterd
