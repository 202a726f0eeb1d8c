// SPDX-License-Identifier: Apache-2.0
#include "host/cpuset_partitions.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "host/cpu_list.h"
#include "host/host_reader.h"
#include "host/text.h"

namespace jitterd {

std::string_view to_string(PartitionKind kind) {
  switch (kind) {
    case PartitionKind::member:
      return "member";
    case PartitionKind::root:
      return "root";
    case PartitionKind::isolated:
      return "isolated";
  }
  return "member";
}

std::optional<PartitionState> parse_partition_state(std::string_view text, std::string* error) {
  const std::string_view trimmed = trim(text);
  const auto refuse = [&]() -> std::optional<PartitionState> {
    if (error)
      *error = "not a partition state (member, root, isolated, or \"root|isolated invalid (reason)\"): \"" +
               printable_excerpt(trimmed) + "\"";
    return std::nullopt;
  };
  PartitionState state;
  std::string_view rest;
  for (PartitionKind kind : {PartitionKind::member, PartitionKind::root, PartitionKind::isolated}) {
    const std::string_view word = to_string(kind);
    if (trimmed.substr(0, word.size()) != word) continue;
    rest = trimmed.substr(word.size());
    if (!rest.empty() && rest.front() != ' ') continue;
    state.kind = kind;
    if (rest.empty()) return state;
    if (kind == PartitionKind::member) return refuse();
    rest = trim(rest);
    if (rest.substr(0, 7) != "invalid") return refuse();
    state.valid = false;
    rest = trim(rest.substr(7));
    if (rest.empty()) return state;
    if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return refuse();
    state.reason = printable(trim(rest.substr(1, rest.size() - 2)));
    return state;
  }
  return refuse();
}

namespace {

// The path as messages and labels show it: relative to the root, '/'-separated, printable.
std::string shown_path(const std::string& relative) { return relative.empty() ? "/" : printable(relative); }

// File `name` of the open directory `dir`, at most kMaxCgroupFileBytes, only a regular file
// (O_NONBLOCK: a FIFO put there cannot hold the reader); nullopt with the reason in *why, and
// *missing set when the file does not exist.
std::optional<std::string> read_at(int dir, const char* name, std::string* why, bool* missing = nullptr) {
  const int fd = ::openat(dir, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0) {
    if (missing) *missing = errno == ENOENT;
    *why = std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *why = "is " + std::string(file_kind(st.st_mode)) + ", not a regular file";
    ::close(fd);
    return std::nullopt;
  }
  std::optional<std::string> text = read_and_close(fd, kMaxCgroupFileBytes, why);
  if (!text || text->size() <= kMaxCgroupFileBytes) return text;
  *why = "holds more than the limit of " + std::to_string(kMaxCgroupFileBytes) + " bytes";
  return std::nullopt;
}

bool lists_cpuset(std::string_view controllers) {
  for (std::string_view word : split_words(controllers))
    if (word == "cpuset") return true;
  return false;
}

struct Walk {
  std::string root;
  CpusetPartitions& out;
  bool cut_deep = false, cut_many = false, cut_partitions = false;

  void problem(const std::string& relative, const char* file, const std::string& why) {
    out.problems.push_back(root + (relative.empty() ? "" : relative) + "/" + file + ": " + why);
  }

  std::optional<std::vector<int>> cpus_at(int dir, const std::string& relative, const char* file) {
    std::string why;
    const std::optional<std::string> text = read_at(dir, file, &why);
    if (!text) {
      problem(relative, file, why);
      return std::nullopt;
    }
    std::optional<std::vector<int>> cpus = parse_cpu_list(*text, &why);
    if (!cpus) problem(relative, file, why);
    return cpus;
  }

