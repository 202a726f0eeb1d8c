// SPDX-License-Identifier: Apache-2.0
// The application's side of `jitterd baseline` (format 1.2): while the samplers run, the watched
// CPUs (a `watch:` section) are read once per sub-window by the watch's own engines (bpf where its
// program loads and the configuration allows, else counts, as the watch probe chooses), and the
// application's loops (a `loops:` section) by the loops probe's reader, each segment read as
// hostile input. Every reading becomes typed figures (probes/watch_window.h, the loops' gap
// counts) that the one recorder (report/baseline_recorder.h) turns into the file's watched[] and
// loops[]. Runs on the calling (housekeeping) thread; nothing here runs on a watched CPU.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "host/host_reader.h"
#include "loops/loop_reader.h"
#include "probes/probes_settings.h"
#include "report/baseline_recorder.h"
#include "watch/bpf_watch.h"
#include "watch/counts_engine.h"
#include "watch/kernel_watch.h"

namespace jitterd {

class ApplicationRecording {
 public:
  // `watched`: the sampling plan's watched CPUs. Loads the BPF program now (where it applies), so
  // loading is not inside a sub-window; takes the readings every later one is counted from.
  ApplicationRecording(const ProbesSettings& settings, std::vector<int> watched, const HostReader& host);
  ~ApplicationRecording();
  ApplicationRecording(const ApplicationRecording&) = delete;
  ApplicationRecording& operator=(const ApplicationRecording&) = delete;

  // One reading: closes a sub-window of every watched CPU and loop.
  void read();

  // The watched CPUs and loops recorded, with their totals.
  std::vector<BaselineWatched> watched() const;
  std::vector<BaselineLoop> loops() const;
  // For the file's configuration: "watch_method" (and why), "loops_directory"; none when unused.
  BaselineFields configuration() const;
  // One line each, for the log: a loop seen twice by name, a watch that could not read.
  std::vector<std::string> take_warnings();

 private:
  struct LoopRecord {
    std::string file;
    std::uint64_t first_heartbeat = 0;
    GapCountsTicks first, previous;
    BaselineLoop loop;
    bool seen = false;
  };
  void read_watch();
  void read_loops();

  const HostReader& host_;
  WatchSettings watch_settings_;
  LoopSettings loop_settings_;
  std::vector<int> watched_cpus_;
  std::unique_ptr<CountsEngine> engine_;
  std::unique_ptr<KernelWatch> kernel_;  // bpf, or tracepoints when asked for; none: counts
  std::string method_, method_reason_;
  std::vector<WatchedCpu> previous_counts_;
  PairedReading previous_bpf_;
  std::vector<BaselineWatched> watched_;
  std::unique_ptr<LoopTracker> tracker_;
  std::map<std::string, LoopRecord> loops_;  // by the loop's name
  std::vector<std::string> warnings_;
};

}  // namespace jitterd
