// SPDX-License-Identifier: Apache-2.0
#include "loops/loop_window.h"

#include <algorithm>

#include "measure/clock_ns.h"
#include "measure/tick_scale.h"

namespace jitterd {

LoopWindow::LoopWindow(ino_t inode, std::chrono::nanoseconds window, std::chrono::nanoseconds interval)
    : inode_(inode),
      window_ns_(static_cast<std::uint64_t>(window.count())),
      // A reading late by up to half an interval still makes its step, and one early by as much
      // waits for the next: steps of one interval at 1 s and above, of a second below.
      min_step_ns_(kLoopWindowStepNs - std::min<std::uint64_t>(kLoopWindowStepNs / 2,
                                                               static_cast<std::uint64_t>(interval.count()) / 2)),
      gaps_(window_ns_) {}

void LoopWindow::add(const GapCountsTicks& counts, std::uint64_t now_ns, std::uint64_t heartbeat_tick) {
  // The first two readings make the window at once (figures from the second reading on, as
  // before a step had passed), then one push per step.
  if (points_.size() >= 2 && now_ns - points_.back().now_ns < min_step_ns_) return;
  gaps_.push(counts.gaps, now_ns);
  points_.push_back(
      {now_ns, heartbeat_tick, counts.sampled_ticks, counts.interruptions, counts.interrupted_ticks});
  const std::uint64_t start_ns = gaps_.start_tick();
  while (points_.size() > 1 && points_.front().now_ns < start_ns) points_.pop_front();
}

LoopWindowFigures LoopWindow::figures(const LoopSegmentReading& r) const {
  const TickScale scale(static_cast<double>(r.header.hertz));
  const std::uint64_t span = scale.from_ns(window_ns_);
  const std::uint64_t from = r.heartbeat_tick > span ? r.heartbeat_tick - span : 0;
  const std::uint64_t start_ns = gaps_.start_tick(), end_ns = gaps_.end_tick();
  LoopWindowFigures f;
  f.gaps = gaps_.window();
  f.figures = summarize(f.gaps, r.max_between(from, r.heartbeat_tick), scale);
  f.figures.valid = f.figures.valid && start_ns != end_ns;
  f.figures.span_seconds = ns_to_seconds(static_cast<double>(end_ns - start_ns));
  const Point& first = points_.front();
  const Point& last = points_.back();
  set_counted(f.figures, last.sampled_ticks - first.sampled_ticks, last.interruptions - first.interruptions,
              last.interrupted_ticks - first.interrupted_ticks, scale);
  set_limits(f.figures, r.floor_ticks, r.threshold_ticks, scale);
  return f;
}

std::vector<LoopStepCounts> LoopWindow::steps() const {
  // Part i is what was added from point i to point i + 1 (the points start where the parts do).
  std::vector<LoopStepCounts> out;
  const std::size_t parts = gaps_.part_count();
  if (points_.size() != parts + 1) return out;
  out.reserve(parts);
  for (std::size_t i = 0; i < parts; ++i) {
    const Point& a = points_[i];
    const Point& b = points_[i + 1];
    if (b.sampled_ticks < a.sampled_ticks) continue;
    out.push_back({gaps_.part_buckets(i), b.sampled_ticks - a.sampled_ticks, b.interruptions - a.interruptions,
                   b.interrupted_ticks - a.interrupted_ticks});
  }
  return out;
}

std::uint64_t LoopWindow::steps_max_ticks(const LoopSegmentReading& reading) const {
  return points_.empty() ? 0 : reading.max_between(points_.front().heartbeat_tick, reading.heartbeat_tick);
}

std::size_t LoopWindow::memory_bytes() const {
  return sizeof *this + gaps_.memory_bytes() + points_.size() * sizeof(Point);
}

}  // namespace jitterd
