// SPDX-License-Identifier: Apache-2.0
// The series of one range's Prometheus answer, for compare --prometheus (prometheus_history.h):
// the metric names jitterd exports, the "matrix" result parsed into labelled series (a value that
// is not a finite number refused, stale markers dropped), counters turned into increments between
// scrapes (a drop is a restart from 0), and the series gathered by kind: per sampled CPU and
// sub-window, the latest gauge and _info series, and the application's loops read as sampled
// CPUs. A native histogram with custom buckets (a Prometheus 3 server converting jitterd's classic
// histograms, NHCB) is read as the classic _bucket series it was converted from: its bounds are
// the exported ones, so nothing is lost. Internal to compare/: the names live in history_detail. Pure functions.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compare/prometheus_history.h"

namespace jitterd::history_detail {

inline constexpr const char* kGapBuckets = "jitterd_sampler_gap_seconds_bucket";
// The gap histograms as a Prometheus 3 server stores them when its scrape converts classic
// histograms to native histograms with custom buckets (convert_classic_histograms_to_nhcb): one
// series, no _bucket series (unless always_scrape_classic_histograms keeps them too).
inline constexpr const char* kGapHistogram = "jitterd_sampler_gap_seconds";
inline constexpr const char* kLoopGapHistogram = "jitterd_loop_gap_seconds";
inline constexpr const char* kSampled = "jitterd_sampler_sampled_seconds_total";
inline constexpr const char* kInterruptions = "jitterd_sampler_interruptions_total";
inline constexpr const char* kStolen = "jitterd_sampler_stolen_seconds_total";
inline constexpr const char* kFloor = "jitterd_sampler_loop_floor_seconds";
inline constexpr const char* kThreshold = "jitterd_sampler_interruption_threshold_seconds";
inline constexpr const char* kWindowMax = "jitterd_sampler_window_max_gap_seconds";
inline constexpr const char* kDuty = "jitterd_sampler_duty_cycle_ratio";
inline constexpr const char* kRealtime = "jitterd_sampler_realtime_priority";
inline constexpr const char* kTickInfo = "jitterd_tick_info";
inline constexpr const char* kTickHertz = "jitterd_tick_frequency_hertz";
inline constexpr const char* kFingerprint = "jitterd_fingerprint_info";
inline constexpr const char* kGovernor = "jitterd_posture_cpufreq_governor_info";
inline constexpr const char* kClocksource = "jitterd_clocksource_current_info";
inline constexpr const char* kBuild = "jitterd_build_info";
// The application's loops (probes/loops_probe.h): a sampled CPU's families under another prefix,
// labelled by loop and cpu.
inline constexpr const char* kLoopPrefix = "jitterd_loop_";
inline constexpr std::pair<const char*, const char*> kLoopFamilies[] = {
    {"jitterd_loop_gap_seconds_bucket", kGapBuckets},
    {"jitterd_loop_sampled_seconds_total", kSampled},
    {"jitterd_loop_interruptions_total", kInterruptions},
    {"jitterd_loop_stolen_seconds_total", kStolen},
    {"jitterd_loop_floor_seconds", kFloor},
    {"jitterd_loop_interruption_threshold_seconds", kThreshold},
    {"jitterd_loop_window_max_gap_seconds", kWindowMax},
};
// The watched CPUs (probes/watch_probe.h, probes/watch_paired_result.h).
inline constexpr const char* kWatchMethod = "jitterd_watch_method_info";
inline constexpr const char* kWatchInterruptions = "jitterd_watch_interruptions_total";  // bpf, by cause
inline constexpr const char* kWatchInterrupts = "jitterd_watch_irqs_total";          // counts: hard IRQs and IPIs
inline constexpr const char* kWatchSoftirqs = "jitterd_watch_softirqs_total";        // counts
inline constexpr const char* kWatchPreemptions = "jitterd_watch_preemptions_total";  // counts
inline constexpr const char* kWatchStolen = "jitterd_watch_stolen_seconds_total";    // by cause

// Every family a range's query asks for by name (history_selector), the loops' beside them.
inline constexpr const char* kHistoryFamilies[] = {kGapBuckets,      kGapHistogram,    kSampled,
                                                   kInterruptions,   kStolen,          kFloor,
                                                   kThreshold,       kWindowMax,       kDuty,
                                                   kRealtime,        kTickInfo,        kTickHertz,
                                                   kFingerprint,     kGovernor,        kClocksource,
                                                   kBuild,           kWatchMethod,     kWatchInterruptions,
                                                   kWatchInterrupts, kWatchSoftirqs,   kWatchPreemptions,
                                                   kWatchStolen,     kLoopGapHistogram};

struct Point {
  double t = 0, v = 0;
};

struct Series {
  std::map<std::string, std::string> labels;
  std::vector<Point> points;  // by time

  std::string label(const std::string& name) const {
    const auto it = labels.find(name);
    return it == labels.end() ? "" : it->second;
  }
  double last() const { return points.empty() ? 0 : points.back().v; }
};

// Throws BaselineError (65): `source` is not a Prometheus range answer, `what` saying why.
[[noreturn]] void wrong_shape(const std::string& source, const std::string& what);

// The matrix's series, each one's points by time (stale markers dropped). Throws as wrong_shape.
std::vector<Series> series_of(const RangeSamples& samples);

// Increments between consecutive scrapes; a drop is a counter restarted from 0 (increase()'s rule).
struct Increment {
  double t = 0, amount = 0;
};
// `resets`, when given, gets the time of each drop.
std::vector<Increment> increments(const Series& s, std::vector<double>* resets);

struct CpuWindows {
  std::vector<double> sampled, interruptions, stolen;
  std::map<double, std::vector<double>> cumulative;  // le (ns; +inf) -> per sub-window increments
  std::vector<double> resets;
};

// What one range's series say, gathered by kind.
struct Gathered {
  std::map<int, CpuWindows> cpus;
  std::map<int, Series> floor, threshold, duty, realtime, governor;  // latest per CPU
  std::map<int, double> window_max;                                  // largest in the range
  std::map<std::string, Series> info;                                // latest per metric name
  std::vector<const Series*> fingerprints;                           // every label set seen
};

// Whether a's last scrape is later than b's (both have points).
bool later(const Series& a, const Series& b);

// The series by kind, the counters' increments summed per sub-window (`windows` of
// `sub_window_seconds` from the range's start). Throws as wrong_shape on a bad cpu or le label,
// or more than kBaselineMaxCpus CPUs.
Gathered gather(const std::vector<Series>& all, const RangeSamples& samples, double sub_window_seconds,
                std::size_t windows);

// The loops' series as a sampled CPU's (the same shapes: jitterd_loop_X is jitterd_sampler_X),
// each loop's cpu label replaced by its index in `names`, so that gather() and cpu_baseline()
// read them as they read a sampled CPU.
// `loops` gets each loop's name and CPU. Throws as wrong_shape on missing labels or more than
// kBaselineMaxLoops loops.
std::vector<Series> loops_as_samplers(const std::vector<Series>& all, const RangeSamples& samples,
                                      std::vector<std::pair<std::string, int>>& loops);

// A cpu label as a CPU number, or -1.
int cpu_label(const Series& s);

}  // namespace jitterd::history_detail
