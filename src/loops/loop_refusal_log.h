// SPDX-License-Identifier: Apache-2.0
// How the loop tracker (loops/loop_reader.h) counts and logs the files it refuses, so that a user
// who may write in the loops directory can neither inflate the counts nor flood the log. A file is
// its identity (name, device and inode), not its state: it counts once, under the first
// reason it is refused for, however often it is read or its reason changes, and again only as a
// new file. Its log line comes when its reason is new to it, and at most kLoopLogLinesPerMinute
// lines a minute go out per reason; the rest are counted (jitterd_loop_log_lines_suppressed_total)
// and summed up in one line per reason when the minute ends. What it remembers is one entry per
// refused file still in the directory (about 100 bytes each), pruned at the end of every scan.
// One thread (the tracker's).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "loops/loop_segment.h"

namespace jitterd {

inline constexpr std::uint64_t kLoopLogLinesPerMinute = 10;

// A file's identity: its name, device and inode. A file rewritten in place is the same file; a
// new file, or one under a new name, is another (a file removed and made again under the same name
// between two scans, in the same inode, is the same to it).
struct LoopFileId {
  dev_t device = 0;
  ino_t inode = 0;
  std::size_t name = 0;  // the name's hash
  bool operator==(const LoopFileId&) const = default;
};

inline std::size_t loop_name_hash(const std::string& name) { return std::hash<std::string>()(name); }

struct LoopFileIdHash {
  std::size_t operator()(const LoopFileId& id) const {
    return std::hash<std::uint64_t>()(static_cast<std::uint64_t>(id.inode) * 0x9e3779b97f4a7c15ULL ^
                                      static_cast<std::uint64_t>(id.device)) ^
           id.name;
  }
};

class LoopRefusalLog {
 public:
  // `file` was in the directory at this scan (refused or not): what is known of it is kept.
  void seen(LoopFileId file);
  // `file` was refused for `reason`, `line` saying which file and why; at `now_unix`.
  void refused(LoopFileId file, LoopRefusal reason, std::string line, double now_unix);
  // Forgets the files not seen since the last call, and closes the minute when it is over.
  void end_scan(double now_unix);

  // Refused files so far, by reason (each file once).
  const std::map<LoopRefusal, std::uint64_t>& counts() const { return counts_; }
  // Log lines left out so far, by reason.
  const std::map<LoopRefusal, std::uint64_t>& suppressed() const { return suppressed_; }
  // The lines for the log since the last call.
  std::vector<std::string> take_lines();

 private:
  struct Known {
    LoopRefusal reason;
    std::uint64_t scan;  // the last scan that saw it
  };
  void log(LoopRefusal reason, std::string line, double now_unix);
  void close_minute(double now_unix);

  std::unordered_map<LoopFileId, Known, LoopFileIdHash> files_;
  std::uint64_t scan_ = 1;
  std::map<LoopRefusal, std::uint64_t> counts_, suppressed_;
  std::map<LoopRefusal, std::uint64_t> logged_in_minute_, left_out_in_minute_;
  double minute_start_ = 0;
  std::vector<std::string> lines_;
};

}  // namespace jitterd
