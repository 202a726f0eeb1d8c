// SPDX-License-Identifier: Apache-2.0
#include "probes/stolen_plots.h"

#include <ctime>

#include "measure/clock_ns.h"

namespace jitterd {

double unix_minus_monotonic_now() {
  return static_cast<double>(clock_ns(CLOCK_REALTIME)) * 1e-9 -
         static_cast<double>(clock_ns(CLOCK_MONOTONIC)) * 1e-9;
}

StolenPlot stolen_plot(const StolenSeries& series, int cpu, std::string loop, const TopTallies* top,
                       double unix_minus_monotonic, std::string note) {
  StolenPlot plot;
  plot.cpu = cpu;
  plot.loop = std::move(loop);
  plot.window_seconds = static_cast<double>(series.window_ns()) / 1e9;  // whole seconds stay whole
  plot.step_seconds = static_cast<double>(series.step_ns()) / 1e9;
  plot.points = stolen_plot_points(series, unix_minus_monotonic);
  plot.note = std::move(note);
  if (top == nullptr) return plot;
  plot.named = true;
  const TopTally window = top_of(top->preempters_window.merged(), kStolenPreempters);
  plot.preempted_seconds = static_cast<double>(window.total.ns) * 1e-9;
  plot.unnamed_seconds = static_cast<double>(window.unnamed.ns) * 1e-9;
  plot.preemptions = window.total.count;
  for (const TallyRow& row : window.rows) {
    if (row.rank_by_time == 0 || row.figures.ns == 0) continue;  // in the top by count only
    const auto [comm, task_class] = preempter_of(row.name);
    plot.preempters.push_back({comm, task_class, static_cast<double>(row.figures.ns) * 1e-9, row.figures.count});
  }
  return plot;
}

}  // namespace jitterd
