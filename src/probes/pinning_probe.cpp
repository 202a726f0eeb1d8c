#include "probes/pinning_probe.h"

#include "host/cpu_list.h"
#include "measure/migration_loop.h"

namespace jitterd {

ProbeResult PinningProbe::run(ProbeContext& context) {
  const TickScale scale(context.frequency.hertz);
  const std::uint64_t window = scale.from_ns(static_cast<std::uint64_t>(settings_.window.count()));
  MigrationLoopResult pinned, unpinned;
  run_on_cpus({context.housekeeping.front()}, [&] { pinned = run_migration_loop(context.method, window); });
  context.check_cancelled();
  run_on_cpus(context.housekeeping, [&] { unpinned = run_migration_loop(context.method, window); });

  ProbeResult result;
  ProbeTable table{"gap loop pinned vs unpinned, " +
                       format_number(std::chrono::duration<double>(settings_.window).count(), 3) + " s each",
                   {"mode", "cpus", "samples", "p50_ns", "p99_ns", "p99.9_ns", "migrations", "cpus_seen"},
                   {}};
  const std::pair<const char*, const MigrationLoopResult*> modes[] = {{"pinned", &pinned},
                                                                      {"unpinned", &unpinned}};
  for (const auto& [mode, r] : modes) {
    const std::string allowed = std::string(mode) == "pinned" ? std::to_string(context.housekeeping.front())
                                                              : format_cpu_list(context.housekeeping);
    std::vector<std::string> row{mode, allowed, std::to_string(r->samples)};
    for (const auto& [stat, q] : {std::pair{"p50", 0.5}, {"p99", 0.99}, {"p99.9", 0.999}}) {
      const double seconds = scale.to_seconds(r->gaps.quantile(q));
      result.metrics.push_back(
          gauge("jitterd_pinning_gap_seconds",
                "Gap percentile of the pinning probe's loop (upper edge of its bucket), pinned or unpinned.",
                {{"mode", mode}, {"stat", stat}}, seconds));
      row.push_back(format_number(seconds * 1e9, 1));
    }
    result.metrics.push_back(gauge("jitterd_pinning_migrations",
                                   "CPU changes seen during the pinning probe's last window.", {{"mode", mode}},
                                   static_cast<double>(r->migrations)));
    row.push_back(std::to_string(r->migrations));
    row.push_back(format_cpu_list(r->cpus_seen));
    table.rows.push_back(std::move(row));
  }
  result.tables.push_back(std::move(table));
  if (context.housekeeping.size() < 2) {
    result.notes.push_back("only one housekeeping CPU: the unpinned loop has nowhere to migrate to");
  }
  result.notes.push_back("migrations are counted from sched_getcpu() every 1024 gaps");
  return result;
}

}  // namespace jitterd
