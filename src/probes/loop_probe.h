// SPDX-License-Identifier: Apache-2.0
// Loops probe: the applications' own busy-polling loops, which record their gaps with the loop
// probe library (include/jitterd/loop_probe.h) into segments jitterd reads (watch/loop_reader.h,
// every segment hostile input). Every interval (1 s by default) it reads each segment of the
// configured directory once and exports it as a sampled CPU's families are exported, with the
// prefix jitterd_loop_ and the labels loop and cpu (plus the loop's own labels): the gap
// histogram, interruptions, stolen and sampled time, the window's quantiles and exact max, the
// floor and threshold, up and last seen; and jitterd_loop_refused_total by reason. Refusals and
// loops coming, going up and down are warnings for the daemon's log, one line per change. Used
// by one thread at a time (the probe scheduler's, or `jitterd report loops`).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "measure/cpu_figures.h"
#include "measure/rolling_window.h"
#include "probes/probe.h"
#include "watch/loop_reader.h"

namespace jitterd {

// The top-level `loops:` section of the configuration.
struct LoopSettings {
  bool enabled = false;  // a `loops:` section is present
  std::string directory = "/dev/shm";
  // Whose segments are accepted: user names or numeric uids; empty: root and jitterd's own user.
  std::vector<std::string> users;
  std::chrono::nanoseconds stale_after{std::chrono::seconds(10)};
  std::chrono::nanoseconds interval{std::chrono::seconds(1)};
  std::chrono::nanoseconds window{std::chrono::seconds(60)};  // sampler.window: the summaries' span
  bool operator==(const LoopSettings&) const = default;
};

// The accepted users as uids: numbers as written, names through the user database (a name it
// does not know goes to *unknown and is left out); root and jitterd's own user when none is set.
std::vector<uid_t> loop_allowed_users(const std::vector<std::string>& users, std::vector<std::string>* unknown);

class LoopProbe : public Probe {
 public:
  explicit LoopProbe(LoopSettings settings);
  std::string_view name() const override { return "loops"; }
  std::chrono::nanoseconds interval() const override { return settings_.interval; }
  ProbeResult run(ProbeContext& context) override;

 private:
  struct Window {
    ino_t inode = 0;
    RollingWindow gaps;
    // The live baseline's history (probes/application_windows.h): what the counters added at each
    // reading over the window, oldest first, and the reading before.
    std::deque<GapCountsTicks> added;
    std::optional<GapCountsTicks> previous;
  };
  LoopSettings settings_;
  std::vector<std::string> unknown_users_;
  LoopTracker tracker_;
  std::map<std::string, Window> windows_;  // by file name, for the accepted loops
};

// The metrics and table of the tracker's last scan (exposed for tests): `summaries` by file name.
ProbeResult loop_result(const LoopTracker& tracker, const std::map<std::string, CpuFigures>& summaries);

}  // namespace jitterd
