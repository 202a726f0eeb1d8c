// SPDX-License-Identifier: Apache-2.0
#include "host/host_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <utility>

namespace jitterd {
namespace {

// A leading '/' would make path::operator/ discard the root and read the live machine.
std::filesystem::path join(const std::filesystem::path& root, std::string_view relative) {
  while (!relative.empty() && relative.front() == '/') relative.remove_prefix(1);
  return root / relative;
}

// One trailing newline stripped: sysfs and procfs end their single values with one.
std::optional<std::string> read_stripped(const std::filesystem::path& path) {
  std::optional<std::string> contents = read_whole_file(path);
  if (contents && !contents->empty() && contents->back() == '\n') contents->pop_back();
  return contents;
}

std::vector<std::string> list_directory(const std::filesystem::path& path) {
  std::vector<std::string> names;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::optional<std::string> read_and_close(int fd, std::size_t max_bytes, std::string* error) {
  std::string contents;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      contents.append(buffer, static_cast<size_t>(n));
      if (contents.size() > max_bytes) break;
    } else if (n == 0) {
      break;
    } else if (errno != EINTR && errno != EAGAIN) {
      const int saved = errno;
      ::close(fd);
      if (error) *error = std::strerror(saved);
      return std::nullopt;
    }
  }
  ::close(fd);
  return contents;
}

// Plain read(2) rather than iostreams: sysfs files report a size of 4096 whatever they hold, a
// directory must read as "unreadable", and an empty file must read as "" rather than as a failure.
std::optional<std::string> read_whole_file(const std::filesystem::path& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (error) *error = std::strerror(errno);
    return std::nullopt;
  }
  return read_and_close(fd, std::string::npos - 1, error);
}

std::optional<std::string> read_file_up_to(const std::filesystem::path& path, std::size_t max_bytes,
                                           std::string* error, bool* too_big) {
  const auto refuse = [&](std::string reason, bool size) -> std::optional<std::string> {
    if (error) *error = std::move(reason);
    if (too_big) *too_big = size;
    return std::nullopt;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return refuse(std::strerror(errno), false);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return refuse(
        "is " + std::to_string(st.st_size) + " bytes, more than the limit of " + std::to_string(max_bytes), true);
  }
  std::string reason;
  std::optional<std::string> contents = read_and_close(fd, max_bytes, &reason);
  if (!contents) return refuse(reason, false);
  if (contents->size() > max_bytes)
    return refuse("holds more than the limit of " + std::to_string(max_bytes) + " bytes", true);
  return contents;
}

std::string_view file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

// O_NONBLOCK: opening a FIFO with no writer would otherwise wait for one before fstat could say
// what it is. A file that grows while read is cut at max_bytes + 1 and refused.
std::optional<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes,
                                             std::string* error) {
  const auto refuse = [&](std::string reason) -> std::optional<std::string> {
    if (error) *error = std::move(reason);
    return std::nullopt;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return refuse(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int saved = errno;
    ::close(fd);
    return refuse(std::strerror(saved));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return refuse("is " + std::string(file_kind(st.st_mode)) + ", not a regular file");
  }
  const auto too_big = [&](std::uintmax_t size) {
    return "is " + std::to_string(size) + " bytes, more than the limit of " + std::to_string(max_bytes);
  };
  if (static_cast<std::uintmax_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return refuse(too_big(static_cast<std::uintmax_t>(st.st_size)));
  }
  std::optional<std::string> contents = read_and_close(fd, max_bytes, error);
  if (contents && contents->size() > max_bytes) return refuse(too_big(contents->size()) + " (it grew while read)");
  return contents;
}

namespace {

std::string directory_problem(const std::filesystem::path& root) {
  std::error_code ec;
  const auto status = std::filesystem::status(root, ec);
  if (ec) return root.string() + ": " + ec.message();
  if (!std::filesystem::is_directory(status)) return root.string() + ": not a directory";
  return "";
}

}  // namespace

std::string HostReader::sysfs_problem() const {
  if (std::string problem = directory_problem(sysfs_root_); !problem.empty()) return problem;
  std::string reason;
  if (!read_whole_file(sys_path("devices/system/cpu/online"), &reason))
    return sys_path("devices/system/cpu/online").string() + ": " + reason;
  return "";
}

std::string HostReader::procfs_problem() const { return directory_problem(procfs_root_); }

HostReader::HostReader(std::filesystem::path sysfs_root, std::filesystem::path procfs_root,
                       std::filesystem::path cgroupfs_root, std::filesystem::path kubelet_root)
    : sysfs_root_(std::move(sysfs_root)),
      procfs_root_(std::move(procfs_root)),
      cgroupfs_root_(cgroupfs_root.empty() ? sysfs_root_ / "fs" / "cgroup" : std::move(cgroupfs_root)),
      kubelet_root_(std::move(kubelet_root)) {}

std::optional<std::string> HostReader::read_sys(std::string_view relative) const {
  return read_stripped(sys_path(relative));
}

std::optional<std::string> HostReader::read_proc(std::string_view relative) const {
  return read_stripped(proc_path(relative));
}

std::filesystem::path HostReader::sys_path(std::string_view relative) const { return join(sysfs_root_, relative); }

std::filesystem::path HostReader::proc_path(std::string_view relative) const {
  return join(procfs_root_, relative);
}

bool HostReader::sys_exists(std::string_view relative) const {
  std::error_code ec;
  return std::filesystem::exists(sys_path(relative), ec);
}

std::vector<std::string> HostReader::list_sys(std::string_view relative) const {
  return list_directory(sys_path(relative));
}

std::vector<std::string> HostReader::list_proc(std::string_view relative) const {
  return list_directory(proc_path(relative));
}

Directory HostReader::sys_dir(std::string_view relative) const { return Directory(sys_path(relative).string()); }

Directory HostReader::proc_dir(std::string_view relative) const { return Directory(proc_path(relative).string()); }

}  // namespace jitterd
