// SPDX-License-Identifier: Apache-2.0
// Who re-arms the tick, in the watch's result (method bpf): the timers started on each watched
// CPU by the function they run (watch/bpf_timers.h), as jitterd_watch_timer_starts_total{cpu,
// kind,function} for the kTimerFunctionsPerCpu most started on the CPU per kind (the rest as
// function="other": the first 16 seen, most started first, keep their series), and a table beside
// the tick-stop failures. On a nohz_full CPU they name what
// kept the tick (a tick_stop failure says which dependency; these say which timer); on a CPU
// without nohz_full the tick never stops, and they name what sets timers there. Pure function of
// a reading; called from the watch probe's thread.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "probes/probe.h"
#include "watch/bpf_timers.h"
#include "watch/counts_engine.h"

namespace jitterd {

// Timer functions exported per watched CPU and kind.
inline constexpr std::size_t kTimerFunctionsPerCpu = 16;

// The functions given a series of their own so far, per (CPU, kind): once given, always given, so
// that "other" (the functions never given one) only grows. Re-picking the most started at each
// reading moved a function's whole count into "other" and back as it fell out of the top 16 and
// climbed in again, and "other" went backwards: a counter reset to Prometheus.
using TimerFunctionsShown = std::map<std::pair<int, std::string>, std::set<std::string>>;

// The metrics, the table (inserted after the "tick stop failures" table where there is one) and
// a note for `reading` over the watched CPUs of `counts`; `shown` is the probe's, kept between
// readings.
void add_timer_starts(const TimerStartsReading& reading, const WatchReading& counts, TimerFunctionsShown& shown,
                      ProbeResult& result);

}  // namespace jitterd
