// SPDX-License-Identifier: Apache-2.0
#include "measure/rolling_window.h"

namespace jitterd {

void RollingWindow::push(const HistogramSnapshot& cumulative, std::uint64_t tick) {
  if (have_last_) {
    Delta delta{last_tick_, tick, {}};
    std::size_t changed = 0;  // counted first: the delta holds exactly its buckets (docs/loops.md, "Bounds")
    for (std::size_t i = 0; i < kHistogramBuckets; ++i) changed += cumulative.counts[i] != last_.counts[i] ? 1 : 0;
    delta.buckets.reserve(changed);
    for (std::size_t i = 0; i < kHistogramBuckets; ++i) {
      if (cumulative.counts[i] != last_.counts[i]) {
        delta.buckets.emplace_back(static_cast<std::uint32_t>(i), cumulative.counts[i] - last_.counts[i]);
      }
    }
    for (const auto& [index, count] : delta.buckets) sum_.counts[index] += count;
    deltas_.push_back(std::move(delta));
  }
  last_ = cumulative;
  last_tick_ = tick;
  have_last_ = true;
  // A delta belongs to the window while it started no earlier than window_ticks before now.
  while (!deltas_.empty() && tick - deltas_.front().from_tick > window_ticks_) {
    for (const auto& [index, count] : deltas_.front().buckets) sum_.counts[index] -= count;
    deltas_.pop_front();
  }
}

std::vector<RollingWindow::Part> RollingWindow::parts() const {
  std::vector<Part> out(deltas_.size());
  for (std::size_t i = 0; i < deltas_.size(); ++i) {
    out[i].from_tick = deltas_[i].from_tick;
    out[i].to_tick = deltas_[i].to_tick;
    for (const auto& [index, count] : deltas_[i].buckets) out[i].added.counts[index] = count;
  }
  return out;
}

std::size_t RollingWindow::memory_bytes() const {
  std::size_t bytes = sizeof *this;
  for (const Delta& delta : deltas_) bytes += sizeof delta + delta.buckets.capacity() * sizeof delta.buckets[0];
  return bytes;
}

std::uint64_t RollingWindow::start_tick() const {
  return deltas_.empty() ? last_tick_ : deltas_.front().from_tick;
}

}  // namespace jitterd
