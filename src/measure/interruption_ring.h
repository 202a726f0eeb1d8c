// SPDX-License-Identifier: Apache-2.0
// The last N interruptions of one sampler (start tick, duration in ticks), kept for attribution
// and for the fidelity test. One writer (the sampler thread) pushes; any thread may copy out the
// recent entries, and entries the writer overwrote while being copied are dropped, not torn.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace jitterd {

struct Interruption {
  std::uint64_t start_tick = 0;
  std::uint64_t duration_ticks = 0;
};

class InterruptionRing {
 public:
  explicit InterruptionRing(std::size_t capacity)
      : capacity_(capacity), entries_(std::make_unique<Slot[]>(capacity)) {}

  std::size_t capacity() const { return capacity_; }
  // The entry storage, for mlock.
  const void* storage() const { return entries_.get(); }
  std::size_t storage_bytes() const { return capacity_ * sizeof(Slot); }
  // Pushes so far, including overwritten ones.
  std::uint64_t pushed() const { return head_.load(std::memory_order_acquire); }

  void push(std::uint64_t start_tick, std::uint64_t duration_ticks) {
    const std::uint64_t head = head_.load(std::memory_order_relaxed);
    Slot& slot = entries_[head % capacity_];
    // Announce the overwrite before making it (the release stores below keep it first), so a
    // reader that sees the new entry also sees that its old one is gone.
    writing_.store(head + 1, std::memory_order_relaxed);
    slot.start.store(start_tick, std::memory_order_release);
    slot.duration.store(duration_ticks, std::memory_order_release);
    head_.store(head + 1, std::memory_order_release);
  }

  // Entries with sequence number >= from_sequence still held, oldest first. They are the
  // sequence numbers just below *end_sequence (if given): the push count the copy stopped at.
  std::vector<Interruption> copy_since(std::uint64_t from_sequence = 0,
                                       std::uint64_t* end_sequence = nullptr) const {
    const std::uint64_t head = head_.load(std::memory_order_acquire);
    if (end_sequence != nullptr) *end_sequence = head;
    std::uint64_t first = head > capacity_ ? head - capacity_ : 0;
    if (from_sequence > first) first = from_sequence;
    std::vector<Interruption> out;
    out.reserve(head > first ? head - first : 0);
    for (std::uint64_t seq = first; seq < head; ++seq) {
      const Slot& slot = entries_[seq % capacity_];
      out.push_back({slot.start.load(std::memory_order_acquire), slot.duration.load(std::memory_order_acquire)});
    }
    // Whatever the writer reached meanwhile may have overwritten our oldest copies: drop them.
    // (The acquire loads above keep this read after them.)
    const std::uint64_t head_after = writing_.load(std::memory_order_relaxed);
    const std::uint64_t overwritten_below = head_after > capacity_ ? head_after - capacity_ : 0;
    if (overwritten_below > first) {
      const std::uint64_t drop = std::min<std::uint64_t>(overwritten_below - first, out.size());
      out.erase(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(drop));
    }
    return out;
  }

 private:
  struct Slot {
    std::atomic<std::uint64_t> start{0};
    std::atomic<std::uint64_t> duration{0};
  };
  std::size_t capacity_;
  std::unique_ptr<Slot[]> entries_;
  std::atomic<std::uint64_t> head_{0};
  std::atomic<std::uint64_t> writing_{0};  // the push in progress, announced before its stores
};

}  // namespace jitterd
