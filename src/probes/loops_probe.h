// SPDX-License-Identifier: Apache-2.0
// Loops probe: the applications' own busy-polling loops, which record their gaps with the loop
// probe library (include/jitterd/loop_probe.h) into segments jitterd reads (loops/loop_reader.h,
// every segment hostile input). Every interval (1 s by default) it reads each segment of the
// configured directory once and exports its gap families as a sampled CPU's, from the same builder
// (probes/gap_metrics.h) with the names jitterd_loop_* and the labels loop and cpu (plus the
// loop's own labels): the gap histogram, interruptions, stolen and sampled time, the window's
// quantiles and exact max, the floor and threshold; up and last seen; and
// jitterd_loop_refused_total by reason. Refusals and loops coming, going up and down are warnings
// for the daemon's log, one line per change. Used by one thread at a time (the probe scheduler's,
// or `jitterd report loops`).
//
// Attribution, by the attribution probe's methods, per loop (jitterd_loop_attribution_method_info):
// where the loop's CPU is watched and an engine pairs its interruptions (the context's BPF engine,
// watch/shared_bpf_watch.h, where it covers the CPU; else the engine the watch opened, its
// tracepoints, ProbeContext::watch_engine) and the loop's counter is one jitterd can map to
// CLOCK_MONOTONIC (the TSC, the arm64 virtual counter or CLOCK_MONOTONIC itself), each
// interruption the loop's ring records is matched with the engine's records of that CPU (down to a
// quarter of the loop's threshold), as the attribution probe matches a sampler's (bpf,
// tracepoints); otherwise the interruptions the loop's counters added since the last run are shared
// out among its CPU's /proc/interrupts counts of the same run (window_deltas, host/attribution.h:
// an estimate). Both count by cause in jitterd_loop_interruptions_by_cause_total and
// jitterd_loop_stolen_seconds_by_cause_total.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "host/interrupt_counts.h"
#include "host/trace_format.h"
#include "loops/loop_reader.h"
#include "loops/loop_window.h"
#include "measure/counter_calibration.h"
#include "measure/cpu_figures.h"
#include "probes/interruption_takers.h"
#include "probes/probe.h"
#include "probes/watch_top.h"

namespace jitterd {

// The top-level `loops:` section of the configuration.
struct LoopSettings {
  bool enabled = false;  // a `loops:` section is present
  std::string directory = "/dev/shm";
  // Whose segments are accepted: user names or numeric uids; empty: root and jitterd's own user.
  std::vector<std::string> users;
  std::chrono::nanoseconds stale_after{std::chrono::seconds(10)};
  // A loop whose writer is gone is down this long, then forgotten (its series and, where jitterd
  // may, its file): longer than JitterdLoopDown's `for` (2m), so the alert fires first.
  std::chrono::nanoseconds forget_after{std::chrono::minutes(15)};
  // Each loop's name must begin with its owner's user name and a dot ("trader.rx0"): one accepted
  // user cannot pass its loop off as another's.
  bool owner_prefix = false;
  std::chrono::nanoseconds interval{std::chrono::seconds(1)};
  std::chrono::nanoseconds window{std::chrono::seconds(60)};  // sampler.window: the summaries' span
  bool operator==(const LoopSettings&) const = default;
};

// The accepted users as uids: numbers as written, names through the user database (a name it
// does not know goes to *unknown and is left out); root and jitterd's own user when none is set.
std::vector<uid_t> loop_allowed_users(const std::vector<std::string>& users, std::vector<std::string>* unknown);

class LoopsProbe : public SettingsProbe<LoopSettings> {
 public:
  explicit LoopsProbe(LoopSettings settings);
  std::string_view name() const override { return "loops"; }
  ProbeResult run(ProbeContext& context) override;

