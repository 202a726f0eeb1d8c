// SPDX-License-Identifier: Apache-2.0
// Each loop's stolen time by cause, reading by reading over the window (probes/stolen_series.h):
// per cause what attribution matched in this run (probes/loops_probe.h Causes), the rest of what
// the loop's counters added as `not_kept` (its ring entries were overwritten before jitterd read
// them) where it is attributed (matched, or estimated from its CPU's interrupt counts), all of it
// as `not_attributed` where it is not; out of the time the
// loop recorded in the reading (its gaps summed, from the same counters), so a stall that ended in
// the reading is that reading's and no bar passes the whole.
#include <cmath>

#include "host/attribution.h"
#include "probes/loops_probe.h"
#include "probes/stolen_plots.h"

namespace jitterd {
namespace {

std::uint64_t ns_of(double seconds) {
  return static_cast<std::uint64_t>(std::llround(std::max(0.0, seconds) * 1e9));
}

}  // namespace

void LoopsProbe::record_stolen(std::uint64_t now_ns, ProbeResult& out) {
  std::erase_if(stolen_, [&](const auto& entry) { return !tracks(entry.first, entry.second.inode); });
  const double offset = unix_minus_monotonic_now();
  for (const auto& [file, state] : tracker_.loops()) {
    if (!state.accepted) continue;
    const LoopSegmentReading& r = state.reading;
    // `entry`: its causes are counted (their totals the next reading's base); `attributed`: this
    // reading's too, not where it (re)started nor where its CPU's counts were unreadable.
    const auto causes = causes_.find(file);
    const bool entry = causes != causes_.end();
    const bool attributed = entry && !causes->second.restarted && not_attributed_.count(file) == 0;
    const auto [found, first] = stolen_.try_emplace(
        file, Stolen{.inode = state.inode,
                     .by_cause = {},
                     .series = StolenSeries(static_cast<std::uint64_t>(settings_.window.count()))});
    Stolen& stolen = found->second;
    if (!first && now_ns > stolen.read_ns && r.header.hertz > 0) {
      const auto added_seconds = [&](std::uint64_t now, std::uint64_t then) {
        return static_cast<double>(counter_rise(now, then)) / static_cast<double>(r.header.hertz);
      };
      const double counted = added_seconds(r.counts.interrupted_ticks, stolen.interrupted_ticks);
      const double recorded = added_seconds(r.counts.sampled_ticks, stolen.sampled_ticks);
      StolenNs by_cause{};
      double matched = 0;
      if (attributed && stolen.attributed)
        for (const auto& [cause, seconds] : causes->second.stolen_seconds) {
          const auto before = stolen.by_cause.find(cause);
          const double added = seconds - (before == stolen.by_cause.end() ? 0.0 : before->second);
          const std::optional<std::size_t> index = stolen_cause_index(cause);
          if (!index || added <= 0) continue;
          by_cause[*index] += ns_of(added);
          matched += added;
        }
      by_cause[*stolen_cause_index(attributed && stolen.attributed ? "not_kept" : "not_attributed")] +=
          ns_of(counted - matched);
      stolen.series.add(now_ns, now_ns - stolen.read_ns, by_cause, ns_of(recorded));
    }
    stolen.read_ns = now_ns;
    stolen.interrupted_ticks = r.counts.interrupted_ticks;
    stolen.sampled_ticks = r.counts.sampled_ticks;
    stolen.attributed = entry;
    stolen.by_cause = entry ? causes->second.stolen_seconds : std::map<std::string, double>{};
    const TopTallies* top = entry && causes->second.top ? &*causes->second.top : nullptr;
    const auto why = not_attributed_.find(file);
    std::string note;
    if (why != not_attributed_.end())
      note = "not attributed: " + why->second;
    else if (entry && causes->second.method == window_deltas_method)
      note = "estimated: each reading's stolen time shared among cpu " + std::to_string(r.header.cpu) +
             "'s interrupt counts (" + std::string(window_deltas_method) + ")";
    out.stolen.push_back(
        stolen_plot(stolen.series, static_cast<int>(r.header.cpu), r.header.name, top, offset, note));
  }
}

}  // namespace jitterd
