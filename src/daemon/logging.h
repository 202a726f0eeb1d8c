// SPDX-License-Identifier: Apache-2.0
// spdlog set-up: a synchronous stderr logger (no logging thread to place on a CPU). When stderr
// is the journal (JOURNAL_STREAM matches it), lines carry a syslog priority prefix ("<4>") and
// no timestamp, since journald adds its own.
// Thread-safety: call setup_logging/set_log_level from the main thread; log from any thread.
#pragma once

#include <optional>
#include <string_view>

namespace jitterd {

void setup_logging();
// Returns false for an unknown level name.
bool set_log_level(std::string_view level);
bool stderr_is_journal();

}  // namespace jitterd
