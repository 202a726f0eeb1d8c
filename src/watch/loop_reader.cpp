// SPDX-License-Identifier: Apache-2.0
#include "watch/loop_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "host/descriptor.h"
#include "host/directory.h"
#include "host/tasks.h"
#include "host/text.h"
#include "jitterd/loop_probe.h"

namespace jitterd {

namespace {

constexpr int kCopyAttempts = 4;

LoopFileRead refused(LoopRefusal reason, std::string message) {
  LoopFileRead out;
  out.reason = reason;
  out.message = std::move(message);
  return out;
}

// Reads exactly `size` bytes at 0, or fewer when the file is shorter (never SIGBUS: no mapping).
std::size_t copy_at_start(int fd, std::vector<std::byte>& buffer, std::size_t size) {
  buffer.resize(size);
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, buffer.data() + got, size - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  buffer.resize(got);
  return got;
}

std::optional<LoopFileRead> check_file(int fd, const std::vector<uid_t>& allowed, struct stat& st) {
  if (::fstat(fd, &st) != 0)
    return refused(LoopRefusal::unreadable, std::string("fstat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return refused(LoopRefusal::not_regular, "is " + std::string(file_kind(st.st_mode)) + ", not a regular file");
  if (std::find(allowed.begin(), allowed.end(), st.st_uid) == allowed.end())
    return refused(LoopRefusal::owner, "is owned by uid " + std::to_string(st.st_uid) +
                                           ", not a user the configuration accepts (loops.users)");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < JITTERD_LOOP_HEADER_BYTES || size > loop_segment_max_bytes())
    return refused(size < JITTERD_LOOP_HEADER_BYTES ? LoopRefusal::truncated : LoopRefusal::size,
                   "is " + std::to_string(size) + " bytes, outside " + std::to_string(JITTERD_LOOP_HEADER_BYTES) +
                       " to " + std::to_string(loop_segment_max_bytes()));
  return std::nullopt;
}

}  // namespace

LoopFileRead read_loop_file(const std::filesystem::path& path, const std::vector<uid_t>& allowed_users) {
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ELOOP) return refused(LoopRefusal::not_regular, "is a symbolic link, not a regular file");
    LoopFileRead out = refused(LoopRefusal::unreadable, std::string("open: ") + std::strerror(error));
    out.gone = error == ENOENT;
    return out;
  }
  struct stat st {};
  if (auto problem = check_file(fd.get(), allowed_users, st)) return std::move(*problem);
  std::vector<std::byte> first, second;
  copy_at_start(fd.get(), first, JITTERD_LOOP_HEADER_BYTES);
  LoopParse header = parse_loop_header(first);
  if (!header.reading) return refused(header.reason, header.message);
  const std::uint64_t total = header.reading->header.total_bytes;
  if (static_cast<std::uint64_t>(st.st_size) != total)
    return refused(static_cast<std::uint64_t>(st.st_size) < total ? LoopRefusal::truncated : LoopRefusal::size,
                   "is " + std::to_string(st.st_size) + " bytes, its header says " + std::to_string(total));
  LoopParse parsed;
  for (int attempt = 0; attempt < kCopyAttempts; ++attempt) {
    if (copy_at_start(fd.get(), first, total) != total || copy_at_start(fd.get(), second, total) != total)
      return refused(LoopRefusal::truncated, "shrank to " + std::to_string(std::min(first.size(), second.size())) +
                                                 " bytes while read (its header says " + std::to_string(total) +
                                                 ")");
    parsed = parse_loop_segment(first, second);
    const bool maybe_torn = parsed.reason == LoopRefusal::went_down || parsed.reason == LoopRefusal::inconsistent;
    if (parsed.reading || !maybe_torn) break;
  }
  LoopFileRead out = refused(parsed.reason, parsed.message);
  out.reading = std::move(parsed.reading);
  out.device = st.st_dev;
  out.inode = st.st_ino;
  return out;
}

std::string loop_writer_problem(const HostReader& host, std::int32_t pid, std::uint64_t start_time) {
  const auto text = host.read_proc(std::to_string(pid) + "/stat");
  const auto stat = text ? parse_task_stat(*text) : std::nullopt;
  if (!stat) return "its writer, pid " + std::to_string(pid) + ", is gone";
  if (stat->start_ticks != start_time)
    return "pid " + std::to_string(pid) + " is another process now (started at " +
           std::to_string(stat->start_ticks) + ", the writer at " + std::to_string(start_time) + ")";
  return "";
}

