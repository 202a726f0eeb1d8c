// SPDX-License-Identifier: Apache-2.0
// Watch probe: the CPUs that run the application, which jitterd may not spin on. Every interval
// (1 s by default) it takes one reading of the counts engine (watch/counts_engine.h) over the
// watched CPUs (ProbeContext::watched, chosen by the sampling plan from `watch.cpus`) and exports
// it as jitterd_watch_* metrics, per CPU and, where it applies, per cause in attribution's
// vocabulary (hard IRQs and IPIs by cause, softirqs by cause, and `preempted` for the time
// another task ran while the application wanted the CPU). Its first run takes two readings one
// interval apart, so `jitterd report watch` shows a whole window. Methods, exported as
// jitterd_watch_method_info: `bpf` (watch/bpf_watch.h: every interruption paired entry to exit in
// the kernel, with its length and who caused it; `auto` picks it where it loads), `tracepoints`
// (watch/trace_watch.h: the same figures from perf's records of the same tracepoints, paired on
// jitterd's CPU; only when asked for, since perf's rings cost the watched CPU one irq_work per
// ring's worth of records, each counted) and `counts` (the kernel's counters, no privilege),
// which every method reads too. With `watch.cpus: auto` it follows the isolated CPUs as they
// change (a cpuset partition made or undone, a pod given or freed exclusive CPUs): it resolves
// them again every kAutoWatchFollowPeriod (or every reading, if the interval is longer) and, when
// they changed, starts a new watch over the new set. Used by one thread at a time (the probe
// scheduler's).
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probes/probe.h"
#include "probes/stolen_series.h"
#include "probes/watch_paired_result.h"
#include "probes/watch_timers.h"
#include "probes/watch_top.h"
#include "probes/watch_window.h"
#include "watch/application.h"
#include "watch/bpf_watch.h"
#include "watch/counts_engine.h"
#include "watch/trace_watch.h"

namespace jitterd {

enum class WatchMethod { automatic, bpf, tracepoints, counts };

// "auto", "bpf", "tracepoints", "counts".
std::string_view watch_method_name(WatchMethod method);

// The top-level `watch:` and `application:` sections of the configuration.
struct WatchSettings {
  bool enabled = false;  // a `watch:` section is present
  // `watch.cpus`: "auto" (the isolated CPUs jitterd does not sample) or a list.
  bool cpus_automatic = true;
  std::vector<int> cpus;
  std::string cpus_text = "auto";
  WatchMethod method = WatchMethod::automatic;
  std::chrono::nanoseconds interval{std::chrono::seconds(1)};
  // bpf: each single interruption or preemption this long or longer is kept with who caused it.
  std::chrono::nanoseconds outlier_threshold{std::chrono::microseconds(10)};
  ApplicationSettings application;
  std::chrono::nanoseconds window{std::chrono::seconds(60)};  // sampler.window: the history's span
  bool operator==(const WatchSettings&) const = default;
};

// How often `watch.cpus: auto` is resolved again: a cgroup walk and the kubelet's file, cheap but
// not worth every second on a node of thousands of cgroups.
inline constexpr std::chrono::seconds kAutoWatchFollowPeriod{10};

class WatchProbe : public SettingsProbe<WatchSettings> {
 public:
  explicit WatchProbe(WatchSettings settings)
      : SettingsProbe(std::move(settings)), top_(static_cast<std::uint64_t>(settings_.window.count())) {}
  ~WatchProbe() override;
  WatchProbe(const WatchProbe&) = delete;
  WatchProbe& operator=(const WatchProbe&) = delete;
  std::string_view name() const override { return "watch"; }
  ProbeResult run(ProbeContext& context) override;

 private:
  // Opens the counts engine and the kernel engine the method asks for, and publishes the latter.
  void open_engines(const ProbeContext& context);
  void open_kernel_engine(const ProbeContext& context);
  // auto: the watched CPUs resolved again when due; a line saying how they changed, or "".
  std::string follow_auto_cpus(const ProbeContext& context);
  WatchReading take_reading(ProbeContext& context);
  std::optional<PairedReading> read_bpf(const WatchReading& reading);
  // Appends this reading's typed figures to windows_ (before previous_ and previous_bpf_ move on).
  void record_windows(const WatchReading& reading, const std::optional<PairedReading>& bpf);
  // Adds this reading's stolen time by cause to each CPU's series (as record_windows, before
  // previous_ and previous_bpf_ move on); whether its causes are paired (bpf, tracepoints).
  bool record_stolen(const WatchReading& reading, const std::optional<PairedReading>& bpf);
  // Each CPU's plot, its preempters from top_ once it has this reading (`paired`).
  void add_stolen_plots(bool paired, ProbeResult& result) const;

  std::optional<std::vector<int>> watched_;  // the CPUs watched now (first: the plan's)
  std::chrono::steady_clock::time_point resolved_at_{};
  std::unique_ptr<CountsEngine> engine_;
  std::vector<WatchedCpu> previous_;            // the totals of the previous reading, for the window's rates
  std::shared_ptr<SharedBpfWatch> bpf_owner_;   // the context's engine, kept alive while used
  std::shared_ptr<TraceWatch> trace_;           // method tracepoints, where it opens
  KernelWatch* kernel_ = nullptr;               // bpf_owner_'s or trace_, or none (counts)
  std::shared_ptr<WatchEngineSlot> published_;  // where kernel_ is published for the loops probe
  std::optional<PairedReading> previous_bpf_;
  WatchPairedHistory history_;
  WatchTop top_;                         // who took each watched CPU, over the window and since the watch began
  TimerFunctionsShown timer_functions_;  // the timer functions given a series so far
  std::map<int, CycleCounts> watched_cycles_;  // each watched cpu's APERF/MPERF at the last run
  // The typed figures of each reading over settings_.window, oldest first (the live baseline's).
  std::deque<std::vector<WatchWindow>> windows_;
  std::map<int, StolenSeries> stolen_;  // by CPU: the window's stolen time by cause, reading by reading
  std::string method_ = "counts";       // what jitterd_watch_method_info says, and why
  std::string reason_;
};

// The metrics and tables of one reading (exposed for tests). `previous`: the totals of the
// reading before, for the last window's rates (empty: none yet). `method` and `reason` are what
// jitterd_watch_method_info says; a method that pairs interruptions (bpf, tracepoints) books
// every cause's time itself.
ProbeResult watch_result(const WatchReading& reading, const std::vector<WatchedCpu>& previous,
                         std::string_view method, std::string_view requested, std::string_view reason);

}  // namespace jitterd
