// SPDX-License-Identifier: Apache-2.0
// Exact maximum gap per time slot, kept by the sampler thread itself so no reader ever resets
// anything the writer owns. Slots are keyed by tick time (tick / slot_ticks); the reader takes
// the max over the slots that fall inside its window. One writer; any number of readers. The
// writer divides only when a slot begins (every slot_ticks, 250 ms in the daemon): within a slot
// publish() is a compare against the slot's bounds and at most one store, because it runs inside
// the sampler loop, whose own cost lands in the gaps it records.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>

namespace jitterd {

class WindowMax {
 public:
  WindowMax(std::uint64_t slot_ticks, std::size_t slot_count)
      : slot_ticks_(slot_ticks), slot_count_(slot_count), slots_(std::make_unique<Slot[]>(slot_count)) {}

  std::uint64_t slot_ticks() const { return slot_ticks_; }
  // The slot storage, for mlock.
  const void* storage() const { return slots_.get(); }
  std::size_t storage_bytes() const { return slot_count_ * sizeof(Slot); }
  std::uint64_t slot_of(std::uint64_t tick) const { return tick / slot_ticks_; }

  // Writer: the max of gaps seen since the last call belongs to the slot of `now`.
  void publish(std::uint64_t now, std::uint64_t max_gap) {
    if (now >= writer_slot_end_ || now < writer_slot_start_) [[unlikely]] {
      enter_slot(now, max_gap);
    } else if (max_gap > writer_max_) {
      writer_max_ = max_gap;
      writer_slot_->max.store(max_gap, std::memory_order_relaxed);
    }
  }

  // Reader: max over slots [slot_of(from_tick), slot_of(to_tick)]; 0 if none was written.
  std::uint64_t max_between(std::uint64_t from_tick, std::uint64_t to_tick) const {
    std::uint64_t result = 0;
    const std::uint64_t last = slot_of(to_tick) + 1;
    // Only the newest slot_count slots still exist; older ids have been reused.
    const std::uint64_t oldest_held = last >= slot_count_ ? last - slot_count_ + 1 : 1;
    const std::uint64_t first = std::max(slot_of(from_tick) + 1, oldest_held);
    for (std::uint64_t id = first; id <= last; ++id) {
      const Slot& slot = slots_[id % slot_count_];
      const std::uint64_t seen = slot.id.load(std::memory_order_acquire);
      // Acquire: the second id read cannot move above the value read.
      const std::uint64_t value = slot.max.load(std::memory_order_acquire);
      if (seen == id && slot.id.load(std::memory_order_relaxed) == id) result = std::max(result, value);
    }
    return result;
  }

 private:
  struct Slot {
    std::atomic<std::uint64_t> id{0};
    std::atomic<std::uint64_t> max{0};
  };

  // The slow path: the slot of `now` with its bounds, cached for the fast path.
  void enter_slot(std::uint64_t now, std::uint64_t max_gap) {
    const std::uint64_t index = slot_of(now);
    const std::uint64_t id = index + 1;  // +1 so 0 means "never written"
    Slot& slot = slots_[id % slot_count_];
    if (slot.id.load(std::memory_order_relaxed) != id) {
      // Seqlock-style: mark invalid, write the value (release: after the invalidation), then the
      // id that readers check before and after the value.
      slot.id.store(0, std::memory_order_relaxed);
      slot.max.store(max_gap, std::memory_order_release);
      slot.id.store(id, std::memory_order_release);
    } else if (max_gap > slot.max.load(std::memory_order_relaxed)) {
      slot.max.store(max_gap, std::memory_order_relaxed);
    }
    writer_slot_ = &slot;
    writer_max_ = slot.max.load(std::memory_order_relaxed);
    writer_slot_start_ = index * slot_ticks_;
    // The last slot a 64-bit counter has ends at the counter's end, not past it.
    writer_slot_end_ = index == std::numeric_limits<std::uint64_t>::max() / slot_ticks_
                           ? std::numeric_limits<std::uint64_t>::max()
                           : writer_slot_start_ + slot_ticks_;
  }

  std::uint64_t slot_ticks_;
  std::size_t slot_count_;
  std::unique_ptr<Slot[]> slots_;
  // The writer's own: the slot it writes now, its max and tick bounds [start, end). Readers never
  // touch these; an empty range makes the first publish take the slow path.
  Slot* writer_slot_ = nullptr;
  std::uint64_t writer_max_ = 0;
  std::uint64_t writer_slot_start_ = 1;
  std::uint64_t writer_slot_end_ = 0;
};

}  // namespace jitterd