void LoopTracker::refuse(LoopState& state, LoopRefusal reason, std::string message) {
  const bool again = state.refused && state.reason == reason;
  state.refused = true;
  state.up = false;
  state.reason = reason;
  state.message = std::move(message);
  if (again) return;
  ++refusals_[reason];
  events_.push_back(printable(state.file.string()) + ": refused (" + std::string(loop_refusal_name(reason)) +
                    "): " + state.message);
}

void LoopTracker::update(const std::string& name, LoopFileRead read, const HostReader& host, double now_unix) {
  LoopState& state = loops_[name];
  state.file = settings_.directory / name;
  const bool same_file = state.inode != 0 && read.device == state.device && read.inode == state.inode;
  if (read.reading && state.inode != 0 && !same_file && !state.refused)
    events_.push_back(printable(state.file.string()) +
                      ": replaced (a new file under the same name): counts start again");
  if (!read.reading) return refuse(state, read.reason, std::move(read.message));
  LoopSegmentReading& now = *read.reading;
  const bool continues = same_file && !state.refused && state.read_unix > 0;
  if (continues) {
    if (auto problem = loop_reading_progress_problem(state.reading, now, now_unix - state.read_unix))
      return refuse(state, problem->first, std::move(problem->second));
  }
  if (now.header.name != name.substr(sizeof JITTERD_LOOP_FILE_PREFIX - 1))
    return refuse(state, LoopRefusal::name, "its header names loop '" + printable(now.header.name) + "'");
  if (!continues || now.heartbeat_tick != state.reading.heartbeat_tick || now.samples != state.reading.samples)
    state.last_seen_unix = now_unix;
  const bool was_up = state.up, was_refused = state.refused;
  std::string down = loop_writer_problem(host, now.header.pid, now.header.start_time);
  const double quiet = now_unix - state.last_seen_unix;
  if (down.empty() && quiet * 1e9 > static_cast<double>(settings_.stale_after.count()))
    down = "no progress for " + std::to_string(static_cast<long long>(quiet)) + " s";
  state.refused = false;
  state.up = down.empty();
  if (!state.up && (was_up || was_refused || !continues || state.message != down))
    events_.push_back(printable(state.file.string()) + ": loop " + now.header.name + " down: " + down);
  if (state.up && (!was_up || !continues))
    events_.push_back(printable(state.file.string()) + ": loop " + now.header.name + " on CPU " +
                      std::to_string(now.header.cpu) + " up (pid " + std::to_string(now.header.pid) +
                      ", counter " + std::string(loop_counter_name(now.header.counter)) + " at " +
                      std::to_string(now.header.hertz) + " Hz)");
  state.message = std::move(down);
  state.reading = std::move(now);
  state.read_unix = now_unix;
  state.device = read.device;
  state.inode = read.inode;
}

void LoopTracker::scan(const HostReader& host, double now_unix) {
  const Directory directory(settings_.directory.string());
  std::set<std::string> seen;
  std::size_t over = 0;
  for (const std::string& name : directory.list()) {
    if (name.rfind(JITTERD_LOOP_FILE_PREFIX, 0) != 0) continue;
    if (seen.size() == kMaxLoopSegments) {
      ++over;
      continue;
    }
    // A file removed since the listing is as if not listed: gone, not refused.
    LoopFileRead read = read_loop_file(settings_.directory / name, settings_.allowed_users);
    if (read.gone) continue;
    seen.insert(name);
    update(name, std::move(read), host, now_unix);
  }
  for (auto it = loops_.begin(); it != loops_.end();) {
    if (seen.count(it->first) != 0) {
      ++it;
      continue;
    }
    events_.push_back(printable(it->second.file.string()) + ": removed; its loop is gone");
    it = loops_.erase(it);
  }
  if (over > 0 && over_reported_ != over) {
    refusals_[LoopRefusal::size] += over;
    events_.push_back(printable(settings_.directory.string()) + ": " + std::to_string(over) +
                      " segments beyond the " + std::to_string(kMaxLoopSegments) + " jitterd reads are left out");
  }
  over_reported_ = over;
}

std::vector<std::string> LoopTracker::take_events() {
  std::vector<std::string> out;
  out.swap(events_);
  return out;
}

}  // namespace jitterd
