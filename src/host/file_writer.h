// SPDX-License-Identifier: Apache-2.0
// The one file writer of jitterd (as host_reader.h holds the one file reader): a file is replaced
// whole, never written in place, and safely in a directory other users may write to (/tmp, a
// shared results folder), where jitterd may run as root.
//
// The target must be a regular file or a new name: a symbolic link (/dev/stdout), a device
// (/dev/full), a FIFO or a directory is refused, never replaced or written through. The data goes
// to a temporary file in the target's directory that no one else can name in advance: an unnamed
// O_TMPFILE, or where the filesystem has none a random name created with O_CREAT | O_EXCL |
// O_NOFOLLOW (a symbolic link planted under any name cannot redirect it). It is fsynced, linked
// under a random name if unnamed, renamed over the target, and the directory fsynced, so a reader
// sees the old file or the whole new one. Plain functions; safe from any thread.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace jitterd {

// How the temporary file is made. Tests ask for the named fallback, which a filesystem without
// O_TMPFILE gets.
enum class TemporaryFile { unnamed_if_possible, named };

// Why `path` cannot be replaced, or nullopt: "is a symbolic link; ...", "is a FIFO, not a regular
// file; ...", or the system's words (e.g. "Permission denied" for its directory). Checked again by
// replace_file; called before a long measurement so that it fails at once.
std::optional<std::string> replace_problem(const std::filesystem::path& path);

// Writes `contents` as the file `path` as above. nullopt when done; otherwise why not, in words
// that follow the path in a message (replace_problem's, or "cannot write a temporary file in
// DIR: No space left on device"). Nothing is left behind on failure.
std::optional<std::string> replace_file(const std::filesystem::path& path, std::string_view contents,
                                        TemporaryFile temporary = TemporaryFile::unnamed_if_possible);

// Writes all of `contents` to the open descriptor (a pipe, standard output), retrying short
// writes. nullopt when done, else strerror's words ("No space left on device", "Broken pipe").
std::optional<std::string> write_all(int fd, std::string_view contents);

}  // namespace jitterd
