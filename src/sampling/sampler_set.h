// SPDX-License-Identifier: Apache-2.0
// The sampler workers of one configuration, started together behind one barrier, plus the
// housekeeping view of them: rolling-window summaries and the sampler threads' context switches,
// refreshed by update_windows() (called once a second by the daemon's main loop) and read by the
// collector at scrape time, so a scrape reads no file per sampler.
// Thread-safety: start/stop/update_windows from one housekeeping thread; everything const from
// any thread (the windows and their summaries behind one mutex, which update_windows holds for
// its once-a-second push and window_parts for its copy; no sampler thread ever takes it).
#pragma once

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "host/host_reader.h"
#include "host/thread_stats.h"
#include "measure/cpu_figures.h"
#include "measure/gap_counts.h"
#include "measure/rolling_window.h"
#include "sampling/sampler_worker.h"

namespace jitterd {

// The sampler's own counters (cumulative) at one window update.
struct WindowCounters {
  std::uint64_t tick = 0;
  std::uint64_t sampled_ticks = 0, interruptions = 0, interrupted_ticks = 0;
};

// One sampler's rolling window as the last update_windows() left it: the gap figures /metrics
// exports (summary: the span, samples, quantiles and max), the gaps behind them and the sampler's
// counters over the same span (ticks: the input of the counters' figures).
struct WindowDetail {
  CpuFigures summary;
  std::uint64_t sequence = 0;   // update_windows() calls so far; equal sequence, same window
  double end_unix_seconds = 0;  // wall time of that update
  HistogramSnapshot gaps;       // ticks, within the window
  std::uint64_t sampled_ticks = 0, interruptions = 0, interrupted_ticks = 0;  // within the window
  // The sampler thread's context switches as last read by update_windows (at most
  // ceil(samplers / kSwitchReadsPerUpdate) updates old), or none if its status file could not be read.
  std::optional<ContextSwitches> context_switches;
};

// One update-to-update step of a window, for sub-window figures.
struct WindowPart {
  GapCountsTicks added;  // what the sampler's counters added in the step
};

struct WindowParts {
  WindowDetail detail;
  std::vector<WindowPart> parts;
};

// One sampler's rolling window as the housekeeping side keeps it: the histogram deltas and the
// counters at each update. Owned by one housekeeping thread.
struct SamplerWindowState {
  explicit SamplerWindowState(std::uint64_t window_ticks) : window(window_ticks) {}
  RollingWindow window;
  std::deque<WindowCounters> counters;
};

// One sampler's once-a-second step (what update_windows() does per sampler, exposed so the scale
// benchmark can run it over many samplers' states without threads): pushes the histogram of
// `shared` (read into `scratch`) and its counters at tick `now`, drops what left the window and
// fills `out`'s summary, gaps and window counters (not its sequence and wall time).
void advance_sampler_window(SamplerWindowState& state, const SamplerShared& shared,
                            const SamplerSettings& settings, std::uint64_t now, HistogramSnapshot& scratch,
                            WindowDetail& out);

// The sampler threads' context switches an update reads: at most this many status files (each
// some microseconds of kernel time; more on a large machine, whose status files list long CPU
// masks), the others keeping their last reading.
inline constexpr std::size_t kSwitchReadsPerUpdate = 256;

// Whether update number `sequence` reads the context switches of sampler `index` of `count`: all
// of them each update up to `per_update` samplers, else consecutive blocks of `per_update` in turn,
// so each is read once every ceil(count / per_update) updates (4 s at 1,024 samplers).
bool reads_switches_at(std::size_t index, std::size_t count, std::uint64_t sequence,
                       std::size_t per_update = kSwitchReadsPerUpdate);

class SamplerSet {
 public:
  // `host`'s procfs is where update_windows() reads the sampler threads' context switches.
  explicit SamplerSet(const std::vector<SamplerSettings>& settings, const HostReader& host = HostReader());
  ~SamplerSet();
  SamplerSet(const SamplerSet&) = delete;
  SamplerSet& operator=(const SamplerSet&) = delete;

  // Starts every worker, waits until all are pinned and warmed up, then releases them together.
  void start();
  void stop();
  void update_windows();

  std::size_t size() const { return workers_.size(); }
  const SamplerWorker& worker(std::size_t index) const { return *workers_[index]; }
  SamplerWorker& worker(std::size_t index) { return *workers_[index]; }
  WindowDetail window_detail(std::size_t index) const;
  // The current window with its steps, oldest first (none before two updates), taken together
  // under the lock update_windows() takes: for a download, not for every scrape.
  WindowParts window_parts(std::size_t index) const;
  // Every worker that started sampling is still making progress, or waits for its CPU to come
  // back (SamplerWorker::responsive): what the watchdog asks.
  bool all_alive() const;
  std::vector<int> cpus() const;
  // One line for logs and the systemd STATUS: "sampling cpus 1-3 (burst 100ms every 1s)".
  std::string describe() const;

 private:
  std::vector<std::unique_ptr<SamplerWorker>> workers_;
  // Guarded by summaries_mutex_ (pushed by update_windows, read by window_parts).
  std::vector<SamplerWindowState> windows_;
  mutable std::mutex summaries_mutex_;
  std::vector<WindowDetail> summaries_;
  HistogramSnapshot snapshot_;  // update_windows' scratch
  Directory own_tasks_;         // <procfs>/<this process>/task
  std::uint64_t sequence_ = 0;
};

}  // namespace jitterd
