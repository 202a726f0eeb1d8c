// SPDX-License-Identifier: Apache-2.0
#include "export/status_snapshot_views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "export/live_baseline.h"
#include "host/text.h"

namespace jitterd {

std::string sampler_problem(const SamplerReading& r) {
  if (!r.startup.error.empty() || !r.off_cpu) return r.startup.error;
  const int cpu = r.settings.cpu;
  std::string text =
      r.pin_error == EINVAL
          ? fmt::format(
                "cpu {} is offline (or outside this process's cpuset): the sampler cannot pin itself to it", cpu)
      : r.pin_error != 0
          ? fmt::format("the sampler cannot pin itself back to cpu {} ({})", cpu, std::strerror(r.pin_error))
          : fmt::format("the sampler was moved off cpu {}", cpu);
  if (r.off_cpu_since > 0) text += " since " + utc_text(r.off_cpu_since);
  return text + fmt::format("; not sampled meanwhile, retrying every {} ms", kCpuRetry.count());
}

FingerprintView fingerprint_of(const StatusSnapshot& s) {
  FingerprintView f;
  const MachineReading* reading = machine_reading(s);
  if (reading == nullptr) return f;
  f.fields = fingerprint_fields(reading->facts.fingerprint);
  // Which CPUs are isolated, by which mechanism (boot parameters, cpuset partitions, the kubelet).
  if (!reading->facts.isolation.empty()) f.fields.emplace_back("isolation", reading->facts.isolation);
  f.since_unix_seconds = reading->since_unix_seconds;
  f.changes = static_cast<double>(reading->changes);
  f.known = true;
  return f;
}

std::uint64_t window_sequence(const StatusSnapshot& s) {
  std::uint64_t sequence = 0;
  for (const SamplerReading& r : s.samplers) sequence = std::max(sequence, r.window_detail.sequence);
  return sequence;
}

double window_end(const StatusSnapshot& s) {
  double end = 0;
  for (const SamplerReading& r : s.samplers) end = std::max(end, r.window_detail.end_unix_seconds);
  return end;
}

double per_window_second(double value, const CpuFigures& f) { return value / f.span_seconds; }

const LoopsReading* loops_reading(const StatusSnapshot& s) {
  for (const ProbeStatus& p : statuses_of(s))
    if (p.ran && p.result.loops) return &*p.result.loops;
  return nullptr;
}

}  // namespace jitterd
