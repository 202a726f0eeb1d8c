#include "probes/kernel_cost_probe.h"

#include "measure/op_cost.h"

namespace jitterd {

ProbeResult KernelCostProbe::run(ProbeContext& context) {
  const int cpu = settings_.cpu.value_or(context.housekeeping.front());
  std::vector<OpCost> costs;
  context.run_on_cpu(cpu, [&] { costs = measure_kernel_costs(context.method, settings_.samples); });
  const TickScale scale(context.frequency.hertz);
  ProbeResult result;
  ProbeTable table{"kernel operation costs on cpu " + std::to_string(cpu),
                   {"op", "samples", "min_ticks", "median_ticks", "p99_ticks", "median_ns", "p99_ns"},
                   {}};
  for (const OpCost& c : costs) {
    for (const auto& [stat, ticks] : {std::pair{"median", c.median_ticks}, {"p99", c.p99_ticks}}) {
      result.metrics.push_back(gauge("jitterd_kernel_cost_seconds",
                                     "Cost of one kernel operation, by statistic over the probe's samples.",
                                     {{"op", c.op}, {"stat", stat}}, scale.to_seconds(ticks)));
      result.metrics.push_back(gauge("jitterd_kernel_cost_ticks",
                                     "Cost of one kernel operation in counter ticks, by statistic.",
                                     {{"op", c.op}, {"stat", stat}}, static_cast<double>(ticks)));
    }
    table.rows.push_back({c.op, std::to_string(c.samples), std::to_string(c.min_ticks),
                          std::to_string(c.median_ticks), std::to_string(c.p99_ticks),
                          format_number(scale.to_seconds(c.median_ticks) * 1e9, 1),
                          format_number(scale.to_seconds(c.p99_ticks) * 1e9, 1)});
  }
  result.tables.push_back(std::move(table));
  result.notes.push_back(
      "each sample is bracketed by two ordered counter reads, so it includes one counter read; "
      "the first sample of each operation is discarded");
  return result;
}

}  // namespace jitterd
