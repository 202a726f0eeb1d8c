// SPDX-License-Identifier: Apache-2.0
#include "sampling/sampling_plan.h"

#include <stdexcept>

#include "config/config_source.h"
#include "host/cpu_list.h"
#include "host/isolation_sources.h"
#include "host/topology.h"
#include "sampling/sampler_worker.h"

namespace jitterd {

namespace {
TickMethod choose_method(const Config& config) {
  if (!config.sampler.tick_source) return default_tick_method();
  const TickMethod method = *config.sampler.tick_source;
  if (!tick_method_supported(method)) {
    std::string allowed;
    for (auto m : supported_tick_methods()) allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(m));
    const SourceMark mark = config.mark_of("sampler.tick_source");
    throw ConfigErrors({{config.path, mark.line, mark.column, "sampler.tick_source",
                         "\"" + std::string(to_string(method)) +
                             "\" is not available on this architecture (allowed here: " + allowed + ")"}});
  }
  return method;
}
// Every enabled probe's plan check (probes/probe_facts.h), now rather than as a probe failure
// minutes later. On a sampled CPU every step of a probe pauses that CPU's sampler, so the step must
// stay well inside kMaxSamplerBorrow (half of it).
void check_against_machine(const SamplingPlan& plan, const HostReader& host, const Topology& topology,
                           const std::vector<int>& allowed) {
  const std::vector<int> usable = cpus_intersection(topology.online, allowed);
  const PlanFacts facts{host, plan.selection.sampled, usable,
                        std::chrono::duration_cast<Duration>(kMaxSamplerBorrow) / 2,
                        [](std::chrono::nanoseconds d) { return format_duration(d); }};
  std::vector<ConfigError> errors;
  for (const SettingProblem& p : plan_problems(plan.config.probes, facts)) {
    const bool at_key = p.fallback_key.empty() || plan.config.marks.count(p.key) > 0;
    const SourceMark mark = plan.config.mark_of(at_key ? p.key : p.fallback_key);
    errors.push_back({plan.config.path, mark.line, mark.column, p.key, p.message});
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
  plan.msr_pmu = read_msr_pmu(host);
  const IsolationSources runtime = read_isolation_sources(host);
  for (std::string& line : isolation_problems(runtime)) plan.machine_problems.push_back(std::move(line));
  CpuRequest request;
  request.runtime_isolated = runtime_isolated_cpus(runtime);
  request.automatic = plan.config.cpus.automatic;
  request.list = plan.config.cpus.list;
  request.all_threads_per_core = plan.config.cpus.all_threads_per_core;
  const WatchSettings& watch = plan.config.probes.watch;
  if (watch.enabled) {
    request.watch = watch.cpus_automatic ? CpuRequest::Watch::automatic : CpuRequest::Watch::listed;
    request.watch_list = watch.cpus;
  }
  CpuSelectionResult result = select_cpus(request, topology, allowed);
  if (!result.selection) {
    std::vector<ConfigError> errors;
    for (const auto& [key, messages] :
         {std::pair<std::string, const std::vector<std::string>*>{"cpus", &result.errors},
          {"watch.cpus", &result.watch_errors}}) {
      const SourceMark mark = plan.config.mark_of(key);
      const auto flag = plan.config.flags.find(key);
      for (const std::string& e : *messages) {
        if (flag != plan.config.flags.end())
          errors.push_back({kCommandLineSource, 0, 0, flag->second, e});
        else
          errors.push_back({plan.config.path, mark.line, mark.column, key, e});
      }
    }
    throw ConfigErrors(std::move(errors));
  }
  plan.selection = std::move(*result.selection);
  check_against_machine(plan, host, topology, allowed);
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
