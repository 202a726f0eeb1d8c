// SPDX-License-Identifier: Apache-2.0
// The `run` verb: the long-running service. Its main thread is the only housekeeping loop: it
// waits for signals (SIGHUP reload, SIGTERM/SIGINT stop) with a timeout that paces the rolling
// windows and the systemd watchdog. Call run_daemon once, from main().
#pragma once

#include "config/config_source.h"
#include "host/host_reader.h"

namespace jitterd {

// Returns the process exit code; throws ConfigErrors when the first configuration is invalid.
// SIGHUP reads `config` again, flags included; every read of the machine goes through `host`.
int run_daemon(const ConfigSource& config, const HostReader& host);

}  // namespace jitterd
