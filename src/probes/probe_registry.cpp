#include "probes/probe_registry.h"

#include <algorithm>

namespace jitterd {

namespace {

struct ProbeEntry {
  std::string_view name;
  bool (*enabled)(const ProbesSettings&);
  std::unique_ptr<Probe> (*make)(const ProbesSettings&);
};

// One entry: the probe type and where its settings sit in ProbesSettings.
template <typename P, auto Member>
constexpr ProbeEntry entry(std::string_view name) {
  return {name, [](const ProbesSettings& s) { return (s.*Member).enabled; },
          [](const ProbesSettings& s) -> std::unique_ptr<Probe> { return std::make_unique<P>(s.*Member); }};
}

constexpr ProbeEntry kProbes[] = {
    entry<PostureProbe, &ProbesSettings::posture>("posture"),
    entry<AttributionProbe, &ProbesSettings::attribution>("attribution"),
    entry<ClockProbe, &ProbesSettings::clock>("clock"),
    entry<KernelCostProbe, &ProbesSettings::kernel_cost>("kernel_cost"),
    entry<PinningProbe, &ProbesSettings::pinning>("pinning"),
    entry<PacingProbe, &ProbesSettings::pacing>("pacing"),
    entry<C2cProbe, &ProbesSettings::c2c>("c2c"),
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
