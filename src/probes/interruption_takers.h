// SPDX-License-Identifier: Apache-2.0
// What took each interruption of a sampled CPU or a loop: one matcher over the paired records of
// the engine in use (watch/kernel_watch.h: the BPF program's, or the tracepoints engine's, which
// pairs perf's records of the same tracepoints into the same records), so that attribution and the
// loops name and book a gap alike whichever method sees single interruptions. Window deltas see
// counts, not interruptions, and stay in host/attribution.h (probes/loops_attribution.cpp shares
// them for loops). Plain values; CarriedRecords is used by one thread at a time (its probe's).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "host/trace_format.h"
#include "watch/kernel_watch.h"

namespace jitterd {

// The cause of the interruptions a sampler's (or loop's) ring overwrote before they were read.
inline constexpr std::string_view not_kept_cause = "not_kept";

// Every cause a sampled CPU or a loop exports, zero or not, so the series set is stable: where an
// engine names the interruptions one by one, attribution's cause_names, preempted and not_kept;
// by window deltas alone the hard-IRQ causes only (softirqs get no share there); then smi,
// hypervisor and unexplained.
std::vector<std::string> exported_causes(bool one_by_one);

// One interruption's taker, as the engine's record names it.
struct Taker {
  std::string cause;            // host/attribution.h's cause_names, or "preempted"
  std::string source;           // the watch's source name: "local_timer", "device_irq", "softirq_NET_RX", ...
  std::string name;             // an IRQ's handler, a preempting task's name; empty for the rest
  std::string_view task_class;  // a preemption: the task's class (host/task_classes.h); else empty
  const PairedOutlier* record = nullptr;  // the engine's record (valid while its records are)
};

// For each interval (CLOCK_MONOTONIC, sorted by start), the record that took the most own time
// among those overlapping it within `slack_ns` (records of the interval's CPU only, any order);
// nullptr for none. Nested records overlap their parent: the one that took longer wins.
std::vector<const PairedOutlier*> match_records(const std::vector<TimedInterval>& intervals,
                                                const std::vector<PairedOutlier>& records, std::uint64_t slack_ns);

// Per interval, the taker of match_records' record; std::nullopt for none.
std::vector<std::optional<Taker>> takers_from_records(const std::vector<TimedInterval>& intervals,
                                                      const std::vector<PairedOutlier>& records,
                                                      std::uint64_t slack_ns);

// The takers of one CPU's (or loop's) interruptions over a window, by (cause, source, name): how
// many, and the longest, in ns.
class TakerTally {
 public:
  void add(const Taker& taker, std::uint64_t ns);
  struct Row {
    std::string cause, source, name;
    std::uint64_t count = 0, longest_ns = 0;
  };
  // The `limit` with the most interruptions, most first (ties: by cause, source, name).
  std::vector<Row> top(std::size_t limit) const;

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<std::uint64_t, std::uint64_t>> named_;
};

// The engine's records of each CPU between two matches: those taken now and those kept from the
// last match, so an interruption read just before its records were drained still finds them next
// time.
// How far before a read CarriedRecords keeps records: an interruption in progress when the ring
// was read (it is pushed when it ends) may have begun that long before, and its records that ended
// before the read (a device IRQ, then the task that preempted) must still be there for its match.
// A second: a gap longer than that is named by the records of its last second.
inline constexpr std::uint64_t kCarryHorizonNs = 1'000'000'000;

class CarriedRecords {
 public:
  // The CPU's records for this match: those carried, then `taken`.
  std::vector<PairedOutlier>& add(int cpu, std::vector<PairedOutlier> taken);
  // After the match: keep, of the records of each CPU added since the last carry, those that may
  // belong to an interruption read next: ending within `horizon_ns` of `read_ns` (CLOCK_MONOTONIC)
  // or after it. A CPU not matched this time keeps its records whole for its next match.
  void carry(std::uint64_t read_ns, std::uint64_t horizon_ns);
  // Whether `cpu`'s records were added since the last carry.
  bool added(int cpu) const { return added_.count(cpu) != 0; }

 private:
  std::map<int, std::vector<PairedOutlier>> records_;
  std::set<int> added_;
};

}  // namespace jitterd
