#include "sampling/sampling_plan.h"

#include <filesystem>
#include <stdexcept>

#include "host/cpu_list.h"
#include "host/topology.h"

namespace jitterd {

namespace {
Config load_with_overrides(const CommandLine& cl) {
  // report works without a file; run and check-config need the one they were given or the default.
  Config config = (cl.verb == Verb::report && !cl.config_path_given && !std::filesystem::exists(cl.config_path))
                      ? parse_config("{}", "(built-in defaults)")
                      : load_config_file(cl.config_path);
  std::vector<ConfigError> errors;
  // Flags are checked by the same rules as the file, by running them through the parser.
  std::string overrides;
  if (cl.listen_address) overrides += "web: {listen_address: \"" + *cl.listen_address + "\"";
  if (cl.telemetry_path)
    overrides +=
        std::string(overrides.empty() ? "web: {" : ", ") + "telemetry_path: \"" + *cl.telemetry_path + "\"";
  if (!overrides.empty()) overrides += "}\n";
  if (cl.log_level) overrides += "log: {level: \"" + *cl.log_level + "\"}\n";
  if (!overrides.empty()) {
    const Config flags = parse_config(overrides, "command line");
    if (cl.listen_address) config.web.listen_address = flags.web.listen_address;
    if (cl.telemetry_path) config.web.telemetry_path = flags.web.telemetry_path;
    if (cl.log_level) config.log.level = flags.log.level;
  }
  // The web configuration file is read with the rest, so check-config checks it and a reload
  // that breaks it is rejected as a whole.
  if (cl.web_config_file) config.web.config_file = *cl.web_config_file;
  if (!config.web.config_file.empty()) config.web.security = load_web_config_file(config.web.config_file);
  return config;
}

TickMethod choose_method(const Config& config) {
  if (!config.sampler.tick_source) return default_tick_method();
  const TickMethod method = *config.sampler.tick_source;
  if (!tick_method_supported(method)) {
    std::string allowed;
    for (auto m : supported_tick_methods()) allowed += (allowed.empty() ? "" : ", ") + std::string(to_string(m));
    throw ConfigErrors({{config.path, 0, 0, "sampler.tick_source",
                         "\"" + std::string(to_string(method)) +
                             "\" is not available on this architecture (allowed here: " + allowed + ")"}});
  }
  return method;
}
// An explicit c2c pair list is checked against this machine now, so a pair outside the probe's
// scope is a configuration error naming the entry, not a probe failure minutes later.
void check_c2c_pairs(const SamplingPlan& plan, const HostReader& host) {
  const C2cSettings& c2c = plan.config.probes.c2c;
  if (!c2c.enabled || c2c.pairs.selection != PairSelection::list) return;
  const PairPlan pairs = plan_c2c_pairs(c2c, host, plan.selection.sampled, nullptr);
  const SourceMark mark = plan.config.mark_of("probes.c2c.pairs");
  std::vector<ConfigError> errors;
  for (const PairListError& e : pairs.errors) {
    const bool hint = !c2c.allow_unsampled && e.kind == PairListError::Kind::outside_scope;
    errors.push_back({plan.config.path, mark.line, mark.column, "probes.c2c.pairs",
                      e.text + (hint ? "; set allow_unsampled to pair CPUs that are not sampled" : "")});
  }
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
}
}  // namespace

SamplingPlan make_sampling_plan(const CommandLine& cl, const HostReader& host, const std::vector<int>& allowed) {
  SamplingPlan plan;
  plan.config = load_with_overrides(cl);
  plan.method = choose_method(plan.config);
  const Topology topology = read_topology(host);
  plan.machine_problems = topology.problems;
  CpuRequest request{plan.config.cpus.automatic, plan.config.cpus.list};
  CpuSelectionResult result = select_cpus(request, topology, allowed);
  if (!result.selection) {
    std::vector<ConfigError> errors;
    const SourceMark mark = plan.config.mark_of("cpus");
    for (const auto& e : result.errors) errors.push_back({plan.config.path, mark.line, mark.column, "cpus", e});
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
