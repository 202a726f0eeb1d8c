// SPDX-License-Identifier: Apache-2.0
#include "probes/interruption_takers.h"

#include <algorithm>

#include "host/attribution.h"

namespace jitterd {

std::vector<std::string> exported_causes(bool one_by_one) {
  std::vector<std::string> out;
  for (std::string_view cause : cause_names)
    if (one_by_one || !cause.starts_with("softirq_")) out.emplace_back(cause);
  if (one_by_one) out.insert(out.end(), {std::string(preempted_cause), std::string(not_kept_cause)});
  out.insert(out.end(), {std::string(smi_cause), std::string(hypervisor_cause), std::string(unexplained_cause)});
  return out;
}

std::vector<const PairedOutlier*> match_records(const std::vector<TimedInterval>& intervals,
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

std::vector<std::optional<Taker>> takers_from_records(const std::vector<TimedInterval>& intervals,
                                                      const std::vector<PairedOutlier>& records,
                                                      std::uint64_t slack_ns) {
  std::vector<std::optional<Taker>> out;
  for (const PairedOutlier* record : match_records(intervals, records, slack_ns)) {
    if (!record) {
      out.emplace_back();
      continue;
    }
    out.push_back(Taker{std::string(watch_source_cause(record->source)),
                        std::string(watch_source_name(record->source)), record->name,
                        watch_source_task_class(record->source), record});
  }
  return out;
}

void TakerTally::add(const Taker& taker, std::uint64_t ns) {
  auto& [count, longest] = named_[{taker.cause, taker.source, taker.name}];
  count += 1;
  longest = std::max(longest, ns);
}

std::vector<TakerTally::Row> TakerTally::top(std::size_t limit) const {
  std::vector<Row> rows;
  for (const auto& [key, value] : named_)
    rows.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), value.first, value.second});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& l, const Row& r) { return l.count > r.count; });
  if (rows.size() > limit) rows.resize(limit);
  return rows;
}

std::vector<PairedOutlier>& CarriedRecords::add(int cpu, std::vector<PairedOutlier> taken) {
  added_.insert(cpu);
  std::vector<PairedOutlier>& records = records_[cpu];
  records.insert(records.end(), std::make_move_iterator(taken.begin()), std::make_move_iterator(taken.end()));
  return records;
}

void CarriedRecords::carry(std::uint64_t read_ns, std::uint64_t horizon_ns) {
  // An interruption read at `read_ns` has its records in the ring already, but the ring is drained
  // later, and one in progress at the read is read next time: the records that end within
  // `horizon_ns` of the read or after it are kept.
  for (int cpu : added_)
    std::erase_if(records_[cpu], [&](const PairedOutlier& r) { return r.end_ns + horizon_ns < read_ns; });
  added_.clear();
}

}  // namespace jitterd
