// SPDX-License-Identifier: Apache-2.0
#include "probes/watch_glance.h"

#include <algorithm>

#include "host/text.h"

namespace jitterd {

std::pair<Cell, Cell> worst_preempter(const TopTally& top) {
  const auto first =
      std::find_if(top.rows.begin(), top.rows.end(), [](const TallyRow& r) { return r.rank_by_time == 1; });
  if (first == top.rows.end() || top.total.ns == 0) return {Cell(), Cell()};
  const auto [comm, task_class] = preempter_of(first->name);
  return {Cell(printable(comm) + " (" + task_class + ")"),
          Cell(static_cast<double>(first->figures.ns) / static_cast<double>(top.total.ns), 4)};
}

ProbeTable watch_glance_table(const std::deque<std::vector<WatchWindow>>& windows, const WatchReading& last,
                              const WatchTop* top, std::string_view method) {
  ProbeTable table{std::string(kWatchGlanceTitle) + " (" + std::string(method) +
                       "; worst_share: of the preempted time; timer_per_s: the last reading)",
                   {"cpu", "window_s", "stolen_share", "preemptions_per_s", "worst_preempter", "worst_share",
                    "longest_us", "timer_per_s"},
                   {}};
  for (const WatchedCpu& c : last.cpus) {
    WatchedFigures sum;
    for (const std::vector<WatchWindow>& reading : windows)
      for (const WatchWindow& w : reading)
        if (w.cpu == c.cpu && w.seconds > 0) add_stretch(sum, w);
    std::pair<Cell, Cell> worst{Cell(top ? "" : "(not named by counts)"), Cell()};
    if (top != nullptr) {
      const auto found = top->cpus().find(c.cpu);
      worst = found == top->cpus().end() ? std::pair<Cell, Cell>{}
                                         : worst_preempter(top_of(found->second.preempters_window.merged()));
    }
    const bool timed = c.online && last.window_seconds > 0;
    if (sum.seconds <= 0) {
      table.rows.push_back({c.cpu, Cell(), Cell(), Cell(), worst.first, worst.second, Cell(), Cell()});
      continue;
    }
    table.rows.push_back(
        {c.cpu, Cell(sum.seconds, 1), Cell(sum.stolen_seconds / sum.seconds, 6),
         Cell(static_cast<double>(sum.preemptions) / sum.seconds, 2), worst.first, worst.second,
         sum.longest_ns ? Cell(*sum.longest_ns * 1e-3, 1) : Cell(),
         timed ? Cell(static_cast<double>(c.window_timer_interrupts) / last.window_seconds, 1) : Cell()});
  }
  return table;
}

ProbeTable loop_glance_table() {
  return {std::string(kLoopGlanceTitle) +
              " (preemptions and the worst preempter: where its interruptions are "
              "attributed; worst_share: of the preempted time)",
          {"loop", "cpu", "window_s", "stolen_share", "interruptions_per_s", "preemptions_per_s",
           "worst_preempter", "worst_share", "longest_us"},
          {}};
}

void add_loop_glance_row(ProbeTable& table, const std::string& loop, int cpu, const CpuFigures& f,
                         const TopTallies* top) {
  if (!f.valid || f.span_seconds <= 0) {
    table.rows.push_back({loop, cpu, Cell(), Cell(), Cell(), Cell(), Cell(), Cell(), Cell()});
    return;
  }
  Cell preemptions;
  std::pair<Cell, Cell> worst;
  if (top != nullptr) {
    const TopTally window = top_of(top->preempters_window.merged());
    preemptions = Cell(static_cast<double>(window.total.count) / f.span_seconds, 2);
    worst = worst_preempter(window);
  }
  table.rows.push_back({loop, cpu, Cell(f.span_seconds, 1), Cell(f.stolen_seconds / f.span_seconds, 6),
                        Cell(static_cast<double>(f.interruptions) / f.span_seconds, 2), preemptions, worst.first,
                        worst.second, Cell(f.max_ns * 1e-3, 1)});
}

}  // namespace jitterd
