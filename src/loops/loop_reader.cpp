// SPDX-License-Identifier: Apache-2.0
#include "loops/loop_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "host/descriptor.h"
#include "host/tasks.h"
#include "host/text.h"
#include "jitterd/loop_probe_layout.h"

namespace jitterd {

namespace {

constexpr int kCopyAttempts = 4;

LoopFileRead refused(LoopRefusal reason, std::string message) {
  LoopFileRead out;
  out.reason = reason;
  out.message = std::move(message);
  return out;
}

// Reads exactly `size` bytes at `offset` into `into`; fewer when the file is shorter (never
// SIGBUS: no mapping).
std::size_t copy_at(int fd, std::byte* into, std::size_t size, std::uint64_t offset) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, into + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

std::size_t copy_at_start(int fd, std::vector<std::byte>& buffer, std::size_t size) {
  buffer.resize(size);
  buffer.resize(copy_at(fd, buffer.data(), size, 0));
  return buffer.size();
}

// Entries [first, first + count) of the circular array of `size` 16-byte entries at `offset`,
// in that order (two reads when it wraps); false when the file was shorter.
bool copy_region(int fd, std::vector<std::byte>& buffer, std::uint64_t offset, std::uint64_t size,
                 std::uint32_t first, std::uint32_t count) {
  buffer.resize(16 * std::size_t{count});
  const std::uint64_t before_wrap = std::min<std::uint64_t>(count, size - first);
  const std::size_t head = 16 * static_cast<std::size_t>(before_wrap);
  if (copy_at(fd, buffer.data(), head, offset + 16 * std::uint64_t{first}) != head) return false;
  const std::size_t rest = buffer.size() - head;
  return rest == 0 || copy_at(fd, buffer.data() + head, rest, offset) == rest;
}

// The regions a reading copies (LoopReadPlan): the slots from the plan's id (or the window's
// first) to the heartbeat's, and the ring entries from the plan's sequence (or as many as the
// plan's bytes allow) to the head, both from the first copy of the header.
std::pair<LoopRegion, LoopRegion> plan_regions(const LoopSegmentHeader& h, std::span<const std::byte> head,
                                               const LoopReadPlan& plan) {
  std::uint64_t heartbeat = 0, ring_head = 0;
  std::memcpy(&heartbeat, head.data() + JITTERD_LOOP_OFF_HEARTBEAT, 8);
  std::memcpy(&ring_head, head.data() + JITTERD_LOOP_OFF_RING_HEAD, 8);
  const std::uint64_t slot_ticks = std::max<std::uint64_t>(1, h.slot_ticks);
  const std::uint64_t last_id = heartbeat / slot_ticks + 1;
  std::uint64_t first_id = last_id + 1 > h.slot_count ? last_id + 1 - h.slot_count : 1;
  if (plan.window_ns > 0) {
    const auto window_ticks =
        static_cast<std::uint64_t>(static_cast<double>(plan.window_ns) * static_cast<double>(h.hertz) / 1e9);
    const std::uint64_t window_slots = window_ticks / slot_ticks + 2;
    if (last_id > window_slots) first_id = std::max(first_id, last_id - window_slots);
  }
  first_id = std::min(std::max(first_id, plan.slots_from_id), last_id);
  LoopRegion slots{
      static_cast<std::uint32_t>(first_id % h.slot_count), static_cast<std::uint32_t>(last_id - first_id + 1), {}};
  const std::uint64_t capacity = h.ring_capacity;
  std::uint64_t from = std::min(plan.ring_since, ring_head);
  from = std::max(from, ring_head > capacity ? ring_head - capacity : 0);
  from = std::max(from, ring_head - std::min(ring_head, plan.ring_bytes / 16));
  LoopRegion ring{static_cast<std::uint32_t>(from % capacity), static_cast<std::uint32_t>(ring_head - from), {}};
  return {slots, ring};
}

struct CopyBuffers {
  std::vector<std::byte> head, slots, ring;
};

// One copy of the planned regions (the header and histogram too unless `head_read`: the first
// copy's are the ones the regions were planned from, so that its ring region ends at its head);
// false when the file turned out shorter.
bool take_copy(int fd, const LoopSegmentHeader& h, const LoopRegion& slots, const LoopRegion& ring, bool head_read,
               CopyBuffers& buffers, LoopCopy& copy) {
  if (!head_read && copy_at_start(fd, buffers.head, kLoopHeadBytes) != kLoopHeadBytes) return false;
  const std::uint64_t slots_at = kLoopHeadBytes, ring_at = slots_at + 16 * std::uint64_t{h.slot_count};
  if (!copy_region(fd, buffers.slots, slots_at, h.slot_count, slots.first, slots.count) ||
      !copy_region(fd, buffers.ring, ring_at, h.ring_capacity, ring.first, ring.count))
    return false;
  copy = {buffers.head, {slots.first, slots.count, buffers.slots}, {ring.first, ring.count, buffers.ring}};
  return true;
}

std::optional<LoopFileRead> check_file(int fd, const std::vector<uid_t>& allowed, struct stat& st) {
  if (::fstat(fd, &st) != 0)
    return refused(LoopRefusal::unreadable, std::string("fstat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return refused(LoopRefusal::not_regular, "is " + std::string(file_kind(st.st_mode)) + ", not a regular file");
  if (std::string owner = loop_owner_problem(allowed, st.st_uid); !owner.empty())
    return refused(LoopRefusal::owner, std::move(owner));
  // A writer's segment has one name; a second link is a file put here from elsewhere (a hard
  // link to someone else's file where fs.protected_hardlinks is 0): none of its bytes is read.
  if (st.st_nlink != 1)
    return refused(LoopRefusal::links, "has " + std::to_string(st.st_nlink) +
                                           " hard links; a loop segment has one (its bytes are not read)");
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < JITTERD_LOOP_HEADER_BYTES || size > loop_segment_max_bytes())
    return refused(size < JITTERD_LOOP_HEADER_BYTES ? LoopRefusal::truncated : LoopRefusal::size,
                   "is " + std::to_string(size) + " bytes, outside " + std::to_string(JITTERD_LOOP_HEADER_BYTES) +
                       " to " + std::to_string(loop_segment_max_bytes()));
  return std::nullopt;
}

}  // namespace

std::string loop_owner_problem(const std::vector<uid_t>& allowed_users, uid_t uid) {
  if (std::find(allowed_users.begin(), allowed_users.end(), uid) != allowed_users.end()) return "";
  return "is owned by uid " + std::to_string(uid) + ", not a user the configuration accepts (loops.users)";
}

LoopFileRead read_loop_file(const std::filesystem::path& path, const std::vector<uid_t>& allowed_users,
                            const LoopReadPlan& plan) {
  const Descriptor fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ELOOP) return refused(LoopRefusal::not_regular, "is a symbolic link, not a regular file");
    LoopFileRead out = refused(LoopRefusal::unreadable, std::string("open: ") + std::strerror(error));
    out.gone = error == ENOENT;
    return out;
  }
  struct stat st {};
  const auto identified = [&](LoopFileRead out) {
    out.device = st.st_dev;
    out.inode = st.st_ino;
    out.owner = st.st_uid;
    return out;
  };
  if (auto problem = check_file(fd.get(), allowed_users, st)) return identified(std::move(*problem));
  CopyBuffers a, b;
  copy_at_start(fd.get(), a.head, JITTERD_LOOP_HEADER_BYTES);
  LoopParse header = parse_loop_header(a.head);
  if (!header.reading) return identified(refused(header.reason, header.message));
  const LoopSegmentHeader& h = header.reading->header;
  const std::uint64_t total = h.total_bytes;
  if (static_cast<std::uint64_t>(st.st_size) != total)
    return identified(
        refused(static_cast<std::uint64_t>(st.st_size) < total ? LoopRefusal::truncated : LoopRefusal::size,
                "is " + std::to_string(st.st_size) + " bytes, its header says " + std::to_string(total)));
  LoopParse parsed;
  std::uint64_t copied = JITTERD_LOOP_HEADER_BYTES;
  for (int attempt = 0; attempt < kCopyAttempts; ++attempt) {
    LoopCopy first, second;
    bool whole = copy_at_start(fd.get(), a.head, kLoopHeadBytes) == kLoopHeadBytes;
    if (whole) {
      const auto [slots, ring] = plan_regions(h, a.head, plan);
      whole = take_copy(fd.get(), h, slots, ring, true, a, first) &&
              take_copy(fd.get(), h, slots, ring, false, b, second);
      copied += 2 * (kLoopHeadBytes + 16 * (std::uint64_t{slots.count} + ring.count));
    }
    if (!whole)
      return identified(refused(LoopRefusal::truncated,
                                "shrank while read (its header says " + std::to_string(total) + " bytes)"));
    parsed = parse_loop_copies(first, second);
    const bool maybe_torn = parsed.reason == LoopRefusal::went_down || parsed.reason == LoopRefusal::inconsistent;
    if (parsed.reading || !maybe_torn) break;
  }
  LoopFileRead out = identified(refused(parsed.reason, parsed.message));
  out.reading = std::move(parsed.reading);
  out.bytes_read = copied;
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

}  // namespace jitterd
