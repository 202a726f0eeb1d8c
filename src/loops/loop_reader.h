// SPDX-License-Identifier: Apache-2.0
// The daemon's side of the loop probes (include/jitterd/loop_probe.h): finds the segments in the
// configured directory and reads each as hostile input. Copy, never trust: a segment is opened
// with O_NOFOLLOW | O_NONBLOCK (a symlink or a FIFO can neither redirect nor block the reader),
// checked with fstat (a regular file, owned by an accepted user, of a size some layout has) and
// copied with pread, twice, into memory jitterd owns; it is never mapped, so a writer that
// truncates it cannot kill the reader with SIGBUS (a short read is a refusal). The copies go
// through the pure parser (loops/loop_segment.h), then through LoopTracker, which remembers each
// segment's last reading to catch counts that go down or jump, a writer that died or stopped, a
// pid reused by another process and a file replaced under the same name.
//
// Files of users not accepted are recognised by their owner before anything else and never read
// (nor tracked: they are counted and logged as the refusal log allows); a loop once accepted
// keeps its series until its writer closes it (the file removed) or it is forgotten (its writer
// gone for forget_after): lost any other way (refused, unreadable, another user's now) it is down.
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
#include <unordered_map>
#include <vector>

#include "host/host_reader.h"
#include "loops/loop_refusal_log.h"
#include "loops/loop_segment.h"

namespace jitterd {

// At most this many files of accepted users are tracked (accepted loops first, then refused
// files, then new ones); the rest are refused (too_many). Files of users not accepted never count
// against it, and a loop once accepted is never left out for a newer file.
inline constexpr std::size_t kMaxLoopSegments = 256;

// Bytes of ring entries a scan copies at most, over every file and both copies: each file's share
// is this over the files read (the whole largest ring for one loop, 8,192 entries each for 256).
// With the headers and histograms (16.6 KB a file) and the window slots since the last reading,
// a scan of 256 loops reads at most about 37 MB (docs/loops.md, "Bounds").
inline constexpr std::uint64_t kLoopRingBytesPerScan = 32ULL << 20;

struct LoopFileRead {
  std::optional<LoopSegmentReading> reading;
  LoopRefusal reason = LoopRefusal::unreadable;
  std::string message;  // without the path: the caller names the file
  // The file was not there to open (ENOENT): removed since the directory was listed, which an
  // application closing its probe does at any moment; not a refusal.
  bool gone = false;
  dev_t device = 0;  // the file opened (0 when it could not be)
  ino_t inode = 0;
  uid_t owner = 0;
  std::uint64_t bytes_read = 0;  // what the copies took
};

// What a reading copies of a segment beyond its header and histogram (docs/loops.md, "Bounds").
struct LoopReadPlan {
  // The ring entries from this sequence number on (the head at the last reading of the same
  // file; UINT64_MAX: none, the first reading), at most `ring_bytes` of them (the newest) per copy.
  std::uint64_t ring_since = 0;
  std::uint64_t ring_bytes = ~std::uint64_t{0};
  // The window max slots from this id on (the heartbeat's at the last reading), and none older
  // than `window_ns` before the heartbeat (0: every slot the segment holds).
  std::uint64_t slots_from_id = 0;
  std::uint64_t window_ns = 0;
};

// Reads the segment at `path` once (with up to three more copies when two copies disagree, which
// a copy torn by the writer can cause once but a lying writer causes every time). Nothing of a
// file is read before it is known to be a regular file with one link, owned by an accepted user.
LoopFileRead read_loop_file(const std::filesystem::path& path, const std::vector<uid_t>& allowed_users,
                            const LoopReadPlan& plan = {});

// Why a file owned by `uid` is refused: "" where `allowed_users` holds it.
std::string loop_owner_problem(const std::vector<uid_t>& allowed_users, uid_t uid);

// The process `pid` as it started at `start_time` (/proc/PID/stat field 22): "" while it lives,
// else why not ("pid 42 is gone", "pid 42 is another process now (started at 900, the writer at
// 100)").
std::string loop_writer_problem(const HostReader& host, std::int32_t pid, std::uint64_t start_time);

struct LoopTrackerSettings {
  std::filesystem::path directory = "/dev/shm";
  std::vector<uid_t> allowed_users;
  std::chrono::nanoseconds stale_after{std::chrono::seconds(10)};
  // A loop whose writer is gone (its pid gone or another process's) is down this long, then
  // forgotten: its series go and its file is removed where jitterd may (docs/loops.md).
  std::chrono::nanoseconds forget_after{std::chrono::minutes(15)};
  std::size_t max_loops = kMaxLoopSegments;
  // The window a loop's slots are kept for (sampler.window; 0: as many as its segment holds).
  std::chrono::nanoseconds window{0};
  // Set: a loop's name must begin with its owner's name here and a dot (loops.owner_prefix); an
  // owner missing from the map goes by its uid.
  std::optional<std::map<uid_t, std::string>> owner_names{};
};

// One segment as the last scan left it.
struct LoopState {
  std::filesystem::path file;
  bool refused = false;  // the last reading was refused: reason and message say why
  LoopRefusal reason = LoopRefusal::unreadable;
  // An accepted reading is held (reading): the loop has series, down while refused. A file
  // refused since it was found has none.
  bool accepted = false;
  std::string message;          // refused: why; otherwise why it is down ("" when up)
  bool up = false;              // accepted, read now, its writer alive and making progress
  LoopSegmentReading reading;   // the last accepted reading (accepted ones only)
  double last_seen_unix = 0;    // when its heartbeat last moved (0: never)
  double read_unix = 0;         // when that reading was taken
  double writer_gone_unix = 0;  // since when its writer is known gone (0: it lives, or not accepted)
  dev_t device = 0;             // of the accepted reading
  ino_t inode = 0;
};

class LoopTracker {
 public:
  explicit LoopTracker(LoopTrackerSettings settings) : settings_(std::move(settings)) {}

