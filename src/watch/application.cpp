// SPDX-License-Identifier: Apache-2.0
#include "watch/application.h"

#include <pwd.h>

#include <algorithm>
#include <charconv>

#include "host/cpu_list.h"
#include "host/task_classes.h"
#include "host/tasks.h"
#include "host/text.h"

namespace jitterd {
namespace {

constexpr std::string_view kCgroupRoot = "/sys/fs/cgroup";

// The Tgid of a /proc/TID/status text, or 0.
int thread_group_of(std::string_view status) {
  const std::optional<std::string_view> value = status_field(status, "Tgid");
  return value ? parse_number<int>(trim(*value)).value_or(0) : 0;
}

// One thread read from `dir`: <procfs>/PID/task/TID, or <procfs>/TID when the process is not
// known (a thread's directory exists there though /proc lists only processes); nullopt when it
// is gone or a kernel thread.
std::optional<ApplicationThread> read_thread(const HostReader& host, int tid, const std::string& dir) {
  const std::optional<std::string> stat_text = host.read_proc(dir + "/stat");
  const std::optional<TaskStat> stat = stat_text ? parse_task_stat(*stat_text) : std::nullopt;
  const std::optional<std::string> status = host.read_proc(dir + "/status");
  if (!stat || !status || is_kernel_thread(*stat)) return std::nullopt;
  ApplicationThread thread{thread_group_of(*status), tid, stat->comm, stat->start_ticks, stat->processor, {}, {}};
  thread.allowed = parse_cpus_allowed_list(*status).value_or(std::vector<int>{});
  thread.uid = parse_real_uid(*status);
  return thread;
}

// The configured user's uid: `wanted` is false when no user is configured; an unknown user is a
// problem and matches no thread (the search never falls back to names alone).
struct UserFilter {
  bool wanted = false;
  std::optional<unsigned> uid;
  bool admits(const std::optional<unsigned>& thread_uid) const { return !wanted || (uid && thread_uid == uid); }
};

// Reads the threads named by `words` (thread numbers, in any order) from <procfs>/`dir`TID and
// adds the application's to `search`, by tid: those of process `pid` when given, of the user and
// with a name as configured.
template <class Words>
void add_threads(const HostReader& host, const ApplicationSettings& application, const UserFilter& user,
                 const Words& words, const std::string& dir, std::optional<int> pid, ApplicationSearch& search) {
  std::vector<int> tids;
  for (const auto& word : words)
    if (const auto tid = parse_number<int>(word); tid && *tid > 0) tids.push_back(*tid);
  std::sort(tids.begin(), tids.end());
  for (int tid : tids) {
    std::optional<ApplicationThread> thread = read_thread(host, tid, dir + std::to_string(tid));
    if (!thread || (pid && thread->pid != *pid) || !user.admits(thread->uid)) continue;
    if (!application.tasks.empty() && !matches_any_pattern(application.tasks, thread->comm)) continue;
    search.threads.push_back(std::move(*thread));
  }
}

UserFilter user_filter(const ApplicationSettings& application, ApplicationSearch& search) {
  UserFilter filter{!application.user.empty(), std::nullopt};
  if (!filter.wanted) return filter;
  filter.uid = user_id_of(application.user);
  if (!filter.uid)
    search.problems.push_back("application: user " + printable(application.user) +
                              ": no such user on this host: no thread is the application's");
  return filter;
}

ApplicationSearch search_cgroup(const HostReader& host, const ApplicationSettings& application) {
  ApplicationSearch search;
  const UserFilter user = user_filter(application, search);
  const std::string relative = cgroup_relative_path(application.cgroup);
  const std::string file = "fs/cgroup/" + relative + (relative.empty() ? "" : "/") + "cgroup.threads";
  const std::optional<std::string> text = relative.empty() ? std::nullopt : host.read_sys(file);
  if (!text) {
    search.problems.push_back("application: cgroup " + printable(application.cgroup) + ": " +
                              host.sys_path(file).string() + " cannot be read (no such cgroup v2 group?)");
    return search;
  }
  add_threads(host, application, user, split_words(*text), "", std::nullopt, search);
  return search;
}

}  // namespace

std::string cgroup_relative_path(std::string_view cgroup) {
  if (cgroup.substr(0, kCgroupRoot.size()) == kCgroupRoot &&
      (cgroup.size() == kCgroupRoot.size() || cgroup[kCgroupRoot.size()] == '/'))
    cgroup.remove_prefix(kCgroupRoot.size());
  while (!cgroup.empty() && cgroup.front() == '/') cgroup.remove_prefix(1);
  while (!cgroup.empty() && cgroup.back() == '/') cgroup.remove_suffix(1);
  std::string out;
  for (std::size_t at = 0; at <= cgroup.size();) {
    const std::size_t end = std::min(cgroup.find('/', at), cgroup.size());
    const std::string_view part = cgroup.substr(at, end - at);
    if (part == ".." || part == ".") return {};
    if (!part.empty()) out += (out.empty() ? "" : "/") + std::string(part);
    at = end + 1;
  }
  return out;
}

std::optional<unsigned> user_id_of(const std::string& user) {
  unsigned number = 0;
  const auto [end, error] = std::from_chars(user.data(), user.data() + user.size(), number);
  if (!user.empty() && error == std::errc() && end == user.data() + user.size()) return number;
  struct passwd entry {};
  struct passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
    return std::nullopt;
  return found->pw_uid;
}

ApplicationSearch find_application_threads(const HostReader& host, const ApplicationSettings& application) {
  if (!application.cgroup.empty()) return search_cgroup(host, application);
  ApplicationSearch search;
  if (!application.named()) return search;
  const UserFilter user = user_filter(application, search);
  if (user.wanted && !user.uid) return search;
  for (TaskSeen& task : read_tasks(host)) {
    if (task.kernel_thread || !user.admits(task.uid)) continue;
    if (!application.tasks.empty() && !matches_any_pattern(application.tasks, task.comm)) continue;
    search.threads.push_back({task.pid, task.tid, std::move(task.comm), task.start_ticks, task.processor,
                              std::move(task.allowed), task.uid});
  }
  return search;
}

ApplicationSearch find_application_threads_in(const HostReader& host, const ApplicationSettings& application,
                                              const std::vector<int>& pids) {
  if (!application.cgroup.empty()) return search_cgroup(host, application);
  ApplicationSearch search;
  const UserFilter user = user_filter(application, search);
  for (int pid : pids) {
    const std::string dir = std::to_string(pid) + "/task";
    add_threads(host, application, user, host.list_proc(dir), dir + "/", pid, search);
  }
  return search;
}

int watched_cpu_of(const ApplicationThread& thread, const std::vector<int>& watched) {
  if (thread.allowed.size() == 1) return has_cpu(watched, thread.allowed.front()) ? thread.allowed.front() : -1;
  return has_cpu(watched, thread.processor) ? thread.processor : -1;
}

}  // namespace jitterd
