// SPDX-License-Identifier: Apache-2.0
// The one prometheus-cpp Collectable of the daemon: every family is built at scrape time from the
// samplers' single-writer counters (relaxed loads) and the housekeeping window summaries, so the
// hot loop never touches a prometheus-cpp object or its mutexes.
// Thread-safety: Collect(), metrics_text() and status() run on the web server's threads,
// render_probe_results() on the probe scheduler's two lanes; the setters may be called from the main thread
// at any time (guarded by one mutex).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "export/build_info.h"
#include "export/web_counters.h"
#include "host/host_reader.h"
#include "host/thread_stats.h"
#include "measure/counter_calibration.h"
#include "measure/gap_counts.h"
#include "probes/probe.h"
#include "sampling/sampler_set.h"

namespace jitterd {

// One sampler as a scrape sees it: plain values, so the families are a pure function of them.
// Its counters stay in ticks, as the sampler counts them (exact, never converted in the loop):
// the input that measure/cpu_figures.h turns into CpuFigures (window_figures, the families).
struct SamplerReading {
  SamplerSettings settings;
  SamplerStartup startup;
  bool up = false;
  bool off_cpu = false;      // the thread found itself off its CPU and has not pinned back yet
  double off_cpu_since = 0;  // while off_cpu: since when (Unix seconds; 0 if not known)
  int pin_error = 0;         // while off_cpu: the errno of its last attempt to pin back
  std::uint64_t cpu_losses = 0;
  bool sampling = false;  // the loop ran: the counters below are its own
  GapCountsTicks counts;  // since the sampler started, as a loop's reading holds its own
  // The window's gap figures (its summary), with its gaps, counters, sequence and the thread's
  // context switches.
  WindowDetail window_detail;
};

// Everything the status page shows (export/status_page.h), taken at request time the way a
// scrape takes it: the sampler readings, the probes' last runs, the tick and the last reload.
struct StatusSnapshot {
  BuildInfo build;
  std::string hostname;     // /proc/sys/kernel/hostname, read when it was taken
  double unix_seconds = 0;  // when it was taken
  CounterFrequency frequency;
  TickMethod method = TickMethod::steady_clock;
  bool last_reload_ok = true;
  double last_reload_success = 0;
  std::vector<SamplerReading> samplers;
  ProbeStatuses probes;  // shared with the scheduler, not copied
};

// The part of a sampler's reading that comes from its running state: the histogram and counters
// of `shared` (relaxed loads), its `window` and its thread's context switches as the window's
// update read them (no file is read at scrape time). read_samplers' step per worker, exposed for
// the scale benchmark.
void read_sampler_state(const SamplerShared& shared, WindowDetail window, SamplerReading& r);

// The figures of `r`'s current window, as the status page's both forms and the live baseline
// take them: the window's gap figures with its counters' and the sampler's floor and threshold.
CpuFigures window_figures(const SamplerReading& r);

// Reads every sampler of `set` (relaxed loads of its single-writer counters, its window detail).
std::vector<SamplerReading> read_samplers(const SamplerSet& set);

class Collector : public prometheus::Collectable {
 public:
  Collector(HostReader host, BuildInfo build);

  void set_samplers(std::shared_ptr<const SamplerSet> samplers, CounterFrequency frequency, TickMethod method);
  // The same from any source of readings (a test's fixed ones); called at scrape time.
  void set_samplers(std::function<std::vector<SamplerReading>()> readings, CounterFrequency frequency,
                    TickMethod method);
  // `statuses` gives the probes' latest runs (shared snapshots); it is called at scrape time from
  // the web threads.
  void set_probes(std::function<ProbeStatuses()> statuses);
  void record_reload(bool success, double unix_seconds);
  // When the running samplers started (unix seconds): at start-up, and at each reload that starts
  // new samplers, whose counters begin again at zero. Exported as
  // jitterd_sampler_start_time_seconds, which `jitterd fleet` reads to tell a counter reset.
  void record_samplers_start(double unix_seconds);

  std::vector<prometheus::MetricFamily> Collect() const override;
  // The /metrics text: serialize_text(Collect()) byte for byte, with each probe result's families
  // built and serialized once (kept until the probe runs again) rather than on every scrape.
  std::string metrics_text() const;
  // Makes the text of the probes' results not made yet, so that the next scrape only copies it:
  // the daemon calls it on the probe scheduler's lanes after each run. Any thread; calls from two
  // threads at once take turns.
  void render_probe_results() const;
  // Which state the status pages show (export/page_builder.h): advanced by every change of what
  // they show: a probe run rendered, the rolling window's step (the daemon calls
  // advance_generation after each), a setter. Any thread.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  void advance_generation() const { generation_.fetch_add(1, std::memory_order_acq_rel); }
  // The web servers' counters (export/web_counters.h), exported with the daemon's families; every
  // web server the daemon runs writes them. Any thread.
  WebCounters& web_counters() const { return web_counters_; }
  // How many probe results' texts were made so far (by either): for tests.
  std::uint64_t results_made() const;
  // The same state as Collect() reads, as plain values.
  StatusSnapshot status() const;
  // Per sampler, the steps of its rolling window (SamplerSet::window_parts); empty without a
  // sampler set (fixed readings).
  std::vector<WindowParts> window_parts() const;

 private:
  // Every family but the probes' results, in Collect()'s order; empty families dropped.
  std::vector<prometheus::MetricFamily> collect_without_results(const ProbeStatuses& statuses) const;
  void collect_probe_runs(const ProbeStatuses& statuses, std::vector<prometheus::MetricFamily>& out) const;
  // The successful runs' metrics, one family per name across the probes, in order of appearance.
  static std::vector<prometheus::MetricFamily> result_families(const ProbeStatuses& statuses);
  std::string results_text(const ProbeStatuses& statuses) const;

  // A probe result's families as text, kept while that result is the probe's last.
  struct ResultText {
    std::shared_ptr<const ProbeStatus> status;
    std::vector<std::string> names;  // its families
    std::string text;
  };
  static ResultText make_result_text(std::shared_ptr<const ProbeStatus> status);

  HostReader host_;
  BuildInfo build_;
  mutable std::mutex mutex_;
  // Held through one render_probe_results, so that the two lanes' calls do not undo each other's.
  mutable std::mutex render_mutex_;
  std::function<std::vector<SamplerReading>()> sampler_readings_;
  std::function<ProbeStatuses()> probe_statuses_;
  std::function<std::vector<WindowParts>()> window_parts_;
  CounterFrequency frequency_;
  TickMethod method_ = TickMethod::steady_clock;
  bool last_reload_ok_ = true;
  double last_reload_success_ = 0;
  double samplers_started_ = 0;                   // 0: not recorded, not exported
  mutable std::vector<ResultText> result_texts_;  // guarded by mutex_
  mutable std::uint64_t results_made_ = 0;        // guarded by mutex_
  mutable std::atomic<std::uint64_t> generation_{1};
  mutable WebCounters web_counters_;
};

}  // namespace jitterd
