// SPDX-License-Identifier: Apache-2.0
#include "probes/pinning_probe.h"

#include "host/cpu_list.h"
#include "host/text.h"
#include "measure/migration_loop.h"

namespace jitterd {

namespace {
constexpr double kPinningQuantiles[] = {0.5, 0.99, 0.999};
}  // namespace

std::vector<ProbeMetric> pinning_metrics(const MigrationLoopResult& pinned, const MigrationLoopResult& unpinned,
                                         const TickScale& scale) {
  std::vector<ProbeMetric> out;
  for (const auto& [mode, r] : {std::pair{"pinned", &pinned}, {"unpinned", &unpinned}}) {
    std::vector<std::pair<double, double>> quantiles;
    for (const double q : kPinningQuantiles) quantiles.emplace_back(q, scale.to_seconds(r->gaps.quantile(q)));
    out.push_back(summary_metric(
        "jitterd_pinning_gap_seconds",
        "Gaps of the pinning probe's last loop, pinned or unpinned (quantiles are the upper edge of "
        "their histogram bucket).",
        {{"mode", mode}}, std::move(quantiles), r->samples, scale.to_seconds(r->sum_ticks)));
    out.push_back(gauge("jitterd_pinning_last_window_migrations",
                        "CPU changes the pinning probe's loop saw in its last window, pinned or unpinned.",
                        {{"mode", mode}}, static_cast<double>(r->migrations)));
  }
  return out;
}

ProbeResult PinningProbe::run(ProbeContext& context) {
  const TickScale scale(context.frequency.hertz);
  const std::uint64_t window = scale.from_ns(static_cast<std::uint64_t>(settings_.window.count()));
  MigrationLoopResult pinned, unpinned;
  run_on_cpus({context.housekeeping.front()}, [&] { pinned = run_migration_loop(context.method, window); });
  context.check_cancelled();
  run_on_cpus(context.housekeeping, [&] { unpinned = run_migration_loop(context.method, window); });

  ProbeResult result;
  ProbeTable table{"gap loop pinned vs unpinned, " +
                       decimal_text(std::chrono::duration<double>(settings_.window).count(), 3) + " s each",
                   {"mode", "cpus", "samples", "p50_ns", "p99_ns", "p99.9_ns", "migrations", "cpus_seen"},
                   {}};
  const std::pair<const char*, const MigrationLoopResult*> modes[] = {{"pinned", &pinned},
                                                                      {"unpinned", &unpinned}};
  for (const auto& [mode, r] : modes) {
    const std::string allowed = std::string(mode) == "pinned" ? std::to_string(context.housekeeping.front())
                                                              : format_cpu_list(context.housekeeping);
    std::vector<Cell> row{mode, allowed, r->samples};
    for (const double q : kPinningQuantiles) row.push_back(Cell(scale.to_seconds(r->gaps.quantile(q)) * 1e9, 1));
    row.push_back(r->migrations);
    row.push_back(format_cpu_list(r->cpus_seen));
    table.rows.push_back(std::move(row));
  }
  result.tables.push_back(std::move(table));
  result.metrics = pinning_metrics(pinned, unpinned, scale);
  if (context.housekeeping.size() < 2) {
    result.notes.push_back("only one housekeeping CPU: the unpinned loop has nowhere to migrate to");
  }
  result.notes.push_back("migrations are counted from sched_getcpu() every 1024 gaps");
  return result;
}

}  // namespace jitterd
