// SPDX-License-Identifier: Apache-2.0
// What the status page and its JSON form (status_page.h) both read out of a StatusSnapshot, so
// the two say the same: why a CPU is not sampled, the probes' statuses, the machine's
// fingerprint as the posture probe last read it, the rolling window's sequence and end, the
// loops probe's last reading and the per-second rates of a window. Pure functions of the
// snapshot; safe from any thread.
#pragma once

#include <cstdint>
#include <ranges>
#include <string>
#include <utility>
#include <vector>

#include "export/collector.h"

namespace jitterd {

// Why a CPU is not sampled, as the page's note and the JSON's error say it: its start-up error,
// or, while the sampler is off its CPU, which CPU, since when and why (the errno of its last
// attempt to pin back), as jitterd_sampler_up and _pinned read 0. Empty while it samples.
std::string sampler_problem(const SamplerReading& r);

// The probes' shared snapshots, as references.
inline auto statuses_of(const StatusSnapshot& s) {
  return s.probes | std::views::transform([](const auto& p) -> const ProbeStatus& { return *p; });
}

// What the posture probe last read of the machine, and since when (0: not known).
struct FingerprintView {
  std::vector<std::pair<std::string, std::string>> fields;
  double since_unix_seconds = 0;
  double changes = 0;
  bool known = false;
};

FingerprintView fingerprint_of(const StatusSnapshot& s);

// The newest window's sequence number and end over the samplers (0 when none has one).
std::uint64_t window_sequence(const StatusSnapshot& s);
double window_end(const StatusSnapshot& s);

// The rates the page shows per second of the window.
double per_window_second(double value, const CpuFigures& f);

// What the loops probe last read, or nullptr when it is not configured or has not run.
const LoopsReading* loops_reading(const StatusSnapshot& s);

}  // namespace jitterd
