// SPDX-License-Identifier: Apache-2.0
// The headline of each watched CPU and each loop, the first table of its section on the status
// page and in `jitterd report watch|loops`: over the rolling window, the share of the time taken,
// preemptions per second and the worst preempter (its share of the preempted time), the longest
// interruption, and for a watched CPU the timer tick's rate. Built from what the watch and loops
// probes already hold (probes/watch_window.h, probes/watch_top.h, the loop's window figures), so
// each number is one the other tables show too. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <deque>
#include <string_view>
#include <vector>

#include "measure/cpu_figures.h"
#include "probes/name_tally.h"
#include "probes/probe.h"
#include "probes/watch_top.h"
#include "probes/watch_window.h"
#include "watch/counts_engine.h"

namespace jitterd {

inline constexpr std::string_view kWatchGlanceTitle = "read this first: each watched CPU over the rolling window";
inline constexpr std::string_view kLoopGlanceTitle = "read this first: each loop over the rolling window";

// `windows`: the watch's typed figures per reading over the window, oldest first; `last`: the
// last reading (for the tick's rate); `top`: who preempted (nullptr for the counts method, which
// cannot name them).
ProbeTable watch_glance_table(const std::deque<std::vector<WatchWindow>>& windows, const WatchReading& last,
                              const WatchTop* top, std::string_view method);

// One loop's headline row: `figures` its window (CpuFigures), `top` its tallies when its
// interruptions are attributed (nullptr otherwise: preemptions and the worst preempter unknown).
void add_loop_glance_row(ProbeTable& table, const std::string& loop, int cpu, const CpuFigures& figures,
                         const TopTallies* top);
ProbeTable loop_glance_table();

// "noise_injector (stray)", its share of the total: the first row by time of `top`, none when
// nothing preempted.
std::pair<Cell, Cell> worst_preempter(const TopTally& top);

}  // namespace jitterd
