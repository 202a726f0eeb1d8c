// SPDX-License-Identifier: Apache-2.0
// The stolen-time plot of a watched CPU or a loop (probes/stolen_series.h StolenPlot) as inline
// SVG, for the status page: per reading (or step of readings) a bar as wide as the time it
// covered, its height the share taken (of the reading, or of the time a loop recorded in it),
// stacked by cause (preempted at the bottom,
// one colour each, a legend with each cause's total over the window), the x axis the seconds
// before the last reading, the y axis the share in percent; under it the window's worst
// preempters by name. Every name from the machine goes through html_escape. No script; the SVG
// has a viewBox and no fixed width, so it scales to its container (a phone's width too). Pure
// functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "probes/stolen_series.h"
#include "report/render.h"

namespace jitterd {

// "cpu 3", "loop rx0 (cpu 2)" (not escaped).
std::string stolen_plot_subject(const StolenPlot& plot);

// The plot alone. Each cause's bars are one <g data-cause="NAME">, each bar a <rect>; the y axis
// spans 0 to the largest stacked share rounded up to 1, 2 or 5 times a power of ten.
std::string stolen_plot_svg(const StolenPlot& plot);

// The plot in a <figure id="`id`"> with a caption under it: the worst preempters over the window
// (name, class, share of the preempted time, time and count), the time not named, and the plot's
// note (what it cannot show).
std::string stolen_plot_figure(const StolenPlot& plot, std::string_view id);

// The plot in /status.json (an entry of a probe's "stolen", docs/operations.md): cpu, loop (null
// for a watched CPU), window_seconds, step_seconds, causes (those with time in the window, in
// stacking order), points[] (start_unix_seconds, end_unix_seconds, seconds: what the shares are
// of, and
// stolen_seconds, one per listed cause), preempters_named, preempted_seconds, unnamed_seconds,
// preemptions, worst_preempters[] (task, class, seconds, preemptions) and note. Times to the
// millisecond, durations to the nanosecond.
Json stolen_plot_json(const StolenPlot& plot);

// The largest share any point's causes stack to (0 without points).
double stolen_plot_peak(const StolenPlot& plot);

}  // namespace jitterd
