// The `run` verb: the long-running service. Its main thread is the only housekeeping loop: it
// waits for signals (SIGHUP reload, SIGTERM/SIGINT stop) with a timeout that paces the rolling
// windows and the systemd watchdog. Call run_daemon once, from main().
#pragma once

#include "cli/command_line.h"

namespace jitterd {

// Returns the process exit code; throws ConfigErrors when the first configuration is invalid.
int run_daemon(const CommandLine& command_line);

}  // namespace jitterd
