// SPDX-License-Identifier: Apache-2.0
// Sliding-window view of a cumulative histogram: every push stores only the buckets that changed
// since the previous push, so a 60 s window costs a few kilobytes per CPU. Owned by one
// housekeeping thread (not thread-safe); never touched by the sampler loop.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "measure/histogram.h"

namespace jitterd {

class RollingWindow {
 public:
  explicit RollingWindow(std::uint64_t window_ticks) : window_ticks_(window_ticks) {}

  // `cumulative` is a snapshot of the histogram taken at counter time `tick`.
  void push(const HistogramSnapshot& cumulative, std::uint64_t tick);

  // Sum of the changes pushed within the last window_ticks before the newest push. Kept as the
  // deltas come and go (an add per changed bucket on push, a subtract on expiry), so reading it is
  // a copy, not a sum over the window's deltas: the housekeeping thread does this once a second
  // for every sampled CPU.
  const HistogramSnapshot& window() const { return sum_; }
  // Tick of the oldest snapshot the window starts from (the previous push before the first kept
  // delta); equals the newest tick when fewer than two pushes were made.
  std::uint64_t start_tick() const;
  std::uint64_t end_tick() const { return last_tick_; }

  // The window's pushes one by one, oldest first: what each added between two pushes.
  struct Part {
    std::uint64_t from_tick = 0;
    std::uint64_t to_tick = 0;
    HistogramSnapshot added;
  };
  std::vector<Part> parts() const;
  // The same without the dense copies: the number of parts, and the buckets the i-th part changed
  // (index, count added), oldest first, as the window keeps them.
  std::size_t part_count() const { return deltas_.size(); }
  const std::vector<std::pair<std::uint32_t, std::uint64_t>>& part_buckets(std::size_t i) const {
    return deltas_[i].buckets;
  }
  // Bytes the window holds: its parts' changed buckets, their bookkeeping, the two snapshots.
  std::size_t memory_bytes() const;

 private:
  struct Delta {
    std::uint64_t from_tick;
    std::uint64_t to_tick;
    std::vector<std::pair<std::uint32_t, std::uint64_t>> buckets;  // (index, count added)
  };
  std::uint64_t window_ticks_;
  std::deque<Delta> deltas_;
  HistogramSnapshot last_;
  HistogramSnapshot sum_;  // of deltas_
  std::uint64_t last_tick_ = 0;
  bool have_last_ = false;
};

}  // namespace jitterd
