// SPDX-License-Identifier: Apache-2.0
#include "host/tasks.h"

#include "host/cpu_list.h"
#include "host/posture_parse.h"
#include "host/text.h"

namespace jitterd {

std::optional<TaskStat> parse_task_stat(std::string_view text) {
  // The name may itself hold ") ", so it ends at the last ')'.
  const std::size_t open = text.find('(');
  const std::size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  TaskStat stat;
  stat.comm = std::string(text.substr(open + 1, close - open - 1));
  // Fields from 3 (state) on, blank-separated: field N is fields[N - 3].
  const std::vector<std::string_view> fields = split_words(text.substr(close + 1));
  if (fields.size() < 39 - 2) return std::nullopt;
  const std::optional<long long> flags = parse_integer(fields[9 - 3]);
  const std::optional<long long> processor = parse_integer(fields[39 - 3]);
  const std::optional<unsigned long long> start = parse_number<unsigned long long>(fields[22 - 3]);
  if (!flags || !processor || !start || *processor < 0 || *processor > max_cpu_number) return std::nullopt;
  stat.start_ticks = *start;
  stat.flags = static_cast<unsigned long>(*flags);
  stat.processor = static_cast<int>(*processor);
  return stat;
}

std::optional<std::string_view> status_field(std::string_view status_text, std::string_view key) {
  for (std::string_view line : split_lines(status_text)) {
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ':') continue;
    line.remove_prefix(key.size() + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    return line;
  }
  return std::nullopt;
}

std::optional<std::vector<int>> parse_cpus_allowed_list(std::string_view status_text) {
  const std::optional<std::string_view> value = status_field(status_text, "Cpus_allowed_list");
  if (!value) return std::nullopt;
  return parse_cpu_list(trim(*value), nullptr);
}

std::optional<unsigned> parse_real_uid(std::string_view status_text) {
  const std::optional<std::string_view> value = status_field(status_text, "Uid");
  if (!value) return std::nullopt;
  const std::vector<std::string_view> ids = split_words(*value);
  return ids.empty() ? std::nullopt : parse_number<unsigned>(ids[0]);
}

// Each task's two files are opened from its process's task directory (openat) into one stack
// buffer: a 1,024-CPU machine has thousands of tasks, and a path walk and a string per file cost
// more than the files.
std::vector<TaskSeen> read_tasks(const HostReader& host) {
  std::vector<TaskSeen> tasks;
  const Directory proc = host.proc_dir("");
  FileBuffer buffer;
  for (int pid : numbered_entries(proc.list(), "")) {
    const Directory task_dir(proc, std::to_string(pid) + "/task");
    for (int tid : numbered_entries(task_dir.list(), "")) {
      const std::string task = std::to_string(tid);
      const std::optional<std::string_view> stat_text = task_dir.read((task + "/stat").c_str(), buffer);
      const std::optional<TaskStat> stat = stat_text ? parse_task_stat(*stat_text) : std::nullopt;
      if (!stat) continue;  // exited meanwhile
      TaskSeen task_seen{pid, tid, stat->comm, stat->processor, {}, is_kernel_thread(*stat), stat->start_ticks,
                         {}};
      if (const std::optional<std::string_view> status = task_dir.read((task + "/status").c_str(), buffer)) {
        task_seen.allowed = parse_cpus_allowed_list(*status).value_or(std::vector<int>{});
        task_seen.uid = parse_real_uid(*status);
      }
      tasks.push_back(std::move(task_seen));
    }
  }
  return tasks;
}

}  // namespace jitterd
