// SPDX-License-Identifier: Apache-2.0
// `jitterd fleet`'s cheap read (docs/fleet.md, "How fleet reads Prometheus"): each counter's value at
// the range's two ends, last_over_time(...[LOOKBACK]) evaluated at START and at END, whose
// difference is the increase between the last scrape at or before START and the last at or before
// END, exactly (no extrapolation), whatever the scrapes in between. That holds only while the
// counters did not start again from zero in between, which jitterd_sampler_start_time_seconds
// tells (it changes when jitterd restarts or a reload starts new samplers). A host is read in full
// (increase() over the range, fleet/fleet_history.h) when the ends cannot be trusted, and why is
// said: its start time changed, is missing, or is later than the instant Prometheus holds it for
// (its clock is ahead of Prometheus's); a counter fell between the ends; a series at START has
// none at END; no sample within LOOKBACK of END; no sample within LOOKBACK of START although its
// samplers started before START. A host whose samplers started inside the range and that has no
// sample at START is read from END alone (its counters were zero at its start).
// The application's side (fleet/fleet_application.h: watched CPUs, loops) is read by the same rules,
// its series beside the sampled CPUs' (a host with a watch or loops and no sampled CPU is read as
// any other); a watch or a loop can start again without the samplers (a reload that restarts the
// probes, an application that restarts its loop), which the start time does not show: its time
// counter (kWatchClockSeries, kLoopClockSeries) is read at 100 instants of the range, and a host
// where it fell is read in full too.
// Pure functions, safe from any thread.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compare/time_range.h"
#include "fleet/fleet_answers.h"
#include "fleet/fleet_application.h"

namespace jitterd {

inline constexpr const char* kSamplerStartSeries = "jitterd_sampler_start_time_seconds";

// One batch read at the two ends: the four counters at START and at END, and the start-time
// series (not aggregated: one sample per series) at START and at END.
struct EndsAnswers {
  BatchAnswers start, end;
  Json started_at_start, started_at_end;
  // The application's side at START and at END (null answers: not asked), and the falls of its
  // time counters over the range (sum by (instance) and sum by (instance, loop) of resets() at 100
  // instants; null: not asked).
  ApplicationAnswers application_start = {}, application_end = {};
  Json watch_restarts = {}, loop_restarts = {};
};

// What is known of one host at the two ends, apart from its counters' values.
struct HostEnds {
  bool at_start = false, at_end = false;        // any sampler counter within LOOKBACK of that end
  std::set<double> started_start, started_end;  // its samplers' start times (one per series)
};

// Why the host must be read in full, or "" when its ends can be trusted (before its counters are
// compared). `lookback` in seconds, for the messages.
std::string ends_doubt(const HostEnds& host, const TimeRange& range, double lookback);

struct EndsResult {
  CounterValues increases;                // of the hosts read at the ends
  ApplicationValues application;          // theirs too
  std::vector<FleetRead> in_full;         // the others, and why
  std::map<std::string, double> counted;  // every host's counted seconds (FleetHost::counted_seconds)
  std::size_t at_ends = 0, started_inside = 0;
};

// The increases of `instances` from their ends, or why each of the others must be read in full.
// `loops` names the loops of the application's answers (fleet/fleet_application.h).
EndsResult ends_increases(const std::vector<std::string>& instances, const EndsAnswers& answers,
                          const TimeRange& range, double lookback, const std::string& source, LoopNames& loops);

}  // namespace jitterd
