// SPDX-License-Identifier: Apache-2.0
// An open sysfs or procfs directory and the files in it, read with openat(2) into a caller's
// fixed buffer: the reader for the thousands of small files a large machine's posture and its
// samplers' threads have (a 1,024-CPU posture run reads about 37,000), where walking the whole path,
// building a std::filesystem::path and a std::string per file cost more than the file itself.
// HostReader stays the door for single files; a Directory is opened through it (so it honours
// --path.sysfs/--path.procfs) and used by one thread at a time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jitterd {

// Where a Directory reads a file to: a stack-sized buffer, and a string for a file larger than
// it (read in full there, never cut). A view read() returns lives until the next read().
class FileBuffer {
 public:
  static constexpr std::size_t kSize = 4096;

 private:
  friend class Directory;
  char bytes_[kSize];
  std::string spill_;
};

class Directory {
 public:
  // Not open: every read gives nullopt, list() nothing.
  Directory() = default;
  // Opens `path` (O_DIRECTORY); not open() if it is missing, unreadable or not a directory.
  explicit Directory(const std::string& path);
  // The subdirectory `name` of `parent` (openat), or not open().
  Directory(const Directory& parent, const std::string& name);
  ~Directory();
  Directory(Directory&& other) noexcept;
  Directory& operator=(Directory&& other) noexcept;
  Directory(const Directory&) = delete;
  Directory& operator=(const Directory&) = delete;

  bool open() const { return fd_ >= 0; }

  // The whole of file `name` in this directory, in `buffer`, or nullopt if it is missing or
  // unreadable (a directory, say). An empty file gives "". Nothing is stripped.
  std::optional<std::string_view> read(const char* name, FileBuffer& buffer) const;
  // The same with one trailing newline stripped, as HostReader::read_sys gives a file.
  std::optional<std::string_view> read_stripped(const char* name, FileBuffer& buffer) const;
  // The same with surrounding blanks trimmed (sysfs and procfs end their values with a newline).
  std::optional<std::string_view> read_trimmed(const char* name, FileBuffer& buffer) const;
  bool has(const char* name) const;
  // The names of the entries, "." and ".." left out, sorted; empty if not open.
  std::vector<std::string> list() const;

 private:
  int fd_ = -1;
};

}  // namespace jitterd
