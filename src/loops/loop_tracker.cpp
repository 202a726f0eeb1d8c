// SPDX-License-Identifier: Apache-2.0
// LoopTracker (loops/loop_reader.h): the loops directory over time.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

#include "host/descriptor.h"
#include "host/text.h"
#include "jitterd/loop_probe_layout.h"
#include "loops/loop_reader.h"

namespace jitterd {

namespace {

std::string refusal_line(const std::filesystem::path& file, LoopRefusal reason, const std::string& message) {
  return printable(file.string()) + ": refused (" + std::string(loop_refusal_name(reason)) + "): " + message;
}

// The entries of the open directory `fd` whose names begin with the loop prefix, streamed (the
// directory may hold any number of files; only names are kept).
std::vector<std::string> loop_names(int fd) {
  std::vector<std::string> names;
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  DIR* dir = copy < 0 ? nullptr : ::fdopendir(copy);
  if (dir == nullptr) {
    if (copy >= 0) ::close(copy);
    return names;
  }
  ::rewinddir(dir);
  while (const dirent* entry = ::readdir(dir))
    if (std::strncmp(entry->d_name, JITTERD_LOOP_FILE_PREFIX, sizeof JITTERD_LOOP_FILE_PREFIX - 1) == 0)
      names.emplace_back(entry->d_name);
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

// The files to read this scan, in the order they may take a place under the cap: accepted loops
// first, then refused files already tracked, then new ones. Files of users not accepted are
// refused here on their owner alone (lstat: nothing opened, nothing read) and take no place.
std::vector<LoopTracker::Listed> LoopTracker::list_candidates(int directory_fd, double now_unix) {
  std::vector<Listed> accepted, tracked, fresh;
  for (std::string& name : loop_names(directory_fd)) {
    struct stat st {};
    if (::fstatat(directory_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone since listed
    const LoopFileId id{st.st_dev, st.st_ino, loop_name_hash(name)};
    log_.seen(id);
    if (const auto forgotten = forgotten_files_.find(id); forgotten != forgotten_files_.end()) {
      forgotten->second = scan_;
      continue;
    }
    const auto state = loops_.find(name);
    const bool is_accepted = state != loops_.end() && state->second.accepted;
    if (const std::string owner = is_accepted ? "" : loop_owner_problem(settings_.allowed_users, st.st_uid);
        !owner.empty()) {
      if (state != loops_.end()) loops_.erase(state);
      log_.refused(id, LoopRefusal::owner, refusal_line(settings_.directory / name, LoopRefusal::owner, owner),
                   now_unix);
      continue;
    }
    (is_accepted ? accepted : state != loops_.end() ? tracked : fresh).push_back({std::move(name), id});
  }
  accepted.insert(accepted.end(), std::make_move_iterator(tracked.begin()),
                  std::make_move_iterator(tracked.end()));
  accepted.insert(accepted.end(), std::make_move_iterator(fresh.begin()), std::make_move_iterator(fresh.end()));
  return accepted;
}

// loops.owner_prefix: "trader.rx0" is trader's loop only; "" when the name holds.
std::string LoopTracker::owner_prefix_problem(const std::string& loop, uid_t owner) const {
  if (!settings_.owner_names) return "";
  const auto known = settings_.owner_names->find(owner);
  const std::string user = known == settings_.owner_names->end() ? std::to_string(owner) : known->second;
  if (loop.size() > user.size() + 1 && loop.compare(0, user.size(), user) == 0 && loop[user.size()] == '.')
    return "";
  return "its loop '" + loop + "' does not begin with its owner's user name '" + printable(user) +
         ".' (loops.owner_prefix: a loop's name begins with the name of the user whose file it is)";
}

// What to copy of `file` beyond its header: for the file of an accepted loop, the ring entries
// and slots since its last reading; for any other, the window's slots and no ring entry (its
// first reading: attribution starts from its head).
LoopReadPlan LoopTracker::plan_for(const Listed& file, std::uint64_t ring_bytes) const {
  LoopReadPlan plan{~std::uint64_t{0}, ring_bytes, 0, static_cast<std::uint64_t>(settings_.window.count())};
  const auto state = loops_.find(file.name);
  if (state == loops_.end() || !state->second.accepted || state->second.device != file.id.device ||
      state->second.inode != file.id.inode)
    return plan;
  const LoopSegmentReading& r = state->second.reading;
  plan.ring_since = r.ring_pushed;
  plan.slots_from_id = r.heartbeat_tick / std::max<std::uint64_t>(1, r.header.slot_ticks) + 1;
  return plan;
}

// A continuing reading copied only the slots since the last one: the older ones of the window
// come from the last reading (a slot's max never changes once its successor began), a newer copy
// of the same id replacing its older one.
void LoopTracker::keep_window_slots(const LoopSegmentReading& previous, LoopSegmentReading& now) const {
  const std::uint64_t slot_ticks = std::max<std::uint64_t>(1, now.header.slot_ticks);
  const std::uint64_t last_id = now.heartbeat_tick / slot_ticks + 1;
  std::uint64_t keep = last_id + 1 > now.header.slot_count ? last_id + 1 - now.header.slot_count : 0;
  if (settings_.window.count() > 0) {
    const auto window_ticks = static_cast<std::uint64_t>(static_cast<double>(settings_.window.count()) *
                                                         static_cast<double>(now.header.hertz) / 1e9);
    const std::uint64_t window_slots = window_ticks / slot_ticks + 2;
    keep = last_id > window_slots ? last_id - window_slots : 0;
  }
  const std::uint64_t newest_copied = now.slots.empty() ? ~std::uint64_t{0} : now.slots.front().first;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> merged;
  for (const auto& slot : previous.slots)
    if (slot.first >= keep && slot.first < newest_copied) merged.push_back(slot);
  merged.insert(merged.end(), now.slots.begin(), now.slots.end());
  now.slots = std::move(merged);
}

void LoopTracker::mark_writer(LoopState& state, const std::string& problem, double now_unix) {
  if (problem.empty())
    state.writer_gone_unix = 0;
  else if (state.writer_gone_unix == 0)
    state.writer_gone_unix = now_unix;
}

// A refused reading. A loop accepted before keeps its series, down: lost otherwise than by its
// writer closing it (its file removed), it must not vanish from the alerts.
void LoopTracker::refuse(LoopState& state, LoopFileId id, LoopRefusal reason, std::string message,
                         const HostReader& host, double now_unix) {
  const bool was_up = state.up;
  state.refused = true;
  state.up = false;
  state.reason = reason;
  state.message = std::move(message);
  log_.refused(id, reason, refusal_line(state.file, reason, state.message), now_unix);
  if (!state.accepted) return;
  const LoopSegmentHeader& h = state.reading.header;
  mark_writer(state, loop_writer_problem(host, h.pid, h.start_time), now_unix);
  if (was_up)
    events_.push_back(printable(state.file.string()) + ": loop " + h.name + " down: refused (" +
                      std::string(loop_refusal_name(reason)) + ")");
}

void LoopTracker::update(const std::string& name, LoopFileRead read, const HostReader& host, double now_unix) {
  LoopState& state = loops_[name];
  state.file = settings_.directory / name;
  const LoopFileId id{read.device, read.inode, loop_name_hash(name)};
  const bool same_file = state.accepted && read.device == state.device && read.inode == state.inode;
  if (!read.reading) return refuse(state, id, read.reason, std::move(read.message), host, now_unix);
  if (state.accepted && !same_file) {
    events_.push_back(printable(state.file.string()) +
                      ": replaced (a new file under the same name): counts start again");
    state.accepted = false;
  }
  LoopSegmentReading& now = *read.reading;
  const bool continues = same_file && !state.refused && state.read_unix > 0;
  if (continues) {
    if (auto problem = loop_reading_progress_problem(state.reading, now, now_unix - state.read_unix))
      return refuse(state, id, problem->first, std::move(problem->second), host, now_unix);
  }
  if (now.header.name != name.substr(sizeof JITTERD_LOOP_FILE_PREFIX - 1))
    return refuse(state, id, LoopRefusal::name, "its header names loop '" + printable(now.header.name) + "'", host,
                  now_unix);
  if (std::string problem = owner_prefix_problem(now.header.name, read.owner); !problem.empty())
    return refuse(state, id, LoopRefusal::name, std::move(problem), host, now_unix);
  if (continues) keep_window_slots(state.reading, now);
  if (!continues || now.heartbeat_tick != state.reading.heartbeat_tick || now.samples != state.reading.samples)
    state.last_seen_unix = now_unix;
  const bool was_up = state.up, was_refused = state.refused;
  std::string down = loop_writer_problem(host, now.header.pid, now.header.start_time);
  mark_writer(state, down, now_unix);
  const double quiet = now_unix - state.last_seen_unix;
  if (down.empty() && quiet * 1e9 > static_cast<double>(settings_.stale_after.count()))
    down = "no progress for " + std::to_string(static_cast<long long>(quiet)) + " s";
  state.refused = false;
  state.accepted = true;
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

// Loops whose writer has been gone for forget_after: their series go, and their file with them
// where jitterd may remove it (the file is still the one read, and the directory lets jitterd's
// user: root, or the file's owner in a sticky directory), checked as the library's close checks
// its own. A file jitterd may not remove is remembered and not read again while it stays.
void LoopTracker::forget_dead(int directory_fd, double now_unix) {
  const double after = static_cast<double>(settings_.forget_after.count()) / 1e9;
  for (auto it = loops_.begin(); it != loops_.end();) {
    LoopState& state = it->second;
    if (!state.accepted || state.up || state.writer_gone_unix == 0 || now_unix - state.writer_gone_unix < after) {
      ++it;
      continue;
    }
    std::string what = "its file was replaced meanwhile and is left";
    const Descriptor fd(::openat(directory_fd, it->first.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (fd.get() >= 0 && ::fstat(fd.get(), &st) == 0 && st.st_dev == state.device && st.st_ino == state.inode) {
      if (::unlinkat(directory_fd, it->first.c_str(), 0) == 0) {
        what = "its file removed";
      } else {
        what = std::string("its file kept (") + std::strerror(errno) + "); jitterd will not read it again";
        forgotten_files_[{state.device, state.inode, loop_name_hash(it->first)}] = scan_;
      }
    }
    events_.push_back(printable(state.file.string()) + ": loop " + state.reading.header.name +
                      " forgotten: its writer has been gone for " +
                      std::to_string(static_cast<long long>(now_unix - state.writer_gone_unix)) +
                      " s (loops.forget_after); " + what);
    ++forgotten_count_;
    it = loops_.erase(it);
  }
}

void LoopTracker::scan(const HostReader& host, double now_unix) {
  const Descriptor directory(::open(settings_.directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory.get() < 0)
    throw std::runtime_error("loops.directory " + printable(settings_.directory.string()) +
                             " cannot be read: " + std::strerror(errno));
  ++scan_;
  std::set<std::string> seen;
  const std::vector<Listed> candidates = list_candidates(directory.get(), now_unix);
  const std::uint64_t ring_bytes =
      kLoopRingBytesPerScan / 2 / std::max<std::size_t>(1, std::min(candidates.size(), settings_.max_loops));
  bytes_read_ = 0;
  for (const Listed& file : candidates) {
    const auto path = settings_.directory / file.name;
    if (seen.size() == settings_.max_loops) {
      log_.refused(file.id, LoopRefusal::too_many,
                   refusal_line(path, LoopRefusal::too_many,
                                "jitterd reads at most " + std::to_string(settings_.max_loops) +
                                    " files of accepted users here; the loops it reads keep their place"),
                   now_unix);
      continue;
    }
    // A file removed since the listing is as if not listed: gone, not refused.
    LoopFileRead read = read_loop_file(path, settings_.allowed_users, plan_for(file, ring_bytes));
    bytes_read_ += read.bytes_read;
    if (read.gone) continue;
    if (read.device == 0 && read.inode == 0) {
      read.device = file.id.device;
      read.inode = file.id.inode;
    }
    seen.insert(file.name);
    update(file.name, std::move(read), host, now_unix);
  }
  for (auto it = loops_.begin(); it != loops_.end();) {
    if (seen.count(it->first) != 0) {
      ++it;
      continue;
    }
    if (it->second.accepted)
      events_.push_back(printable(it->second.file.string()) + ": removed; its loop is gone");
    it = loops_.erase(it);
  }
  forget_dead(directory.get(), now_unix);
  std::erase_if(forgotten_files_, [&](const auto& entry) { return entry.second != scan_; });
  log_.end_scan(now_unix);
  for (std::string& line : log_.take_lines()) events_.push_back(std::move(line));
}

std::vector<std::string> LoopTracker::take_events() {
  std::vector<std::string> out;
  out.swap(events_);
  return out;
}

}  // namespace jitterd
