// SPDX-License-Identifier: Apache-2.0
// The application's side of `jitterd fleet` (docs/fleet.md, "The application's side"): the watched
// CPUs' counters (jitterd_watch_*) and the loops' (jitterd_loop_*), read as the sampled CPUs' are,
// at the range's two ends (fleet/fleet_ends.h) or in full, and turned into per-unit figures:
//  - a watched CPU: hard interrupts and IPIs, timer interrupts (the tick), softirqs and preemptions
//    per second of the host's counted time; the preempted share (every method) and the stolen share
//    (every cause: the bpf and tracepoints methods only); the paired interruptions per second and
//    those at or above each tail threshold (bpf's duration histogram); tick-stop failures per second
//    (where the timer:tick_stop tracepoint is read). A figure the host's method does not export is
//    absent (NaN), never zero;
//  - a loop: a sampled CPU's figures (its families have the same shapes and bounds), one loop per
//    name and host, matched across hosts by its `loop` label.
// A loop name comes from an answer and so from an application: names longer than kMostLoopNameBytes
// and names beyond the first kMostLoopNames are passed over and counted (LoopNames), so that one
// hostile name bounds neither the read nor the rows.
// Pure functions, safe from any thread; a LoopNames is used by one thread.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "fleet/fleet_answers.h"

namespace jitterd {

inline constexpr std::size_t kMostLoopNames = 64;
inline constexpr std::size_t kMostLoopNameBytes = 128;
inline constexpr std::size_t kMostPassedOver = 10000;  // names passed over that are counted apart

// The loop names of a read, each given an index once (FleetHistory::loop_names).
class LoopNames {
 public:
  explicit LoopNames(std::vector<std::string>& names) : names_(names) {}
  // The index of a series' `loop` label, or -1 for a name passed over (empty, too long, too many).
  int index_of(const PromSample& s);
  // What was passed over, for the notes; "" when nothing.
  std::string passed_over() const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::vector<std::string>& names_;
  std::map<std::string, int> index_;
  // The names passed over, by hash (a name is seen in many answers: counted once), at most
  // kMostPassedOver each; series without a loop label.
  std::set<std::size_t> too_long_, beyond_;
  bool unnamed_ = false;
};

// A watched CPU's series within its host: instance, cpu, part (a cause, an le label, or "").
using WatchKey = std::tuple<std::string, int, std::string>;

enum WatchFamily : std::size_t { kIrqs, kSoftirqs, kPreemptions, kStolen, kInterruptions, kDurations, kTickStops };
inline constexpr std::size_t kWatchFamilyCount = 7;
struct WatchFamilySpec {
  const char* metric;
  const char* part;  // the label summed apart: "cause", "le" or "" (none)
};
inline constexpr WatchFamilySpec kWatchFamilies[kWatchFamilyCount] = {
    {"jitterd_watch_irqs_total", "cause"},          {"jitterd_watch_softirqs_total", ""},
    {"jitterd_watch_preemptions_total", ""},        {"jitterd_watch_stolen_seconds_total", "cause"},
    {"jitterd_watch_interruptions_total", "cause"}, {"jitterd_watch_interruption_duration_seconds_bucket", "le"},
    {"jitterd_watch_tick_stop_failures_total", ""},
};
// The counters that tell, at 100 instants of the range, whether a host's watch or a loop started
// again from zero (fleet/fleet_ends.h): time counters that move while the watch or loop runs.
inline constexpr const char* kWatchClockSeries = "jitterd_watch_application_run_seconds_total";
inline constexpr const char* kLoopClockSeries = "jitterd_loop_sampled_seconds_total";

using WatchValues = std::array<std::map<WatchKey, double>, kWatchFamilyCount>;
using WatchAnswers = std::array<Json, kWatchFamilyCount>;  // null: not asked (empty)

// The application's side of one batch: the watch's families, and the loops' four (a sampled CPU's).
struct ApplicationAnswers {
  WatchAnswers watch;
  BatchAnswers loops;
};
struct ApplicationValues {
  WatchValues watch;
  CounterValues loops;  // unit: the loop's index in LoopNames
};
ApplicationValues application_values(const ApplicationAnswers& answers, const std::string& source,
                                     LoopNames& loops);

// The watched figures' names: the eight fixed ones, then one per tail threshold at the duration
// histogram's bounds (interruptions_over_16.384us_per_s) where any CPU has that histogram.
std::vector<std::string> watched_figure_names(const WatchValues& values);

// Each watched CPU's figures from its counters' increases, per second of its host's
// counted_seconds, into FleetHost::watched (history.watched_figure_names: named on the first
// batch that shows a watched CPU); the loops' into FleetHost::loops.
void add_application_figures(FleetHistory& history, const ApplicationValues& increases);

}  // namespace jitterd
