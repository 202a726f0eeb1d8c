// SPDX-License-Identifier: Apache-2.0
#include "host/task_classes.h"

#include <fnmatch.h>

#include <algorithm>

#include "host/cpu_list.h"

namespace jitterd {
namespace {

// Kernel threads bound to one CPU that it cannot do without; N is the CPU.
bool belongs_on(const std::string& comm, int cpu) {
  const std::string n = std::to_string(cpu);
  for (const char* prefix :
       {"ksoftirqd/", "cpuhp/", "migration/", "rcuc/", "idle_inject/", "watchdog/", "irq_work/", "ktimers/"}) {
    if (comm == prefix + n) return true;
  }
  // kworker/N:M and kworker/N:MH (high priority), with a "-workqueue" suffix on newer kernels.
  return fnmatch(("kworker/" + n + ":*").c_str(), comm.c_str(), 0) == 0;
}

}  // namespace

std::string_view to_string(TaskClass task_class) {
  switch (task_class) {
    case TaskClass::jitterd:
      return "jitterd";
    case TaskClass::kernel_percpu:
      return "kernel_percpu";
    case TaskClass::application:
      return "application";
    case TaskClass::stray:
      return "stray";
  }
  return "stray";
}

bool matches_any_pattern(const std::vector<std::string>& patterns, std::string_view comm) {
  const std::string name(comm);
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& pattern) { return fnmatch(pattern.c_str(), name.c_str(), 0) == 0; });
}

TaskClass classify_task(const TaskSeen& task, int cpu, int own_pid, const std::vector<std::string>& application) {
  if (task.pid == own_pid) return TaskClass::jitterd;
  if (task.kernel_thread && belongs_on(task.comm, cpu)) return TaskClass::kernel_percpu;
  if (matches_any_pattern(application, task.comm)) return TaskClass::application;
  return TaskClass::stray;
}

CpuTasks tasks_on_cpu(const std::vector<TaskSeen>& tasks, int cpu, int own_pid,
                      const std::vector<std::string>& application) {
  CpuTasks out;
  for (const TaskSeen& task : tasks) {
    // Only a task that ran on the CPU, or may run there, is classified: a 1,024-CPU machine has
    // thousands of tasks, and this is asked for every CPU of interest.
    if (task.processor != cpu && !has_cpu(task.allowed, cpu)) continue;
    const TaskClass task_class = classify_task(task, cpu, own_pid, application);
    if (task.processor == cpu)
      out.running[static_cast<std::size_t>(task_class)].push_back(&task);
    else if (task_class == TaskClass::stray && has_cpu(task.allowed, cpu))
      out.stray_allowed.push_back(&task);
  }
  return out;
}

}  // namespace jitterd
