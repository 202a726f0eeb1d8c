// SPDX-License-Identifier: Apache-2.0
// The `jitterd fleet` verb: reads the fleet's hosts and figures from Prometheus
// (fleet/fleet_history.h), judges the cohorts and the drifted hosts (fleet/fleet_report.h) and
// prints the answer as a table, CSV, JSON or one self-contained HTML page. Called once from
// main(), on the main thread.
#pragma once

#include "cli/command_line.h"

namespace jitterd {

// Exit 0 when judged (whatever the verdicts); BaselineError otherwise (compare's exit codes).
int run_fleet(const CommandLine& command_line);

}  // namespace jitterd
