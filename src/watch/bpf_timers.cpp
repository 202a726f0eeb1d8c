// SPDX-License-Identifier: Apache-2.0
#include "watch/bpf_timers.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "watch/bpf_map_reads.h"
#include "watch_timers_shared.h"

namespace jitterd {

TimerStartsReading read_timer_starts(int starts_fd, int counters_fd, std::size_t possible_cpus,
                                     const KernelSymbols& symbols) {
  static_assert(JD_TIMER_FUNCTIONS <= bpf_maps::kHashEntries,
                "the walk reads every entry (the loader sizes the "
                "map up to kHashEntries)");
  TimerStartsReading out;
  // Two addresses may share a name (a function and a copy of it): their counts add up.
  std::map<std::tuple<int, std::string, std::string>, std::uint64_t> named;
  bpf_maps::walk_hash<jd_timer_key, std::uint64_t>(starts_fd, [&](const jd_timer_key& key, std::uint64_t count) {
    named[{static_cast<int>(key.cpu), key.kind == JD_TIMER_HRTIMER ? "hrtimer" : "timer",
           symbols.name_of(key.function)}] += count;
    if (!symbols.starts_at(key.function)) ++out.inexact;
  });
  for (const auto& [key, count] : named)
    out.starts.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), count});
  std::stable_sort(out.starts.begin(), out.starts.end(), [](const TimerStarts& a, const TimerStarts& b) {
    return a.cpu != b.cpu ? a.cpu < b.cpu : a.count > b.count;
  });
  static_assert(sizeof(jd_timer_counters) % 8 == 0);
  std::vector<jd_timer_counters> counters(possible_cpus);
  const std::uint32_t zero = 0;
  if (bpf_map_lookup_elem(counters_fd, &zero, counters.data()) == 0)
    for (const jd_timer_counters& c : counters) out.untracked += c.untracked;
  out.names_why_not = symbols.why_not();
  return out;
}

}  // namespace jitterd
