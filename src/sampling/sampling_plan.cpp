#include "sampling/sampling_plan.h"

#include <stdexcept>

#include "daemon/probe_list.h"
#include "host/cpu_list.h"
#include "host/topology.h"

namespace jitterd {

namespace {
TickMethod choose_method(const Config& config) {
  if (!config.sampler.tick_source) return default_tick_method();
  const TickMethod method = *config.sampler.tick_source;
  if (!tick_method_supported(method)) {
    std::string allowed;
    for (auto m : supported_tick_methods()) allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(m));
    throw ConfigErrors({{config.path, 0, 0, "sampler.tick_source",
                         "\"" + std::string(to_string(method)) + "\" is not available on this architecture (allowed here: " +
                             allowed + ")"}});
  }
  return method;
}
// An explicit c2c pair list is checked against this machine now, so a pair outside the probe's
// scope is a configuration error naming the entry, not a probe failure minutes later.
void check_c2c_pairs(const SamplingPlan& plan, const HostReader& host) {
  const C2cProbeConfig& c2c = plan.config.probes.c2c;
  if (!c2c.enabled || c2c.pairs != PairSelection::list) return;
  const PairPlan pairs = plan_c2c_pairs(c2c_settings(c2c), host, plan.selection.sampled, nullptr);
  std::vector<ConfigError> errors;
  for (const std::string& e : pairs.errors) {
    errors.push_back({plan.config.path, c2c.pairs_mark.line, c2c.pairs_mark.column, "probes.c2c.pairs",
                      e + (!c2c.allow_unsampled && e.find("not among the CPUs the probe may use") != std::string::npos
                               ? "; set allow_unsampled to pair CPUs that are not sampled"
                               : "")});
  }
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
}
}  // namespace

SamplingPlan make_sampling_plan(Config config, const HostReader& host, const std::vector<int>& allowed) {
  SamplingPlan plan;
  plan.config = std::move(config);
  plan.method = choose_method(plan.config);
  const Topology topology = read_topology(host);
  plan.machine_problems = topology.problems;
  CpuRequest request{plan.config.cpus.automatic, plan.config.cpus.list};
  CpuSelectionResult result = select_cpus(request, topology, allowed);
  if (!result.selection) {
    std::vector<ConfigError> errors;
    for (const auto& e : result.errors) {
      errors.push_back({plan.config.path, plan.config.cpus.mark.line, plan.config.cpus.mark.column, "cpus", e});
    }
    throw ConfigErrors(std::move(errors));
  }
  plan.selection = std::move(*result.selection);
  check_c2c_pairs(plan, host);
  return plan;
}

std::vector<SamplerSettings> sampler_settings(const SamplingPlan& plan, const TickScale& scale) {
  const SamplerConfig& c = plan.config.sampler;
  std::vector<SamplerSettings> out;
  for (int cpu : plan.selection.sampled) {
    SamplerSettings s;
    s.cpu = cpu;
    s.method = plan.method;
    s.scale = scale;
    s.threshold = c.interruption_threshold;
    s.floor_multiple = c.threshold_floor_multiple;
    s.continuous = c.duty_cycle == DutyCycleMode::continuous;
    s.spin = c.burst_spin;
    s.period = c.burst_period;
    s.warmup = c.warmup;
    s.window = c.window;
    s.lock_memory = c.lock_memory;
    s.realtime_priority = c.realtime_priority;
    s.ring_capacity = c.interruption_ring;
    out.push_back(s);
  }
  return out;
}

}  // namespace jitterd
