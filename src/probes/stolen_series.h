// SPDX-License-Identifier: Apache-2.0
// The stolen time of one watched CPU or one loop over the rolling window, reading by reading and
// by cause: what the status page draws as a stacked plot (report/stolen_plot.h) and /status.json
// holds, so a person sees at a glance when the CPU was taken and by what. The causes are the
// watch's and the loops' own (attribution's, host/attribution.h cause_names, with `preempted`,
// and a loop's `smi`, `hypervisor`, `unexplained`, `not_kept` and `not_attributed`).
//
// Bounded by the window, not by the readings: a point is one reading, or several consecutive
// readings together up to one step (max(1 s, window / kStolenColumns): 1 s for the default
// window of 60 s, 30 s for the largest, 1 h), so a reading every 100 ms over an hour holds at
// most 2 * kStolenColumns + 2 points (a point closes once it spans more than a step less half a
// reading, so more than half a step while readings are shorter than a step), never the 36,000
// readings; points that ended before the window go, and kMaxStolenPoints caps what irregular
// readings could leave. A point is 144 bytes: at most 35 KB per watched CPU or loop
// (docs/watch.md, "The stolen-time plot").
//
// StolenSeries: one thread at a time (the watch's or the loops probe's). StolenPlot: plain data,
// shared immutable once published (ProbeResult::stolen).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/attribution.h"

namespace jitterd {

// The causes in the order a plot stacks them, bottom first: preempted (another task ran), then
// attribution's, then a loop's interruption no record explains but an SMI or the hypervisor's
// steal (host/attribution.h split_below_kernel), one nothing explains, the time of a loop's
// interruptions whose ring entries were overwritten before jitterd read them, and a loop's time
// where its interruptions are not attributed at all.
inline constexpr std::size_t kStolenCauseCount = 1 + cause_names.size() + 5;
inline constexpr std::array<std::string_view, kStolenCauseCount> kStolenCauses = [] {
  std::array<std::string_view, kStolenCauseCount> out{};
  out[0] = "preempted";
  for (std::size_t i = 0; i < cause_names.size(); ++i) out[1 + i] = cause_names[i];
  out[kStolenCauseCount - 5] = smi_cause;
  out[kStolenCauseCount - 4] = hypervisor_cause;
  out[kStolenCauseCount - 3] = "unexplained";
  out[kStolenCauseCount - 2] = "not_kept";
  out[kStolenCauseCount - 1] = "not_attributed";
  return out;
}();

// The index of `cause` in kStolenCauses; none for a name not there.
std::optional<std::size_t> stolen_cause_index(std::string_view cause);

// Nanoseconds stolen, by kStolenCauses index.
using StolenNs = std::array<std::uint64_t, kStolenCauseCount>;

// The plot's resolution: the window in at most this many steps (of at least a second).
inline constexpr std::size_t kStolenColumns = 120;
inline constexpr std::size_t kMaxStolenPoints = 2 * kStolenColumns + 2;
inline constexpr std::uint64_t kMinStolenStepNs = 1'000'000'000;

// One or more consecutive readings: when (CLOCK_MONOTONIC), how long they covered, what was stolen.
struct StolenPoint {
  std::uint64_t start_ns = 0, end_ns = 0;  // the first reading's start, the last one's end
  std::uint64_t covered_ns = 0;            // what the shares are of, summed over the readings
  StolenNs stolen{};
  bool operator==(const StolenPoint&) const = default;
};

class StolenSeries {
 public:
  explicit StolenSeries(std::uint64_t window_ns);
  // A reading that ended at `end_ns` (monotonic) after `length_ns` (0: no reading, ignored), and
  // what was stolen in it by cause, out of `covered_ns` (the time the shares are of: the reading's
  // length for a watched CPU, the time a loop recorded in it for a loop). Readings come in order;
  // one that ends before the last is ignored.
  void add(std::uint64_t end_ns, std::uint64_t length_ns, const StolenNs& stolen, std::uint64_t covered_ns);
  void add(std::uint64_t end_ns, std::uint64_t length_ns, const StolenNs& stolen) {
    add(end_ns, length_ns, stolen, length_ns);
  }
  const std::deque<StolenPoint>& points() const { return points_; }
  std::uint64_t window_ns() const { return window_ns_; }
  std::uint64_t step_ns() const { return step_ns_; }
  std::size_t memory_bytes() const { return sizeof(*this) + points_.size() * sizeof(StolenPoint); }

 private:
  // The last point's stolen time beyond what it covers ended in it but began before it (an engine
  // books a preemption when it ends; a kworker held a watched CPU 950 ms at a time here): that
  // much of `added` (the reading just added, by cause, in proportion) goes back to the points
  // before, newest first, as far as each has time not yet stolen.
  void spill_back(const StolenNs& added);

  std::uint64_t window_ns_, step_ns_;
  std::deque<StolenPoint> points_;
};

// One of the window's worst preempters, as the plot names them (probes/watch_top.h's tally).
struct StolenPreempter {
  std::string task;        // its comm, as the kernel had it (escaped by whoever shows it)
  std::string task_class;  // jitterd, kernel_percpu, application, stray
  double seconds = 0;
  std::uint64_t preemptions = 0;
};

// How many preempters a plot names.
inline constexpr std::size_t kStolenPreempters = 3;

// A point on the wall clock, its stolen seconds by kStolenCauses index.
struct StolenPlotPoint {
  double start_unix_seconds = 0, end_unix_seconds = 0;
  double covered_seconds = 0;  // what the shares are of (StolenSeries::add's covered_ns)
  std::array<double, kStolenCauseCount> stolen_seconds{};
};

// What the status page draws for one watched CPU or loop, and /status.json holds.
struct StolenPlot {
  int cpu = 0;
  std::string loop;  // "" for a watched CPU
  double window_seconds = 0, step_seconds = 0;
  std::vector<StolenPlotPoint> points;  // oldest first
  // The window's worst preempters by time, their total and the share named; `named`: whether this
  // source names them at all (the counts method and a loop that is not attributed cannot).
  bool named = false;
  std::vector<StolenPreempter> preempters;
  double preempted_seconds = 0;   // every preemption the tally counted in the window
  double unnamed_seconds = 0;     // of which under the outlier threshold, or lost
  std::uint64_t preemptions = 0;  // the tally's count
  std::string note;               // what the plot cannot show, and why ("" when nothing)
};

// `series` on the wall clock: `unix_minus_monotonic` is the wall clock's reading less the
// monotonic one's, taken together.
std::vector<StolenPlotPoint> stolen_plot_points(const StolenSeries& series, double unix_minus_monotonic);

}  // namespace jitterd
