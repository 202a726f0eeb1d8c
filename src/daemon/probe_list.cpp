#include "daemon/probe_list.h"

#include "probes/clock_probe.h"
#include "probes/kernel_cost_probe.h"
#include "probes/pacing_probe.h"
#include "probes/pinning_probe.h"

namespace jitterd {

const std::vector<std::string_view>& probe_names() {
  static const std::vector<std::string_view> names = {"clock", "kernel_cost", "pinning", "pacing"};
  return names;
}

std::unique_ptr<Probe> make_probe(std::string_view name, const ProbesConfig& c) {
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
  return nullptr;
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

std::vector<std::unique_ptr<Probe>> make_enabled_probes(const ProbesConfig& c) {
  const bool enabled[] = {c.clock.enabled, c.kernel_cost.enabled, c.pinning.enabled, c.pacing.enabled};
  std::vector<std::unique_ptr<Probe>> probes;
  for (std::size_t i = 0; i < probe_names().size(); ++i) {
    if (enabled[i]) probes.push_back(make_probe(probe_names()[i], c));
  }
  return probes;
}

}  // namespace jitterd
