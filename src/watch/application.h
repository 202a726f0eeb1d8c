// SPDX-License-Identifier: Apache-2.0
// The application jitterd watches, named once in the configuration (`application:`), and the
// search for its threads: by what a local user cannot forge, its user (the thread's real user ID)
// and/or its cgroup (a cgroup v2 directory's cgroup.threads), narrowed by task name (fnmatch(3)
// patterns over /proc/PID/task/TID/stat's comm); every one configured must hold. Task names
// alone also work, but any user can start threads of those names (docs/robustness.md). The posture probe uses the same patterns to tell the
// application's tasks from strays. Reads go through a HostReader (fixture trees in tests); a
// thread that exits while being read is skipped. Call from a housekeeping thread: a search by
// name walks every thread of the machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/host_reader.h"

namespace jitterd {

struct ApplicationSettings {
  std::vector<std::string> tasks;  // fnmatch(3) patterns of thread names ("trader*")
  // A cgroup v2 path relative to the cgroup root ("system.slice/trader.service"); "" for none.
  std::string cgroup;
  std::string user;  // a user name or numeric uid; "" for none
  bool named() const { return !tasks.empty() || !cgroup.empty() || !user.empty(); }
  // Identified by names only: anyone can impersonate it.
  bool by_name_only() const { return cgroup.empty() && user.empty(); }
  bool operator==(const ApplicationSettings&) const = default;
};

// `cgroup` as written ("/sys/fs/cgroup/system.slice/x.service", "/system.slice/x.service" or
// "system.slice/x.service") relative to the cgroup root; "" if it climbs out ("..") or is empty.
std::string cgroup_relative_path(std::string_view cgroup);

struct ApplicationThread {
  int pid = 0;  // the thread group (process)
  int tid = 0;
  std::string comm;
  unsigned long long start_ticks = 0;  // /proc stat field 22: with tid, the thread's identity
  int processor = 0;                   // the CPU it last ran on
  std::vector<int> allowed;            // Cpus_allowed_list; empty when unreadable
  std::optional<unsigned> uid;         // the real user ID; nullopt when unreadable
};

// `user` (a name or a numeric uid) as a uid, from the host's user database; nullopt if unknown.
std::optional<unsigned> user_id_of(const std::string& user);

struct ApplicationSearch {
  std::vector<ApplicationThread> threads;  // by pid, then tid
  std::vector<std::string> problems;       // one line each: "cgroup ... not found"
};

// Every thread of the application now. Kernel threads never match. By name, this walks every
// thread of the machine (1,024 CPUs and 6,000 threads: about 100 ms).
ApplicationSearch find_application_threads(const HostReader& host, const ApplicationSettings& application);

// The same among the threads of `pids` only (each process's task directory listed): the cheap
// search between whole walks, which finds a known process's new threads at once. By cgroup, it
// is find_application_threads (reading the group's cgroup.threads is already cheap).
ApplicationSearch find_application_threads_in(const HostReader& host, const ApplicationSettings& application,
                                              const std::vector<int>& pids);

// The watched CPU a thread belongs to: the one CPU it is pinned to when that is watched, else the
// CPU it last ran on when that is watched, else -1 (`watched` sorted).
int watched_cpu_of(const ApplicationThread& thread, const std::vector<int>& watched);

}  // namespace jitterd
