// SPDX-License-Identifier: Apache-2.0
// HostReader is the one door through which jitterd reads the machine: every sysfs and procfs
// file is read relative to a configurable root ("/sys" and "/proc" by default, set from
// --path.sysfs and --path.procfs as in node_exporter), so tests and users can point the daemon at
// a fixture tree. The cgroup v2 hierarchy (cpuset partitions) is read under its own root
// (<sysfs root>/fs/cgroup unless --path.cgroupfs says otherwise) and the kubelet's CPU manager
// state under the kubelet's root directory (--path.kubelet; none: not read). It only reads; it
// never writes or tunes. Immutable after construction, so any
// thread may call it concurrently.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/directory.h"

namespace jitterd {

// The CPU directory under the sysfs root: cpuN/, online, isolated, smt/, ...
inline constexpr std::string_view kSysCpuDir = "devices/system/cpu";

// The whole file at `path` (the one file reader of jitterd: HostReader and the configuration use
// it), or std::nullopt with the reason, as strerror words it, in *error when given.
std::optional<std::string> read_whole_file(const std::filesystem::path& path, std::string* error = nullptr);

// Reads the open `fd` to its end, or until it holds more than `max_bytes` (then stops: the caller
// refuses it); closes `fd`. nullopt with strerror's words in *error on a read error.
std::optional<std::string> read_and_close(int fd, std::size_t max_bytes, std::string* error);

// A file a user names (the configuration, the web configuration and the files it names): only a
// regular file of at most `max_bytes`, refused before reading otherwise, so a FIFO, a device or a
// directory can neither block the reader nor feed it without end. nullopt with the reason ("is a
// FIFO, not a regular file", "is 2000000 bytes, more than the limit of 262144") in *error.
std::optional<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                                             std::string* error = nullptr);

// A file a user names for one command (a baseline to compare, a secret): any kind that reads (a
// pipe from `<(jitterd baseline -o - ...)` included, which waits for its writer), at most
// `max_bytes` of it. A larger regular file is refused before reading, anything else once it has
// given more; *too_big then says so. nullopt with the reason in *error ("No such file or
// directory", "is 2000000 bytes, more than the limit of 262144").
std::optional<std::string> read_file_up_to(const std::filesystem::path& path, std::size_t max_bytes,
                                           std::string* error = nullptr, bool* too_big = nullptr);

// What a file that is not a regular one is, for messages: "a FIFO", "a character device",
// "a symbolic link" (from lstat), ...
std::string_view file_kind(mode_t mode);

class HostReader {
 public:
  // `cgroupfs_root` "": <sysfs_root>/fs/cgroup, where cgroup v2 is mounted on a unified host.
  // `kubelet_root` "": no kubelet state is read (tests built on fixture trees see none).
  explicit HostReader(std::filesystem::path sysfs_root = "/sys", std::filesystem::path procfs_root = "/proc",
                      std::filesystem::path cgroupfs_root = "", std::filesystem::path kubelet_root = "");

  // Contents of <sysfs_root>/<relative> with one trailing newline stripped; std::nullopt if the
  // file is missing or unreadable. An empty file gives "" (e.g. cpu/isolated with none set).
  std::optional<std::string> read_sys(std::string_view relative) const;
  std::optional<std::string> read_proc(std::string_view relative) const;

  // Full paths, for messages that name the file.
  std::filesystem::path sys_path(std::string_view relative) const;
  std::filesystem::path proc_path(std::string_view relative) const;

  bool sys_exists(std::string_view relative) const;

  // Names of the entries of the directory <sysfs_root>/<relative> (or <procfs_root>/<relative>),
  // sorted; empty if it is missing or unreadable.
  std::vector<std::string> list_sys(std::string_view relative) const;
  std::vector<std::string> list_proc(std::string_view relative) const;

  // The directory <sysfs_root>/<relative> (or <procfs_root>/<relative>) opened, for reading many
  // small files in it (host/directory.h); not open() if it is missing.
  Directory sys_dir(std::string_view relative) const;
  Directory proc_dir(std::string_view relative) const;

  // What is wrong with a root ("/x: No such file or directory"), or "" when it looks mounted: the
  // sysfs root holds devices/system/cpu/online, the procfs root is a directory (fixture trees
  // hold only the procfs files a test needs). A wrong --path.sysfs would otherwise read as "no
  // CPU online", a wrong --path.procfs as every /proc file missing.
  std::string sysfs_problem() const;
  std::string procfs_problem() const;

  const std::filesystem::path& cgroupfs_root() const { return cgroupfs_root_; }
  // "" when no kubelet state is to be read.
  const std::filesystem::path& kubelet_root() const { return kubelet_root_; }

 private:
  std::filesystem::path sysfs_root_;
  std::filesystem::path procfs_root_;
  std::filesystem::path cgroupfs_root_;
  std::filesystem::path kubelet_root_;
};

}  // namespace jitterd
