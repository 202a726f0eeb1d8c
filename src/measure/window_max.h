// Exact maximum gap per time slot, kept by the sampler thread itself so no reader ever resets
// anything the writer owns. Slots are keyed by tick time (tick / slot_ticks); the reader takes
// the max over the slots that fall inside its window. One writer; any number of readers.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
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
    const std::uint64_t id = slot_of(now) + 1;  // +1 so 0 means "never written"
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
  std::uint64_t slot_ticks_;
  std::size_t slot_count_;
  std::unique_ptr<Slot[]> slots_;
};

}  // namespace jitterd
