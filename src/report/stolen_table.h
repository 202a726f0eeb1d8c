// SPDX-License-Identifier: Apache-2.0
// The stolen-time plots of a daemon's /status.json (a probe entry's "stolen", written by
// report/stolen_plot.h stolen_plot_json) read back as one table for `jitterd report watch|loops
// --from URL`: a row per watched CPU or loop with the window's taken share, its peak reading,
// the cause that took the most, the worst preempter and the share of each reading over time as a
// sparkline. Hostile input: every field checked through the JsonReader (a BaselineError 65 naming
// the JSON path), names made printable. Pure; safe from any thread.
#pragma once

#include <string>

#include "probes/probe.h"
#include "report/json_reader.h"

namespace jitterd {

inline constexpr std::size_t kStolenSparklineWidth = 60;

ProbeTable stolen_table_from_json(const JsonReader& reader, const Json& stolen, const std::string& where);

// The shares as a sparkline of at most kStolenSparklineWidth characters, each the largest share
// of its points scaled to the largest of all: "▁" for nothing taken, "▂" to "█" for more.
std::string stolen_sparkline(const std::vector<double>& shares);

}  // namespace jitterd
