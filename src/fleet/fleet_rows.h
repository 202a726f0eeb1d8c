// SPDX-License-Identifier: Apache-2.0
// The figure rows of `jitterd fleet` and each host's value in each (docs/fleet.md, "One value per
// host"): the sampled CPUs' figures, each twice (the host's worst and its median sampled CPU:
// "p99_ns (worst CPU)"); the watched CPUs' the same way ("watched preemptions_per_s (worst CPU)");
// and per loop name, its figures once ("loop rx0: p99_ns"): a loop is one segment per name and
// host, so its value is the host's. A host without a watch or without that loop has no value in
// those rows (NaN: left out of their tests and drift, never a zero). An application-side row no host
// has a value in is not made, and said (not_judged), as are the hosts a side's rows lack.
// Pure functions, safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "fleet/fleet_history.h"
#include "fleet/fleet_statistics.h"

namespace jitterd {

struct FleetRows {
  std::vector<FigureSpec> specs;
  std::vector<std::vector<double>> values;  // per host, history.hosts' order; one per spec
  std::vector<std::string> not_judged;      // of the application's side: what has no row or host, and why
};

// `range_seconds` sets the rates' resolution, `guest` the allowances (compare/allowances.h).
FleetRows fleet_rows(const FleetHistory& history, double range_seconds, bool guest);

// The allowance (compare/allowances.h) name of a watched figure, and of a loop figure.
std::string watched_allowance(const std::string& figure);
std::string loop_allowance(const std::string& figure);

}  // namespace jitterd
