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
// Attribution: where the loop's CPU is watched and an engine pairs its interruptions (the
// context's BPF engine, watch/shared_bpf_watch.h, where it covers the CPU; else the engine the
// watch opened, its tracepoints, ProbeContext::watch_engine), each interruption the loop's ring
// records is matched with the engine's records of that CPU (down to a quarter of the loop's
// threshold), as the attribution probe matches a sampler's, and counted by cause in
// jitterd_loop_interruptions_by_cause_total and jitterd_loop_stolen_seconds_by_cause_total; the
// loop's counter must be one jitterd can map to CLOCK_MONOTONIC (the TSC, the arm64 virtual counter
// or CLOCK_MONOTONIC itself).
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

class LoopsProbe : public Probe {
 public:
  explicit LoopsProbe(LoopSettings settings);
  std::string_view name() const override { return "loops"; }
  std::chrono::nanoseconds interval() const override { return settings_.interval; }
  ProbeResult run(ProbeContext& context) override;

 private:
  // Each loop's interruptions by cause, matched with the engine's records of its CPU.
  struct Causes {
    ino_t inode = 0;
    std::uint64_t next_sequence = 0;  // the ring's sequence read up to
    std::map<std::string, std::uint64_t> interruptions;
    std::map<std::string, double> stolen_seconds;
    std::optional<TopTallies> top;  // who took the loop's interruptions, over the window and since start
  };
  void attribute(ProbeContext& context, std::uint64_t read_ns, ProbeResult& out);
  // The engine that pairs `cpu`'s interruptions this run: the BPF engine, else the watch's
  // (tracepoints); nullptr where neither watches it.
  KernelWatch* engine_of(int cpu) const;
  std::string not_attributed_why(const LoopSegmentReading& reading) const;
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
    bool attributed = false;                 // at that reading
    std::map<std::string, double> by_cause;  // Causes::stolen_seconds then
    StolenSeries series;
  };

  LoopSettings settings_;
  std::vector<std::string> unknown_users_;
  LoopTracker tracker_;
  std::map<std::string, LoopWindow> windows_;  // by file name, for the accepted loops
  std::map<std::string, Causes> causes_;       // by file name, for the loops whose causes are matched
  std::map<std::string, Stolen> stolen_;       // by file name, for the accepted loops
  std::shared_ptr<SharedBpfWatch> bpf_owner_;
  BpfWatch* bpf_ = nullptr;
  bool tried_bpf_ = false;
  std::string bpf_why_;
  std::shared_ptr<KernelWatch> watch_engine_;           // the watch's engine, held while a run lasts
  std::string methods_ = "bpf";                         // of the engines that matched the loops when last any did
  CarriedRecords carried_;                              // records of interruptions not read yet
  std::map<TickMethod, ClockTickPair> previous_pairs_;  // counter to CLOCK_MONOTONIC, per counter
  std::map<int, std::uint64_t> steal_before_;           // each CPU's /proc/stat steal at the last run
};

// The metrics, table and typed reading (ProbeResult::loops) of the tracker's last scan (exposed
// for tests): `windows` by file name.
ProbeResult loop_result(const LoopTracker& tracker, const std::map<std::string, LoopWindowFigures>& windows);

}  // namespace jitterd
