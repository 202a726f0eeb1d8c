// SPDX-License-Identifier: Apache-2.0
// Matching the BPF engine's records (watch/bpf_watch.h) with the gaps a loop recorded, a
// sampler's or an application's own: which record took each gap, and which records to keep for
// the next match. Pure functions over plain values; safe from any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "host/trace_format.h"
#include "watch/bpf_watch.h"

namespace jitterd {

// For each interval (CLOCK_MONOTONIC, sorted by start), the record that took the most own time
// among those overlapping it within `slack_ns` (records of the interval's CPU only, any order);
// nullptr for none. Nested records overlap their parent: the one that took longer wins.
std::vector<const PairedOutlier*> match_bpf_records(const std::vector<TimedInterval>& intervals,
                                                    const std::vector<PairedOutlier>& records,
                                                    std::uint64_t slack_ns);

// The records to keep for the next match: an interruption read at `read_ns` (CLOCK_MONOTONIC)
// has its records in the ring already, but the ring is drained later, so the records of the
// interruptions that end after the read (read next time) are taken now too: those that end
// within `slack_ns` of the read or after it.
std::vector<PairedOutlier> records_after(std::vector<PairedOutlier> records, std::uint64_t read_ns,
                                         std::uint64_t slack_ns);

}  // namespace jitterd
