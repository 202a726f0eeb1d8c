// SPDX-License-Identifier: Apache-2.0
// The daemon's side of the loop probes (include/jitterd/loop_probe.h): finds the segments in the
// configured directory and reads each as hostile input. Copy, never trust: a segment is opened
// with O_NOFOLLOW | O_NONBLOCK (a symlink or a FIFO can neither redirect nor block the reader),
// checked with fstat (a regular file, owned by an accepted user, of a size some layout has) and
// copied with pread, twice, into memory jitterd owns; it is never mapped, so a writer that
// truncates it cannot kill the reader with SIGBUS (a short read is a refusal). The copies go
// through the pure parser (watch/loop_segment.h), then through LoopTracker, which remembers each
// segment's last reading to catch counts that go down or jump, a writer that died or stopped, a
// pid reused by another process and a file replaced under the same name.
//
// read_loop_file: pure but for the file it reads; any thread. LoopTracker: one thread (the loop
// probe's, on the probe scheduler).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/host_reader.h"
#include "watch/loop_segment.h"

namespace jitterd {

// At most this many segments are read per scan; the rest are counted as refused (size).
inline constexpr std::size_t kMaxLoopSegments = 256;

struct LoopFileRead {
  std::optional<LoopSegmentReading> reading;
  LoopRefusal reason = LoopRefusal::unreadable;
  std::string message;  // without the path: the caller names the file
  // The file was not there to open (ENOENT): removed since the directory was listed, which an
  // application closing its probe does at any moment; not a refusal.
  bool gone = false;
  dev_t device = 0;
  ino_t inode = 0;
};

// Reads the segment at `path` once (with up to three more copies when two copies disagree, which
// a copy torn by the writer can cause once but a lying writer causes every time).
LoopFileRead read_loop_file(const std::filesystem::path& path, const std::vector<uid_t>& allowed_users);

// The process `pid` as it started at `start_time` (/proc/PID/stat field 22): "" while it lives,
// else why not ("pid 42 is gone", "pid 42 is another process now (started at 900, the writer at
// 100)").
std::string loop_writer_problem(const HostReader& host, std::int32_t pid, std::uint64_t start_time);

struct LoopTrackerSettings {
  std::filesystem::path directory = "/dev/shm";
  std::vector<uid_t> allowed_users;
  std::chrono::nanoseconds stale_after{std::chrono::seconds(10)};
};

// One segment as the last scan left it.
struct LoopState {
  std::filesystem::path file;
  bool refused = false;  // no series: reason and message say why
  LoopRefusal reason = LoopRefusal::unreadable;
  std::string message;         // refused: why; otherwise why it is down ("" when up)
  bool up = false;             // accepted, its writer alive and making progress
  LoopSegmentReading reading;  // the last accepted reading (accepted ones only)
  double last_seen_unix = 0;   // when its heartbeat last moved (0: never)
  double read_unix = 0;        // when that reading was taken
  dev_t device = 0;
  ino_t inode = 0;
};

class LoopTracker {
 public:
  explicit LoopTracker(LoopTrackerSettings settings) : settings_(std::move(settings)) {}

  // Reads every jitterd-loop.* file of the directory once; `now_unix` is the wall clock.
  void scan(const HostReader& host, double now_unix);

  // By file name, after the last scan.
  const std::map<std::string, LoopState>& loops() const { return loops_; }
  // Refusals so far by reason: one per file and reason, not one per scan of a file that stays bad.
  const std::map<LoopRefusal, std::uint64_t>& refusals() const { return refusals_; }
  // One line per change worth the log since the last call: "loop rx0 (/dev/shm/jitterd-loop.rx0):
  // refused (magic): ..."; the caller logs them.
  std::vector<std::string> take_events();
  const LoopTrackerSettings& settings() const { return settings_; }

 private:
  void update(const std::string& name, LoopFileRead read, const HostReader& host, double now_unix);
  void refuse(LoopState& state, LoopRefusal reason, std::string message);

  LoopTrackerSettings settings_;
  std::map<std::string, LoopState> loops_;
  std::map<LoopRefusal, std::uint64_t> refusals_;
  std::vector<std::string> events_;
  std::size_t over_reported_ = 0;  // segments left out at the last scan
};

}  // namespace jitterd
