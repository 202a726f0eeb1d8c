// SPDX-License-Identifier: Apache-2.0
// The tasks (threads) of the machine as procfs shows them, for the posture's stray-task check:
// each thread's name, the CPU it last ran on (field 39 of /proc/PID/task/TID/stat), the CPUs it
// may run on (Cpus_allowed_list in .../status) and whether it is a kernel thread (PF_KTHREAD).
// Pure parsers on literal text, and one read through a HostReader, so tests use fixture trees.
// Reading walks every thread: call it from a housekeeping thread. Tasks that exit while being
// read are skipped silently (that is not a problem of the machine).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"

namespace jitterd {

struct TaskStat {
  std::string comm;         // field 2, without its parentheses; may hold blanks and ')'
  int processor = 0;        // field 39: the CPU it last ran on
  unsigned long flags = 0;  // field 9: PF_* flags
  // field 22: when the task started, in clock ticks (sysconf(_SC_CLK_TCK)) since boot; with the
  // tid it tells a thread from a later one that reused its number.
  unsigned long long start_ticks = 0;
};

// std::nullopt for text that is not a stat line with at least 39 fields.
std::optional<TaskStat> parse_task_stat(std::string_view text);

// PF_KTHREAD (include/linux/sched.h) in TaskStat::flags: a kernel thread.
inline bool is_kernel_thread(const TaskStat& stat) { return (stat.flags & 0x00200000) != 0; }

// The value of the `key:` line of a /proc/PID/status text, its leading blanks dropped, or
// std::nullopt. The key is matched at a line start, so "voluntary_ctxt_switches" is not found
// inside "nonvoluntary_ctxt_switches".
std::optional<std::string_view> status_field(std::string_view status_text, std::string_view key);

// The Cpus_allowed_list of /proc/PID/status text, or std::nullopt.
std::optional<std::vector<int>> parse_cpus_allowed_list(std::string_view status_text);

// The real user ID of /proc/PID/status text (the first of the Uid: line's four), or std::nullopt.
std::optional<unsigned> parse_real_uid(std::string_view status_text);

struct TaskSeen {
  int pid = 0;  // the thread group (process)
  int tid = 0;
  std::string comm;
  int processor = 0;
  std::vector<int> allowed;  // empty when status was unreadable
  bool kernel_thread = false;
  unsigned long long start_ticks = 0;
  std::optional<unsigned> uid;  // the real user ID; nullopt when status was unreadable
};

// Every thread under <procfs>/[0-9]*/task/[0-9]*, by pid then tid.
std::vector<TaskSeen> read_tasks(const HostReader& host);

}  // namespace jitterd
