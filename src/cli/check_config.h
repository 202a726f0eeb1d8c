// SPDX-License-Identifier: Apache-2.0
// The check-config verb: reads and validates the configuration as `run` would, plans the sampling on
// this machine, and prints what it would sample and why; errors come as ConfigErrors (exit 78 in
// main). Called once from main's thread.
#pragma once

#include "cli/command_line.h"

namespace jitterd {

// Prints "FILE: valid; on this machine it samples cpus ..." with the plan's notes and warnings;
// returns 0. Throws ConfigErrors for a configuration that `run` would refuse.
int run_check_config(const CommandLine& cl);

}  // namespace jitterd
