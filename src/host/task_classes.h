// SPDX-License-Identifier: Apache-2.0
// Who runs where: the tasks procfs shows (host/tasks.h) sorted, for one CPU, into jitterd's own,
// the per-CPU kernel threads that belong on that CPU (ksoftirqd/N, cpuhp/N, migration/N, rcuc/N,
// kworker/N:*, ...), the application's (names matching `expect.application_tasks`), and strays:
// everything else, which an isolated CPU should not see. Pure functions; any thread.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "host/tasks.h"

namespace jitterd {

enum class TaskClass { jitterd, kernel_percpu, application, stray };
inline constexpr std::array<TaskClass, 4> kTaskClasses{TaskClass::jitterd, TaskClass::kernel_percpu,
                                                       TaskClass::application, TaskClass::stray};
std::string_view to_string(TaskClass task_class);  // "jitterd", "kernel_percpu", "application", "stray"

// Whether `comm` matches one of the fnmatch(3) patterns (`expect.application_tasks`,
// `watch.application.tasks`).
bool matches_any_pattern(const std::vector<std::string>& patterns, std::string_view comm);

// `own_pid`: jitterd's process; `application`: fnmatch(3) patterns of task names.
TaskClass classify_task(const TaskSeen& task, int cpu, int own_pid, const std::vector<std::string>& application);

struct CpuTasks {
  std::array<std::vector<const TaskSeen*>, 4> running;  // by class: last ran on the CPU
  std::vector<const TaskSeen*> stray_allowed;           // strays allowed there that last ran elsewhere
};

CpuTasks tasks_on_cpu(const std::vector<TaskSeen>& tasks, int cpu, int own_pid,
                      const std::vector<std::string>& application);

}  // namespace jitterd
