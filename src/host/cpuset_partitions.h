// SPDX-License-Identifier: Apache-2.0
// cgroup v2 cpuset partitions: the run-time way to isolate CPUs (Linux 6.7+; the kernel's
// cgroup-v2.rst, "cpuset.cpus.partition"). A cgroup whose cpuset.cpus.partition reads `root` owns
// its CPUs exclusively; `isolated` also takes them out of the scheduler's load balancing (and,
// since 6.x, out of the unbound workqueues and housekeeping). The kernel marks a partition it
// cannot honour `root invalid (reason)` / `isolated invalid (reason)`, and its CPUs then go back
// to the parent. The root cgroup's cpuset.cpus.isolated lists every isolated partition's CPUs.
// The walk is bounded (depth, cgroups, bytes per file), follows no symbolic link, opens no FIFO
// for long, and turns every file it cannot use into one line naming it. The parse function is
// pure; read_cpuset_partitions never throws. Safe from any thread (each call its own reading).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitterd {

enum class PartitionKind { member, root, isolated };
std::string_view to_string(PartitionKind kind);  // "member", "root", "isolated"

struct PartitionState {
  PartitionKind kind = PartitionKind::member;
  bool valid = true;
  std::string reason;  // the kernel's words in "(...)" of an invalid state; "" when none given
  bool operator==(const PartitionState&) const = default;
};

// "member", "root", "isolated", "root invalid (Cpu list in cpuset.cpus not exclusive)",
// "isolated invalid (...)" (older kernels: "root invalid" without a reason). Surrounding blanks
// are ignored; anything else is std::nullopt with *error (if given) quoting the text.
std::optional<PartitionState> parse_partition_state(std::string_view text, std::string* error);

// One cgroup that is a partition (member cgroups are left out).
struct CpusetPartition {
  std::string path;  // relative to the cgroup root, starting with '/': "/rt.slice/app"; printable()
  PartitionState state;
  std::vector<int> cpus;       // cpuset.cpus.effective (empty for an invalid one: the parent has them)
  std::vector<int> requested;  // cpuset.cpus: what the partition asked for
  bool operator==(const CpusetPartition&) const = default;
};

struct CpusetPartitions {
  std::string root;  // the cgroup root read, for messages and fixes
  // Whether the root is a cgroup v2 hierarchy with the cpuset controller (cgroup.controllers
  // lists it); when false, `absent_why` says why and nothing else is read.
  bool available = false;
  std::string absent_why;
  std::optional<std::vector<int>> isolated;  // the root's cpuset.cpus.isolated (6.9+), where present
  std::vector<CpusetPartition> partitions;   // in walk order: parents before children, names sorted
  std::size_t cgroups_seen = 0;
  std::vector<std::string> problems;  // one line per unreadable or malformed file, naming its path
  bool operator==(const CpusetPartitions&) const = default;
};

// Bounds of the walk: deeper or more cgroups are not read (one problem line says so).
inline constexpr std::size_t kMaxCgroupDepth = 32;
inline constexpr std::size_t kMaxCgroups = 16384;
// Partitions kept (a machine has a few; each holds two CPU lists).
inline constexpr std::size_t kMaxPartitions = 256;
// cpuset files list CPUs; 8,192 CPUs written one by one ("0,2,4,...") take about 40 KB.
inline constexpr std::size_t kMaxCgroupFileBytes = 64 * 1024;

// Walks the cgroup v2 tree at `root` (descending only where cgroup.subtree_control enables cpuset,
// the only cgroups whose children have cpuset files).
CpusetPartitions read_cpuset_partitions(const std::string& root);

// The CPUs of the valid isolated partitions, sorted.
std::vector<int> isolated_partition_cpus(const CpusetPartitions& partitions);

}  // namespace jitterd
