// SPDX-License-Identifier: Apache-2.0
#include "host/directory.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "host/text.h"

namespace jitterd {

Directory::Directory(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}

Directory::Directory(const Directory& parent, const std::string& name)
    : fd_(parent.open() ? ::openat(parent.fd_, name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1) {}

Directory::~Directory() {
  if (fd_ >= 0) ::close(fd_);
}

Directory::Directory(Directory&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

Directory& Directory::operator=(Directory&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

// One read(2) fills the buffer for nearly every sysfs file; only a file that does not fit goes on
// into the spill string, which keeps what the buffer held.
std::optional<std::string_view> Directory::read(const char* name, FileBuffer& buffer) const {
  if (fd_ < 0) return std::nullopt;
  const int fd = ::openat(fd_, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::size_t used = 0;
  bool spilled = false;
  for (;;) {
    char* into = spilled ? buffer.spill_.data() + used : buffer.bytes_ + used;
    const std::size_t room = (spilled ? buffer.spill_.size() : FileBuffer::kSize) - used;
    const ssize_t n = ::read(fd, into, room);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used < (spilled ? buffer.spill_.size() : FileBuffer::kSize)) continue;
    if (!spilled) {
      buffer.spill_.assign(buffer.bytes_, used);
      spilled = true;
    }
    buffer.spill_.resize(buffer.spill_.size() * 2);
  }
  ::close(fd);
  if (!spilled) return std::string_view(buffer.bytes_, used);
  buffer.spill_.resize(used);
  return std::string_view(buffer.spill_);
}

std::optional<std::string_view> Directory::read_stripped(const char* name, FileBuffer& buffer) const {
  std::optional<std::string_view> text = read(name, buffer);
  if (text && !text->empty() && text->back() == '\n') text->remove_suffix(1);
  return text;
}

std::optional<std::string_view> Directory::read_trimmed(const char* name, FileBuffer& buffer) const {
  const std::optional<std::string_view> text = read(name, buffer);
  if (!text) return std::nullopt;
  return trim(*text);
}

bool Directory::has(const char* name) const {
  struct stat st {};
  return fd_ >= 0 && ::fstatat(fd_, name, &st, 0) == 0;
}

std::vector<std::string> Directory::list() const {
  std::vector<std::string> names;
  if (fd_ < 0) return names;
  // fdopendir owns the descriptor it is given: a duplicate, so this one stays open.
  const int copy = ::openat(fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return names;
  DIR* dir = ::fdopendir(copy);
  if (dir == nullptr) {
    ::close(copy);
    return names;
  }
  while (const dirent* entry = ::readdir(dir)) {
    if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
    names.emplace_back(entry->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace jitterd
