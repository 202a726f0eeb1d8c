// SPDX-License-Identifier: Apache-2.0
// Per-thread scheduler counters from /proc/PID/task/TID/status. A sampler's involuntary context
// switches say that something preempted it: the most direct explanation of a long gap. Read by
// the housekeeping side between windows, never by a sampler itself (it would be a syscall in the
// hot loop). Pure parse plus a thin read through HostReader; safe from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "host/host_reader.h"

namespace jitterd {

struct ContextSwitches {
  uint64_t voluntary = 0;
  uint64_t involuntary = 0;
};

// Parses the voluntary_ctxt_switches: and nonvoluntary_ctxt_switches: lines of a status file;
// std::nullopt unless both are present and numeric.
std::optional<ContextSwitches> parse_context_switches(std::string_view proc_status_text);

// Reads <procfs>/<pid>/task/<tid>/status; std::nullopt if the thread is gone or the file lacks
// the counters.
std::optional<ContextSwitches> read_thread_context_switches(const HostReader& host, pid_t pid, pid_t tid);
// The same from `task_dir`, a process's <procfs>/<pid>/task opened once (HostReader::proc_dir):
// one openat(2) into `buffer` per thread, for the once-a-second reading of every sampler's thread.
std::optional<ContextSwitches> read_thread_context_switches(const Directory& task_dir, pid_t tid,
                                                            FileBuffer& buffer);

}  // namespace jitterd