  // The partition state of the cgroup open at `dir`; a member adds nothing.
  void read_cgroup(int dir, const std::string& relative) {
    std::string why;
    bool missing = false;
    const std::optional<std::string> text = read_at(dir, "cpuset.cpus.partition", &why, &missing);
    if (!text) {
      if (!missing) problem(relative, "cpuset.cpus.partition", why);
      return;
    }
    const std::optional<PartitionState> state = parse_partition_state(*text, &why);
    if (!state) {
      problem(relative, "cpuset.cpus.partition", why);
      return;
    }
    if (state->kind == PartitionKind::member) return;
    if (out.partitions.size() >= kMaxPartitions) {
      cut_partitions = true;
      return;
    }
    CpusetPartition partition{shown_path(relative), *state, {}, {}};
    partition.cpus = cpus_at(dir, relative, "cpuset.cpus.effective").value_or(std::vector<int>{});
    // cpuset.cpus may be empty in a partition (6.x: it then takes cpuset.cpus.exclusive).
    partition.requested = cpus_at(dir, relative, "cpuset.cpus").value_or(std::vector<int>{});
    out.partitions.push_back(std::move(partition));
  }

  // The children of the directory open at `dir` whose controllers include cpuset, sorted.
  std::vector<std::string> children(int dir, const std::string& relative) {
    std::string why;
    const std::optional<std::string> control = read_at(dir, "cgroup.subtree_control", &why);
    if (!control) {
      problem(relative, "cgroup.subtree_control", why);
      return {};
    }
    if (!lists_cpuset(*control)) return {};
    const int copy = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* stream = copy >= 0 ? ::fdopendir(copy) : nullptr;
    if (stream == nullptr) {
      if (copy >= 0) ::close(copy);
      return {};
    }
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(stream)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      struct stat st {};
      // Never a symbolic link: a fixture or a hostile tree could loop or lead out of the root.
      if (entry->d_type == DT_DIR ||
          (entry->d_type == DT_UNKNOWN && ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISDIR(st.st_mode)))
        names.push_back(name);
    }
    ::closedir(stream);
    std::sort(names.begin(), names.end());
    return names;
  }

  void descend(int dir, const std::string& relative, std::size_t depth) {
    for (const std::string& name : children(dir, relative)) {
      if (depth + 1 > kMaxCgroupDepth) {
        cut_deep = true;
        return;
      }
      if (out.cgroups_seen >= kMaxCgroups) {
        cut_many = true;
        return;
      }
      const int child = ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      if (child < 0) continue;  // gone since the listing: a cgroup removed meanwhile
      ++out.cgroups_seen;
      const std::string path = relative + "/" + name;
      read_cgroup(child, path);
      descend(child, path, depth + 1);
      ::close(child);
    }
  }
};

}  // namespace

CpusetPartitions read_cpuset_partitions(const std::string& root) {
  CpusetPartitions out;
  out.root = root;
  const int dir = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    out.absent_why = root + ": " + std::strerror(errno) + " (no cgroup v2 hierarchy there)";
    return out;
  }
  std::string why;
  const std::optional<std::string> controllers = read_at(dir, "cgroup.controllers", &why);
  if (!controllers || !lists_cpuset(*controllers)) {
    out.absent_why = root + "/cgroup.controllers: " +
                     (controllers ? "no cpuset controller (it is bound to a cgroup v1 hierarchy, or disabled)"
                                  : why + " (not a cgroup v2 hierarchy)");
    ::close(dir);
    return out;
  }
  out.available = true;
  Walk walk{root, out};
  if (const std::optional<std::string> isolated = read_at(dir, "cpuset.cpus.isolated", &why)) {
    std::string error;
    out.isolated = parse_cpu_list(*isolated, &error);
    if (!out.isolated) walk.problem("", "cpuset.cpus.isolated", error);
  }
  walk.descend(dir, "", 0);
  ::close(dir);
  if (walk.cut_deep)
    out.problems.push_back(root + ": cgroups deeper than " + std::to_string(kMaxCgroupDepth) +
                           " levels not read; partitions there are not seen");
  if (walk.cut_many)
    out.problems.push_back(root + ": more than " + std::to_string(kMaxCgroups) +
                           " cgroups with cpuset; the rest not read, partitions there are not seen");
  if (walk.cut_partitions)
    out.problems.push_back(root + ": more than " + std::to_string(kMaxPartitions) +
                           " partitions; the rest not read");
  return out;
}

std::vector<int> isolated_partition_cpus(const CpusetPartitions& partitions) {
  std::vector<int> cpus;
  for (const CpusetPartition& p : partitions.partitions)
    if (p.state.kind == PartitionKind::isolated && p.state.valid) cpus = cpus_union(cpus, p.cpus);
  return cpus;
}

}  // namespace jitterd
