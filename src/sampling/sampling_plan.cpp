#include "sampling/sampling_plan.h"

#include <stdexcept>

#include "host/cpu_list.h"
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
// An explicit c2c pair list is checked against this machine now, so a pair outside the probe's
// scope is a configuration error naming the entry, not a probe failure minutes later.
void check_c2c_pairs(const SamplingPlan& plan, const HostReader& host, std::vector<ConfigError>& errors) {
  const C2cSettings& c2c = plan.config.probes.c2c;
  if (!c2c.enabled || c2c.pairs.selection != PairSelection::list) return;
  const PairPlan pairs = plan_c2c_pairs(c2c, host, plan.selection.sampled, nullptr);
  const SourceMark mark = plan.config.mark_of("probes.c2c.pairs");
  for (const PairListError& e : pairs.errors) {
    const bool hint = !c2c.allow_unsampled && e.kind == PairListError::Kind::outside_scope;
    errors.push_back({plan.config.path, mark.line, mark.column, "probes.c2c.pairs",
                      e.text + (hint ? "; set allow_unsampled to pair CPUs that are not sampled" : "")});
  }
}

// A probe CPU given by number must be one jitterd may run on, so a typo is a configuration error
// now rather than a probe failure minutes later. On a sampled CPU every step of the probe pauses
// that CPU's sampler, so the step must stay well inside kMaxSamplerBorrow (half of it).
void check_probe_cpu(const SamplingPlan& plan, const std::string& probe, std::optional<int> cpu,
                     const std::vector<int>& usable, std::vector<ConfigError>& errors) {
  if (!cpu) return;
  const std::string key = "probes." + probe + ".cpu";
  const SourceMark mark = plan.config.mark_of(key);
  if (!has_cpu(usable, *cpu)) {
    errors.push_back({plan.config.path, mark.line, mark.column, key,
                      "cpu " + std::to_string(*cpu) + " is not one jitterd may run on (online and allowed: " +
                          describe_cpu_list(usable) + ")"});
    return;
  }
  if (!has_cpu(plan.selection.sampled, *cpu)) return;
  const auto step_limit = std::chrono::duration_cast<Duration>(kMaxSamplerBorrow) / 2;
  const ProbesSettings& probes = plan.config.probes;
  if (probe == "pacing" && probes.pacing.duration > step_limit) {
    const std::string where = plan.config.marks.count("probes.pacing.duration") ? "probes.pacing.duration" : key;
    const SourceMark at = plan.config.mark_of(where);
    errors.push_back({plan.config.path, at.line, at.column, "probes.pacing.duration",
                      "must be at most " + format_duration(step_limit) + " when probes.pacing.cpu (" +
                          std::to_string(*cpu) + ") is sampled: each rate pauses its sampler that long; got " +
                          format_duration(probes.pacing.duration)});
  }
  constexpr std::size_t max_samples_on_sampled = 100000;  // fork_wait's step: 2000 forks
  if (probe == "kernel_cost" && probes.kernel_cost.samples > max_samples_on_sampled) {
    const std::string where =
        plan.config.marks.count("probes.kernel_cost.samples") ? "probes.kernel_cost.samples" : key;
    const SourceMark at = plan.config.mark_of(where);
    errors.push_back({plan.config.path, at.line, at.column, "probes.kernel_cost.samples",
                      "must be at most " + std::to_string(max_samples_on_sampled) +
                          " when probes.kernel_cost.cpu (" + std::to_string(*cpu) +
                          ") is sampled: each operation pauses its sampler; got " +
                          std::to_string(probes.kernel_cost.samples)});
  }
}

void check_against_machine(const SamplingPlan& plan, const HostReader& host, const Topology& topology,
                           const std::vector<int>& allowed) {
  std::vector<ConfigError> errors;
  check_c2c_pairs(plan, host, errors);
  std::vector<int> usable;
  for (int cpu : topology.online) {
    if (has_cpu(allowed, cpu)) usable.push_back(cpu);
  }
  const ProbesSettings& probes = plan.config.probes;
  if (probes.pacing.enabled) check_probe_cpu(plan, "pacing", probes.pacing.cpu, usable, errors);
  if (probes.kernel_cost.enabled) check_probe_cpu(plan, "kernel_cost", probes.kernel_cost.cpu, usable, errors);
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
}
}  // namespace

SamplingPlan make_sampling_plan(Config config, const HostReader& host, const std::vector<int>& allowed) {
  SamplingPlan plan;
  plan.config = std::move(config);
  plan.method = choose_method(plan.config);
  const Topology topology = read_topology(host);
  plan.machine_problems = topology.problems;
  CpuRequest request;
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
    for (const auto& e : result.errors) {
      // Errors about the watched CPUs cite watch.cpus; the rest, cpus.
      const std::string key = e.rfind("watch.cpus: ", 0) == 0 ? "watch.cpus" : "cpus";
      const SourceMark mark = plan.config.mark_of(key);
      errors.push_back({plan.config.path, mark.line, mark.column, key,
                        key == "cpus" ? e : e.substr(std::string_view("watch.cpus: ").size())});
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
