// SPDX-License-Identifier: Apache-2.0
#include "measure/tick.h"

#include <array>

namespace jitterd {

namespace {
constexpr std::array<std::pair<TickMethod, std::string_view>, 5> kNames{{
    {TickMethod::lfence_rdtsc, "lfence_rdtsc"},
    {TickMethod::rdtsc, "rdtsc"},
    {TickMethod::rdtscp, "rdtscp"},
    {TickMethod::cntvct, "cntvct"},
    {TickMethod::steady_clock, "steady_clock"},
}};
}  // namespace

std::string_view to_string(TickMethod method) {
  for (const auto& [m, name] : kNames) {
    if (m == method) return name;
  }
  return "unknown";
}

std::optional<TickMethod> tick_method_from_string(std::string_view text) {
  for (const auto& [m, name] : kNames) {
    if (name == text) return m;
  }
  return std::nullopt;
}

std::vector<TickMethod> supported_tick_methods() {
#if defined(__x86_64__)
  return {TickMethod::lfence_rdtsc, TickMethod::rdtsc, TickMethod::rdtscp, TickMethod::steady_clock};
#elif defined(__aarch64__)
  return {TickMethod::cntvct, TickMethod::steady_clock};
#else
  return {TickMethod::steady_clock};
#endif
}

TickMethod default_tick_method() { return supported_tick_methods().front(); }

bool tick_method_supported(TickMethod method) {
  for (auto m : supported_tick_methods()) {
    if (m == method) return true;
  }
  return false;
}

}  // namespace jitterd
