// SPDX-License-Identifier: Apache-2.0
// The `jitterd compare` verb: reads the two baselines the command line names (two files, or two
// time ranges of Prometheus history with --prometheus), compares them (compare/comparison.h) and
// prints the comparison in the format asked for (table, CSV, JSON, or the HTML page of
// compare/comparison_html.h). Called once from main(), on the main thread.
#pragma once

#include "cli/command_line.h"

namespace jitterd {

// Exit 0 when compared (whatever the verdicts); BaselineError otherwise.
int run_compare(const CommandLine& command_line);

}  // namespace jitterd
