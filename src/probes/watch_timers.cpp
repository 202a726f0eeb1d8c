// SPDX-License-Identifier: Apache-2.0
#include "probes/watch_timers.h"

#include <algorithm>
#include <map>

#include "host/text.h"

namespace jitterd {
namespace {

// Each CPU's entries, most first (as read): those already shown and, while a CPU and kind has
// fewer than kTimerFunctionsPerCpu shown, the next most started; the rest summed as "other".
std::vector<TimerStarts> shown_per_cpu(const std::vector<TimerStarts>& starts, TimerFunctionsShown& shown) {
  std::vector<TimerStarts> out;
  std::map<std::pair<int, std::string>, std::uint64_t> other;
  for (const TimerStarts& s : starts) {
    std::set<std::string>& given = shown[{s.cpu, s.kind}];
    if (given.count(s.function) != 0 || (given.size() < kTimerFunctionsPerCpu && given.insert(s.function).second))
      out.push_back(s);
    else
      other[{s.cpu, s.kind}] += s.count;
  }
  for (const auto& [key, count] : other) out.push_back({key.first, key.second, "other", count});
  return out;
}

}  // namespace

void add_timer_starts(const TimerStartsReading& reading, const WatchReading& counts, TimerFunctionsShown& shown,
                      ProbeResult& result) {
  const std::vector<TimerStarts> top = shown_per_cpu(reading.starts, shown);
  for (const TimerStarts& s : top)
    result.metrics.push_back(
        counter("jitterd_watch_timer_starts_total",
                "Timers started on the watched CPU by the function they run (timer:hrtimer_start, "
                "timer:timer_start; bpf), "
                "the first 16 seen per CPU and kind (most started first), the rest as function=\"other\".",
                {{"cpu", std::to_string(s.cpu)}, {"kind", s.kind}, {"function", printable(s.function)}},
                static_cast<double>(s.count)));
  result.metrics.push_back(counter("jitterd_watch_timer_starts_untracked_total",
                                   "Timer starts on watched CPUs whose function the program's full map (256 "
                                   "entries per watched CPU, 1,024 to 4,096) could not take (bpf).",
                                   {}, static_cast<double>(reading.untracked)));
  ProbeTable table{
      "timers started on the watched cpus by function, since the watch began (bpf): who re-arms the tick",
      {"cpu", "kind", "function", "count"},
      {}};
  for (const TimerStarts& s : top) table.rows.push_back({s.cpu, s.kind, printable(s.function), s.count});
  const auto after = std::find_if(result.tables.begin(), result.tables.end(), [](const ProbeTable& t) {
    return t.title.starts_with("tick stop failures by dependency");
  });
  result.tables.insert(after == result.tables.end() ? after : std::next(after), std::move(table));
  if (!reading.names_why_not.empty())
    result.notes.push_back("timer functions are shown as addresses: " + reading.names_why_not);
  const bool any_nohz =
      std::any_of(counts.cpus.begin(), counts.cpus.end(), [](const WatchedCpu& c) { return c.nohz_full; });
  if (!any_nohz)
    result.notes.push_back(
        "no watched cpu is nohz_full, so their tick never stops: the timers above are what is set there, "
        "not what restarted a stopped tick");
}

}  // namespace jitterd
