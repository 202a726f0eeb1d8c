// SPDX-License-Identifier: Apache-2.0
// The stolen-time plot of a watched CPU or a loop (probes/stolen_series.h) as the watch and loops
// probes hand it out (ProbeResult::stolen): the series on the wall clock and the window's worst
// preempters from who-took-the-CPU's tallies (probes/watch_top.h), so the names under a plot are
// the first rows of the "who preempted" table over the same window. Pure functions; any thread.
#pragma once

#include <string>

#include "probes/stolen_series.h"
#include "probes/watch_top.h"

namespace jitterd {

// `series` as a plot of watched CPU `cpu` (`loop` "") or of `loop` on `cpu`; `top` its tallies
// (nullptr: this source names no preempter, and `note` says why); `unix_minus_monotonic` the
// wall clock less the monotonic one, read together.
StolenPlot stolen_plot(const StolenSeries& series, int cpu, std::string loop, const TopTallies* top,
                       double unix_minus_monotonic, std::string note);

// The wall clock less the monotonic clock, now.
double unix_minus_monotonic_now();

}  // namespace jitterd
