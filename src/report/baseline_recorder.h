// SPDX-License-Identifier: Apache-2.0
// The one baseline recorder: every source of baselines (a `jitterd baseline` file and `report
// --save`, the daemon's live download, Prometheus history), for the sampled CPUs and the
// application's side alike (its loops and watched CPUs), hands it plain figures (per CPU, what its
// counters added per sub-window and in all; per probe, its last status; the machine's facts) and
// gets the same Baseline back: the same
// fingerprint fields by one recipe, the same sub-window length, the same configuration keys
// where the sources share them, the same UTC timestamp. Pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "host/posture.h"
#include "measure/gap_counts.h"
#include "probes/application_windows.h"
#include "probes/probe.h"
#include "probes/watch_window.h"
#include "report/baseline_file.h"

namespace jitterd {

// The length of every baseline's sub-windows, and the step of the daemon's rolling window (the
// live download's sub-windows are its steps). One second because the daemon's default `burst`
// duty cycle spins 100 ms of every second: a shorter step would alternate between sampled and
// idle halves, so one second is the shortest both can share, and with one length a file and a
// download compare with each other.
inline constexpr double kSubWindowSeconds = 1.0;

using BaselineFields = std::vector<std::pair<std::string, std::string>>;

// The fingerprint recipe: kernel, cmdline, microcode, bios_vendor, bios_version, bios_date,
// cpu_model, hypervisor (host/posture.h fingerprint_fields), hostname, governor (one value when
// every sampled CPU has the same, else "cpu:value" pairs; "" when none has one), clocksource and
// isolation (which CPUs each mechanism isolates: host/isolation_sources.h isolation_summary), in
// that order, leaving out each field named in `unknown` (compare notes a field only one side
// has, rather than calling it a change of the machine).
BaselineFields baseline_fingerprint(const MachineFacts& facts, const std::vector<std::string>& unknown = {});
// One value when every CPU has the same ("performance"), else "cpu:value" pairs; "" for none.
std::string per_cpu_text(const std::map<int, std::string>& values);
// per_cpu_text read back: the value `text` gives `cpu` (the whole text when it is one value for
// every CPU, that CPU's entry of the pairs), "" when the pairs name no such CPU.
std::string per_cpu_value(std::string_view text, int cpu);
// Every field the recipe gives, in its order.
const std::vector<std::string>& baseline_fingerprint_keys();
// The configuration key naming the fields a source could not know, and why.
inline constexpr const char* kFingerprintUnknownKey = "fingerprint_unknown";

// The baseline's figures from ticks. These three convert by the file's own rule (seconds: ticks /
// counter_hertz; nanoseconds: ticks × (1e9 / counter_hertz)), not by TickScale as
// measure/cpu_figures.h does: sub_window_of's tail counts must fall on the same side of each
// threshold as in every earlier file of the same counter frequency.
//
// Appends the sub-window `added` to `cpu` (nothing when it sampled no time).
void add_sub_window(BaselineCpu& cpu, const GapCountsTicks& added, double counter_hertz);
// Sets `cpu`'s histogram, samples, sampled and stolen seconds and interruptions from `total`.
void set_totals(BaselineCpu& cpu, const GapCountsTicks& total, double counter_hertz);
// Sets `cpu`'s loop floor and interruption threshold from the sampler's.
void set_limits(BaselineCpu& cpu, std::uint64_t floor_ticks, std::uint64_t threshold_ticks, double counter_hertz);

// A loop (format 1.2) is a sampled CPU in its own counter: add_sub_window, set_totals and set_limits
// with the loop's counter_hertz record it.

// Appends one reading's windows (probes/watch_window.h) to `watched` as sub-windows, adding a
// watched CPU at its first window; a window of no length (the first reading, an offline CPU) adds
// nothing. `method`: kWatchMethodBpf, kWatchMethodTracepoints or kWatchMethodCounts.
void add_watch_windows(std::vector<BaselineWatched>& watched, const std::vector<WatchWindow>& windows,
                       const std::string& method, double outlier_threshold_ns);
// Sets a watched CPU's totals from its sub-windows: sums; the longest of those known (none if none
// is); a tail count only where every sub-window knows it; tail_unknown the sub-windows' reasons.
void set_watched_totals(BaselineWatched& watched);

// The watch and loops probes' typed history (probes/application_windows.h) into `baseline`'s
// watched[] and loops[], one sub-window per reading, as `jitterd baseline` and the daemon's
// download both record them: each reading through add_watch_windows, each loop as a sampled CPU in
// its counter (its max by the file's rule, ticks x (1e9 / hertz)), then every watched CPU's totals.
// A file holds a loop's name once: another file of the same name is left out, with a line saying
// so in `warnings`.
void add_application_windows(Baseline& baseline, const ApplicationWindows& history,
                             std::vector<std::string>& warnings);

// What a source knows of its recording besides the CPUs and the probes.
struct BaselineRecording {
  double created_unix_seconds = 0;
  std::string jitterd_version;
  MachineFacts machine;
  // Fingerprint fields the source could not know (left out), and why: the configuration's
  // fingerprint_unknown says "hostname: <why>".
  std::vector<std::string> unknown_fields;
  std::string unknown_why;
  std::string tick_method;
  double counter_hertz = 0;
  std::string counter_source;
  double duration_seconds = 0;
  double sub_window_seconds = kSubWindowSeconds;
  std::vector<int> cpus;  // for the configuration's "cpus"
  // The source's own settings, after cpus, tick_method and counter_source and before sub_window.
  BaselineFields configuration;
  std::vector<double> tail_thresholds_ns = kTailThresholdsNs;
  std::vector<double> histogram_bounds_ns;  // Baseline::histogram_bounds_ns
};

// A probe's last status as a baseline holds it.
BaselineProbe baseline_probe(const ProbeStatus& status);

// The baseline of `recording` with these CPUs and probes.
Baseline record_baseline(const BaselineRecording& recording, std::vector<BaselineCpu> cpus,
                         std::vector<BaselineProbe> probes = {});

}  // namespace jitterd
