// SPDX-License-Identifier: Apache-2.0
#include "export/live_baseline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "export/status_snapshot_views.h"
#include "probes/application_windows.h"
#include "report/baseline_recorder.h"

namespace jitterd {
namespace {

// One CPU of the live baseline: one sub-window per window update of its rolling window.
BaselineCpu live_cpu(const SamplerReading& r, const WindowParts* w, double hertz) {
  BaselineCpu c;
  c.cpu = r.settings.cpu;
  c.error = r.startup.error;
  if (w != nullptr && r.sampling) {
    GapCountsTicks total;
    for (const WindowPart& part : w->parts) {
      if (part.added.sampled_ticks == 0) continue;
      add_sub_window(c, part.added, hertz);
      total.add(part.added);
    }
    set_totals(c, total, hertz);
    set_limits(c, r.startup.floor_ticks, r.startup.threshold_ticks, hertz);
    if (w->detail.summary.valid) c.max_ns = w->detail.summary.max_ns;
  } else if (c.error.empty()) {
    c.error = "not sampling when the baseline was taken";
  }
  if (c.error.empty() && c.samples == 0) c.error = "no gaps in the rolling window yet";
  return c;
}

// The watched CPUs and loops of the watch and loops probes' rolling history, one sub-window per
// reading, recorded as `jitterd baseline` records them (a loop's name in a second file: recorded
// from the first).
void add_application(Baseline& b, const StatusSnapshot& s) {
  std::vector<std::string> left_out;
  for (const ProbeStatus& p : statuses_of(s))
    if (p.ran && p.success && p.result.application_windows)
      add_application_windows(b, *p.result.application_windows, left_out);
  for (BaselineLoop& loop : b.loops)
    if (loop.error.empty() && loop.samples == 0) loop.error = "no gaps in the rolling window yet";
  // Without a sampled CPU the run is as long as the watch's history (a loop's counts only the
  // time it recorded).
  if (b.duration_seconds == 0)
    for (const BaselineWatched& w : b.watched) b.duration_seconds = std::max(b.duration_seconds, w.seconds);
  if (b.duration_seconds == 0)
    for (const BaselineLoop& l : b.loops)
      b.duration_seconds =
          std::max(b.duration_seconds, static_cast<double>(l.sub_windows.size()) * kSubWindowSeconds);
}

}  // namespace

const MachineReading* machine_reading(const StatusSnapshot& s) {
  for (const ProbeStatus& p : statuses_of(s))
    if (p.ran && p.success && p.result.machine) return &*p.result.machine;
  return nullptr;
}

Baseline live_baseline(const StatusSnapshot& s, const std::vector<WindowParts>& windows) {
  BaselineRecording r;
  r.created_unix_seconds = s.unix_seconds;
  r.jitterd_version = s.build.version;
  if (const MachineReading* reading = machine_reading(s)) {
    r.machine = reading->facts;
  } else {
    r.machine.hostname = s.hostname;
    r.unknown_fields = baseline_fingerprint_keys();
    std::erase(r.unknown_fields, "hostname");
    r.unknown_why = "the posture probe had not run";
  }
  r.tick_method = std::string(to_string(s.method));
  r.counter_hertz = s.frequency.hertz;
  r.counter_source = s.frequency.source;
  std::vector<BaselineCpu> cpus;
  for (std::size_t i = 0; i < s.samplers.size(); ++i) {
    const WindowParts* w = i < windows.size() ? &windows[i] : nullptr;
    cpus.push_back(live_cpu(s.samplers[i], w, s.frequency.hertz > 0 ? s.frequency.hertz : 1e9));
    r.cpus.push_back(s.samplers[i].settings.cpu);
    if (w != nullptr && s.samplers[i].sampling)
      r.duration_seconds = std::max(r.duration_seconds, w->detail.summary.span_seconds);
  }
  const SamplerSettings* first = s.samplers.empty() ? nullptr : &s.samplers.front().settings;
  r.configuration = {
      {"source", "jitterd daemon: its rolling window at download"},
      {"window", first ? fmt::format("{}s", std::chrono::duration<double>(first->window).count()) : ""},
      {"duty_cycle", first ? fmt::format("{:.3f}", first->duty_cycle()) : ""},
  };
  std::vector<BaselineProbe> probes;
  for (const ProbeStatus& p : statuses_of(s))
    if (p.ran) probes.push_back(baseline_probe(p));
  Baseline baseline = record_baseline(r, std::move(cpus), std::move(probes));
  add_application(baseline, s);
  return baseline;
}

}  // namespace jitterd
