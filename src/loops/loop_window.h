// SPDX-License-Identifier: Apache-2.0
// A loop's rolling window on the daemon's clock, as a sampled CPU's (sampling/sampler_set.h
// advance_sampler_window): the histogram's changes and the loop's counters over the same pushes,
// and from them the window's figures and the live baseline's history (probes/application_windows.h).
// It is pushed once per step (kLoopWindowStepNs, a second: the samplers' step and a baseline's
// sub-window), however often the loops probe reads (loops.interval may be 100 ms), so what it
// holds is bounded by the window's time, not by the readings: at most 2 * window / step + 3 parts
// (a reading counts as a step once more than half a step and half an interval have passed), each
// the buckets that changed in it (16 bytes each, at most 976) and 88 bytes (docs/loops.md,
// "Bounds"). One thread (the loops probe's).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "loops/loop_segment.h"
#include "measure/cpu_figures.h"
#include "measure/gap_counts.h"
#include "measure/rolling_window.h"

namespace jitterd {

inline constexpr std::uint64_t kLoopWindowStepNs = 1'000'000'000;

// What a loop's counters added over one step of its window, sparse (the buckets that changed, as
// the rolling window keeps them): a window of an hour is 3,600 of these per loop.
struct LoopStepCounts {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> buckets;  // (bucket, gaps added)
  std::uint64_t sampled_ticks = 0, interruptions = 0, interrupted_ticks = 0;
  GapCountsTicks dense() const {
    GapCountsTicks out{{}, sampled_ticks, interruptions, interrupted_ticks};
    for (const auto& [bucket, count] : buckets) out.gaps.counts[bucket] = count;
    return out;
  }
};

// A loop's rolling window as the probe last computed it: the figures a sampled CPU's window has
// (span, quantiles, exact max, interruptions and stolen time within it, floor and threshold) and
// the gaps behind them, in the loop's ticks.
struct LoopWindowFigures {
  CpuFigures figures;
  HistogramSnapshot gaps;
};

class LoopWindow {
 public:
  // For the loop's file `inode` (a new file is a new window), over `window` read every `interval`.
  LoopWindow(ino_t inode, std::chrono::nanoseconds window, std::chrono::nanoseconds interval);
  ino_t inode() const { return inode_; }

  // The loop's counters read at `now_ns` (the daemon's monotonic clock), its heartbeat then at
  // `heartbeat_tick`: pushed when a step has passed since the last push (the first two readings
  // always), else left for a later reading.
  void add(const GapCountsTicks& counts, std::uint64_t now_ns, std::uint64_t heartbeat_tick = 0);
  // The window's figures at the last push, its exact max from `reading`'s slots.
  LoopWindowFigures figures(const LoopSegmentReading& reading) const;
  // What the counters added per step, oldest first (sparse).
  std::vector<LoopStepCounts> steps() const;
  // The exact largest gap (ticks) over the span those steps cover, from `reading`'s slots: what a
  // baseline of the steps records as its max.
  std::uint64_t steps_max_ticks(const LoopSegmentReading& reading) const;

  std::size_t parts() const { return gaps_.part_count(); }
  // Bytes held: the rolling window's and the counters at each push.
  std::size_t memory_bytes() const;

 private:
  // The loop's counters at one push, on the daemon's monotonic clock (ns), and its heartbeat.
  struct Point {
    std::uint64_t now_ns = 0, heartbeat_tick = 0;
    std::uint64_t sampled_ticks = 0, interruptions = 0, interrupted_ticks = 0;
  };
  ino_t inode_;
  std::uint64_t window_ns_;
  std::uint64_t min_step_ns_;  // a push once this much passed since the last
  RollingWindow gaps_;
  std::deque<Point> points_;  // one per push within the window, and the one it starts from
};

}  // namespace jitterd
