// SPDX-License-Identifier: Apache-2.0
#include "daemon/systemd_notify.h"

#include <systemd/sd-daemon.h>

namespace jitterd {

namespace {
void send(const std::string& message) { sd_notify(0, message.c_str()); }
}  // namespace

void notify_ready(const std::string& status) { send("READY=1\nSTATUS=" + status); }
void notify_reloading() { send("RELOADING=1\nSTATUS=reloading configuration"); }
void notify_stopping() { send("STOPPING=1\nSTATUS=stopping"); }
void notify_watchdog() { send("WATCHDOG=1"); }

std::optional<std::chrono::microseconds> watchdog_ping_interval() {
  std::uint64_t usec = 0;
  if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) return std::nullopt;
  return std::chrono::microseconds(usec / 2);
}

}  // namespace jitterd