 private:
  // Each loop's interruptions by cause, matched with the engine's records of its CPU or estimated
  // from its CPU's interrupt counts.
  struct Causes {
    ino_t inode = 0;
    std::string method;               // bpf, tracepoints or window_deltas: how, since the last run
    std::uint64_t next_sequence = 0;  // matched: the ring's sequence read up to
    std::uint64_t seen_interruptions = 0, seen_ticks = 0;  // window_deltas: the counters at the last run
    std::uint64_t estimated_run = 0;                       // window_deltas: the run that last estimated it
    bool restarted = false;  // this run started it again (first seen, its method changed): nothing attributed
    std::map<std::string, std::uint64_t> interruptions;
    std::map<std::string, double> stolen_seconds;
    std::optional<TopTallies> top;  // who took the loop's interruptions, over the window and since start
  };
  // What one run's attribution reads once for all its loops.
  struct AttributionRun;
  void attribute(ProbeContext& context, std::uint64_t read_ns, ProbeResult& out);
  // The entry of `file` attributed by `method` this run; nullptr the first run it is (or the first
  // since its method changed): its counters and ring are where the next run starts.
  Causes* causes_for(const std::string& file, const LoopState& state, std::string_view method, bool restart);
  void match_loop(const std::string& file, const LoopState& state, KernelWatch& engine, AttributionRun& run);
  void estimate_loop(const std::string& file, const LoopState& state, AttributionRun& run);
  std::map<std::string, std::string> plan_estimates(const HostReader& host, AttributionRun& run) const;
  // What every run ends with: the state the next run starts from, the causes' series and tables.
  void finish_attribution(const HostReader& host, AttributionRun& run, ProbeResult& out);
  // Whether the tracker still holds `file` accepted with `inode`: the same loop, its state kept.
  bool tracks(const std::string& file, ino_t inode) const;
  // The engine that pairs `cpu`'s interruptions this run: the BPF engine, else the watch's
  // (tracepoints); nullptr where neither watches it.
  KernelWatch* engine_of(int cpu) const;
  // Why a loop's interruptions are not matched one by one ("" when they are): they are estimated.
  std::string not_matched_why(const LoopSegmentReading& reading) const;
  std::vector<TimedInterval> monotonic_intervals(const LoopSegmentReading& reading, std::uint64_t from,
                                                 std::map<TickMethod, ClockTickPair>& pairs) const;
  void export_causes(ProbeResult& out) const;
  void export_top(const HostReader& host, ProbeResult& out) const;
  void add_glance(const std::map<std::string, LoopWindowFigures>& figures, ProbeResult& out) const;
  // Each loop's stolen time of this run by cause into its series, and the loops' plots
  // (probes/loops_stolen.cpp); after attribute().
  void record_stolen(std::uint64_t now_ns, ProbeResult& out);

  // A loop's stolen time over the window: what its counters and its attributed causes stood at
  // when last read.
  struct Stolen {
    ino_t inode = 0;
    std::uint64_t read_ns = 0, interrupted_ticks = 0, sampled_ticks = 0;
    bool attributed = false;                 // at that reading its causes were counted (by_cause is their base)
    std::map<std::string, double> by_cause;  // Causes::stolen_seconds then
    StolenSeries series;
  };

  std::vector<std::string> unknown_users_;
  LoopTracker tracker_;
  std::map<std::string, LoopWindow> windows_;  // by file name, for the accepted loops
  std::map<std::string, Causes> causes_;       // by file name, for the loops attributed (matched or estimated)
  std::map<std::string, Stolen> stolen_;       // by file name, for the accepted loops
  std::map<std::string, std::string> not_attributed_;  // by file name: why, this run
  std::shared_ptr<SharedBpfWatch> bpf_owner_;
  BpfWatch* bpf_ = nullptr;
  bool tried_bpf_ = false;
  std::string bpf_why_;
  std::shared_ptr<KernelWatch> watch_engine_;           // the watch's engine, held while a run lasts
  std::string methods_ = "bpf";                         // of the engines that matched the loops when last any did
  CarriedRecords carried_;                              // records of interruptions not read yet
  std::map<TickMethod, ClockTickPair> previous_pairs_;  // counter to CLOCK_MONOTONIC, per counter
  std::map<int, std::uint64_t> steal_before_;           // each CPU's /proc/stat steal at the last run
  std::optional<InterruptSnapshot> interrupts_before_;  // at the last run, where a loop was estimated
  std::map<int, std::uint64_t> smi_before_;             // each watched CPU's SMI count at the last run
  std::uint64_t runs_ = 0;                              // of attribute()
};

// A loop's series labels: loop and cpu, then its own.
ProbeLabels loop_labels(const LoopState& state);

// The metrics, table and typed reading (ProbeResult::loops) of the tracker's last scan (exposed
// for tests): `windows` by file name.
ProbeResult loop_result(const LoopTracker& tracker, const std::map<std::string, LoopWindowFigures>& windows);

}  // namespace jitterd