  // Reads every jitterd-loop.* file of the directory once; `now_unix` is the wall clock. Throws
  // std::runtime_error naming the directory when it cannot be listed (the probe fails).
  void scan(const HostReader& host, double now_unix);

  // By file name, after the last scan.
  const std::map<std::string, LoopState>& loops() const { return loops_; }
  // Refused files so far by reason: each file once (loops/loop_refusal_log.h).
  const std::map<LoopRefusal, std::uint64_t>& refusals() const { return log_.counts(); }
  // Refusal log lines left out so far by reason (at most kLoopLogLinesPerMinute a minute each).
  const std::map<LoopRefusal, std::uint64_t>& log_lines_suppressed() const { return log_.suppressed(); }
  // Bytes the last scan copied (kLoopRingBytesPerScan bounds the ring entries among them).
  std::uint64_t bytes_read() const { return bytes_read_; }
  // Loops forgotten so far (their writers gone for forget_after).
  std::uint64_t forgotten() const { return forgotten_count_; }
  // One line per change worth the log since the last call: "loop rx0 (/dev/shm/jitterd-loop.rx0):
  // refused (magic): ..."; the caller logs them.
  std::vector<std::string> take_events();
  const LoopTrackerSettings& settings() const { return settings_; }

 private:
  struct Listed {
    std::string name;
    LoopFileId id;
  };
  std::vector<Listed> list_candidates(int directory_fd, double now_unix);
  void update(const std::string& name, LoopFileRead read, const HostReader& host, double now_unix);
  LoopReadPlan plan_for(const Listed& file, std::uint64_t ring_bytes) const;
  void keep_window_slots(const LoopSegmentReading& previous, LoopSegmentReading& now) const;
  void refuse(LoopState& state, LoopFileId id, LoopRefusal reason, std::string message, const HostReader& host,
              double now_unix);
  void mark_writer(LoopState& state, const std::string& problem, double now_unix);
  std::string owner_prefix_problem(const std::string& loop, uid_t owner) const;
  void forget_dead(int directory_fd, double now_unix);

  LoopTrackerSettings settings_;
  std::map<std::string, LoopState> loops_;
  LoopRefusalLog log_;
  // Files of forgotten loops jitterd could not remove: never read again while they stay.
  std::unordered_map<LoopFileId, std::uint64_t, LoopFileIdHash> forgotten_files_;
  std::uint64_t forgotten_count_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t scan_ = 0;
  std::vector<std::string> events_;
};

}  // namespace jitterd
