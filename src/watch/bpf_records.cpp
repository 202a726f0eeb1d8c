// SPDX-License-Identifier: Apache-2.0
#include "watch/bpf_records.h"

#include <algorithm>

namespace jitterd {

std::vector<const PairedOutlier*> match_bpf_records(const std::vector<TimedInterval>& intervals,
                                                    const std::vector<PairedOutlier>& records,
                                                    std::uint64_t slack_ns) {
  // By end: an interval's records start at the first that ends after it began, and stop at the
  // first that both starts and ends after it ended (a record is a whole interruption, so one that
  // began later cannot have a parent overlapping the interval: the sampler ran in between).
  std::vector<const PairedOutlier*> by_end;
  by_end.reserve(records.size());
  for (const PairedOutlier& r : records) by_end.push_back(&r);
  std::sort(by_end.begin(), by_end.end(),
            [](const PairedOutlier* l, const PairedOutlier* r) { return l->end_ns < r->end_ns; });
  std::vector<const PairedOutlier*> out;
  out.reserve(intervals.size());
  for (const TimedInterval& interval : intervals) {
    const std::uint64_t from = interval.start_ns > slack_ns ? interval.start_ns - slack_ns : 0;
    const std::uint64_t to = interval.end_ns + slack_ns;
    auto it = std::lower_bound(by_end.begin(), by_end.end(), from,
                               [](const PairedOutlier* r, std::uint64_t t) { return r->end_ns < t; });
    const PairedOutlier* best = nullptr;
    for (; it != by_end.end() && ((*it)->start_ns <= to || (*it)->end_ns <= to); ++it) {
      if ((*it)->start_ns > to) continue;
      if (!best || (*it)->duration_ns > best->duration_ns) best = *it;
    }
    out.push_back(best);
  }
  return out;
}

std::vector<PairedOutlier> records_after(std::vector<PairedOutlier> records, std::uint64_t read_ns,
                                         std::uint64_t slack_ns) {
  std::erase_if(records, [&](const PairedOutlier& r) { return r.end_ns + slack_ns < read_ns; });
  return records;
}

}  // namespace jitterd
