// SPDX-License-Identifier: Apache-2.0
// The scheduler's own counters, world-readable and exact on the CPUs jitterd watches:
// /proc/PID/task/TID/schedstat (a thread's time on the CPU, its time waiting on the run queue,
// its timeslices) and /proc/schedstat (per CPU: the time tasks ran there and waited there,
// accounted when a task leaves the CPU). Pure parsers on literal text; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

namespace jitterd {

struct SchedTimes {
  std::uint64_t run_ns = 0;   // on the CPU
  std::uint64_t wait_ns = 0;  // runnable, waiting on a run queue
  std::uint64_t timeslices = 0;
  bool operator==(const SchedTimes&) const = default;
};

// A thread's schedstat line, "run_ns wait_ns timeslices"; nullopt for anything else.
std::optional<SchedTimes> parse_thread_schedstat(std::string_view text);

// The "cpuN" lines of /proc/schedstat (versions 15 to 17: fields 7, 8 and 9 after the name are
// run time, wait time and timeslices), by CPU. Lines it does not know are skipped; a "version"
// line below 15 gives nothing (the fields meant something else then).
std::map<int, SchedTimes> parse_proc_schedstat(std::string_view text);

}  // namespace jitterd
