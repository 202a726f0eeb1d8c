// SPDX-License-Identifier: Apache-2.0
#include "host/file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>

#include "host/descriptor.h"
#include "host/host_reader.h"
#include "host/text.h"

namespace jitterd {
namespace {

constexpr const char* kOnlyRegular = "jitterd replaces only a regular file or writes a new one";

// ".NAME.0123456789abcdef.tmp": hidden, recognisable, and not guessable (64 random bits), so no
// one can plant anything under it beforehand. NAME is cut to stay within NAME_MAX.
std::string random_temporary_name(const std::string& name) {
  static thread_local std::random_device device;
  const std::uint64_t bits = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  char hex[17];
  for (int i = 0; i < 16; ++i) hex[i] = "0123456789abcdef"[(bits >> (4 * i)) & 0xf];
  hex[16] = '\0';
  return "." + name.substr(0, 200) + "." + hex + ".tmp";
}

// Runs `attempt` with fresh random names until it does not fail with EEXIST (a name taken: by
// chance, or by someone guessing); gives the name used, or nullopt with errno set.
template <typename Attempt>
std::optional<std::string> with_fresh_name(const std::string& name, Attempt attempt) {
  for (int tries = 0; tries < 64; ++tries) {
    std::string candidate = random_temporary_name(name);
    if (attempt(candidate)) return candidate;
    if (errno != EEXIST) return std::nullopt;
  }
  return std::nullopt;
}

// Gives the unnamed file a (random) name in the directory: through /proc/self/fd, which needs no
// privilege, else AT_EMPTY_PATH (CAP_DAC_READ_SEARCH before Linux 6.10) where /proc is absent.
bool link_unnamed(int fd, int directory, const std::string& temporary) {
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, self.c_str(), directory, temporary.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
  if (errno == EEXIST) return false;
  return ::linkat(fd, "", directory, temporary.c_str(), AT_EMPTY_PATH) == 0;
}

struct Split {
  std::filesystem::path directory;
  std::string name;
};
Split split(const std::filesystem::path& path) {
  std::filesystem::path directory = path.parent_path();
  if (directory.empty()) directory = ".";
  return {directory, path.filename().string()};
}

}  // namespace

std::optional<std::string> replace_problem(const std::filesystem::path& path) {
  const Split parts = split(path);
  if (parts.name.empty() || parts.name == "." || parts.name == "..") return "names a directory, not a file";
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISREG(st.st_mode)) return std::nullopt;
    return "is " + std::string(file_kind(st.st_mode)) + ", not a regular file: " + kOnlyRegular;
  }
  if (errno != ENOENT) return errno_text(errno);
  // A new file: its directory must be there.
  if (::stat(parts.directory.c_str(), &st) != 0)
    return "its directory " + parts.directory.string() + ": " + errno_text(errno);
  if (!S_ISDIR(st.st_mode)) return "its directory " + parts.directory.string() + ": " + errno_text(ENOTDIR);
  return std::nullopt;
}

std::optional<std::string> replace_file(const std::filesystem::path& path, std::string_view contents,
                                        TemporaryFile temporary) {
  if (std::optional<std::string> problem = replace_problem(path)) return problem;
  const Split parts = split(path);
  const std::filesystem::path& directory_path = parts.directory;
  const std::string& name = parts.name;
  const Descriptor directory(::open(directory_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.get() < 0)
    return "cannot open its directory " + directory_path.string() + ": " + errno_text(errno);
  const auto cannot = [&](const char* what, int error) {
    return std::string("cannot ") + what + " in " + directory_path.string() + ": " + errno_text(error);
  };
  // The file: unnamed while written (O_TMPFILE), else created under a random name.
  std::optional<std::string> named;
  int fd = -1;
  if (temporary == TemporaryFile::unnamed_if_possible)
    fd = ::openat(directory.get(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (fd < 0 && temporary == TemporaryFile::unnamed_if_possible && errno != EOPNOTSUPP && errno != EISDIR &&
      errno != EINVAL)
    return cannot("create a temporary file", errno);
  if (fd < 0) {
    named = with_fresh_name(name, [&](const std::string& candidate) {
      fd =
          ::openat(directory.get(), candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      return fd >= 0;
    });
    if (!named) return cannot("create a temporary file", errno);
  }
  const Descriptor file(fd);
  const auto discard = [&](std::string why) {
    if (named) ::unlinkat(directory.get(), named->c_str(), 0);
    return why;
  };
  if (std::optional<std::string> error = write_all(file.get(), contents))
    return discard("cannot write a temporary file in " + directory_path.string() + ": " + *error);
  if (::fsync(file.get()) != 0) return discard(cannot("write a temporary file", errno));
  if (!named) {
    named = with_fresh_name(
        name, [&](const std::string& candidate) { return link_unnamed(file.get(), directory.get(), candidate); });
    if (!named) return cannot("name the temporary file", errno);
  }
  if (::renameat(directory.get(), named->c_str(), directory.get(), name.c_str()) != 0)
    return discard("cannot rename " + *named + " to it: " + errno_text(errno));
  ::fsync(directory.get());  // the rename itself durable; a failure here loses nothing written
  return std::nullopt;
}

std::optional<std::string> write_all(int fd, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t n = ::write(fd, contents.data(), contents.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_text(errno);
    if (n == 0) return errno_text(EIO);
    contents.remove_prefix(static_cast<std::size_t>(n));
  }
  return std::nullopt;
}

}  // namespace jitterd
