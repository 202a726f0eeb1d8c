// The sampler workers of one configuration, started together behind one barrier, plus the
// housekeeping view of them: rolling-window summaries refreshed by update_windows() (called
// once a second by the daemon's main loop) and read by the collector at scrape time.
// Thread-safety: start/stop/update_windows from one housekeeping thread; everything const from
// any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "measure/rolling_window.h"
#include "measure/window_summary.h"
#include "sampling/sampler_worker.h"

namespace jitterd {

class SamplerSet {
 public:
  explicit SamplerSet(const std::vector<SamplerSettings>& settings);
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
  WindowSummary window(std::size_t index) const;
  // Every worker that started sampling is still making progress, or waits for its CPU to come
  // back (SamplerWorker::responsive): what the watchdog asks.
  bool all_alive() const;
  std::vector<int> cpus() const;
  // One line for logs and the systemd STATUS: "sampling cpus 1-3 (burst 100ms every 1s)".
  std::string describe() const;

 private:
  std::vector<std::unique_ptr<SamplerWorker>> workers_;
  std::vector<RollingWindow> windows_;
  mutable std::mutex summaries_mutex_;
  std::vector<WindowSummary> summaries_;
};

}  // namespace jitterd
