#include "probes/probe_registry.h"

#include <algorithm>

namespace jitterd {

namespace {

struct ProbeEntry {
  std::string_view name;
  // It measures once and its result is a figure to compare, so `jitterd baseline --probes` may
  // run it; posture and attribution judge the machine over time instead.
  bool in_baselines;
  bool (*enabled)(const ProbesSettings&);
  std::unique_ptr<Probe> (*make)(const ProbesSettings&);
};

// One entry: the probe type and where its settings sit in ProbesSettings.
template <typename P, auto Member>
constexpr ProbeEntry entry(std::string_view name, bool in_baselines) {
  return {name, in_baselines, [](const ProbesSettings& s) { return (s.*Member).enabled; },
          [](const ProbesSettings& s) -> std::unique_ptr<Probe> { return std::make_unique<P>(s.*Member); }};
}

constexpr ProbeEntry kProbes[] = {
    entry<PostureProbe, &ProbesSettings::posture>("posture", false),
    entry<AttributionProbe, &ProbesSettings::attribution>("attribution", false),
    entry<WatchProbe, &ProbesSettings::watch>("watch", false),
    entry<ClockProbe, &ProbesSettings::clock>("clock", true),
    entry<KernelCostProbe, &ProbesSettings::kernel_cost>("kernel_cost", true),
    entry<PinningProbe, &ProbesSettings::pinning>("pinning", true),
    entry<PacingProbe, &ProbesSettings::pacing>("pacing", true),
    entry<C2cProbe, &ProbesSettings::c2c>("c2c", true),
};

}  // namespace

const std::vector<std::string_view>& probe_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const ProbeEntry& e : kProbes) out.push_back(e.name);
    return out;
  }();
  return names;
}

const std::vector<std::string_view>& baseline_probe_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const ProbeEntry& e : kProbes)
      if (e.in_baselines) out.push_back(e.name);
    return out;
  }();
  return names;
}

std::unique_ptr<Probe> make_probe(std::string_view name, const ProbesSettings& settings) {
  const auto* found =
      std::find_if(std::begin(kProbes), std::end(kProbes), [&](const ProbeEntry& e) { return e.name == name; });
  return found == std::end(kProbes) ? nullptr : found->make(settings);
}

std::vector<std::unique_ptr<Probe>> make_enabled_probes(const ProbesSettings& settings) {
  std::vector<std::unique_ptr<Probe>> probes;
  for (const ProbeEntry& e : kProbes) {
    if (e.enabled(settings)) probes.push_back(e.make(settings));
  }
  return probes;
}

}  // namespace jitterd
