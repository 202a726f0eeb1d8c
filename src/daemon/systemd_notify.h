// SPDX-License-Identifier: Apache-2.0
// The sd_notify protocol through libsystemd: readiness (with a status), reload, stop and watchdog
// messages. Without NOTIFY_SOCKET every call is a no-op, so the daemon runs the same by hand.
// Thread-safety: call from the main thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace jitterd {

void notify_ready(const std::string& status);
void notify_reloading();
void notify_stopping();
void notify_watchdog();
// Half of WATCHDOG_USEC when systemd asked for a watchdog (sd_watchdog_enabled), else nullopt.
std::optional<std::chrono::microseconds> watchdog_ping_interval();

}  // namespace jitterd
