// SPDX-License-Identifier: Apache-2.0
#include "probes/kernel_cost_probe.h"

#include "measure/op_cost.h"

namespace jitterd {

std::vector<ProbeMetric> kernel_cost_metrics(const std::vector<OpCost>& costs, const TickScale& scale) {
  std::vector<ProbeMetric> out;
  for (const OpCost& c : costs) {
    out.push_back(summary_metric(
        "jitterd_kernel_cost_seconds",
        "Cost of one kernel operation over the probe's samples (quantile 0 is the minimum).", {{"op", c.op}},
        {{0, scale.to_seconds(c.min_ticks)},
         {0.5, scale.to_seconds(c.median_ticks)},
         {0.99, scale.to_seconds(c.p99_ticks)}},
        c.samples, scale.to_seconds(c.sum_ticks)));
  }
  return out;
}

ProbeResult KernelCostProbe::run(ProbeContext& context) {
  const int cpu = settings_.cpu.value_or(context.housekeeping.front());
  std::vector<OpCost> costs;
  // One borrow of the CPU per operation (a sampled CPU's sampler resumes in between).
  for (std::size_t op = 0; op < kernel_cost_ops().size(); ++op) {
    context.check_cancelled();
    context.run_on_cpu(cpu, [&] { costs.push_back(measure_kernel_cost(context.method, op, settings_.samples)); });
  }
  const TickScale scale(context.frequency.hertz);
  ProbeResult result;
  ProbeTable table{"kernel operation costs on cpu " + std::to_string(cpu),
                   {"op", "samples", "min_ticks", "median_ticks", "p99_ticks", "median_ns", "p99_ns"},
                   {}};
  result.metrics = kernel_cost_metrics(costs, scale);
  for (const OpCost& c : costs) {
    result.samples.push_back({{{"op", c.op}},
                              {{"median_ticks", 0.5}, {"p99_ticks", 0.99}, {"median_ns", 0.5}, {"p99_ns", 0.99}},
                              1e9 / context.frequency.hertz,
                              grouped_values(c.ticks)});
    table.rows.push_back({c.op, c.samples, c.min_ticks, c.median_ticks, c.p99_ticks,
                          Cell(scale.to_seconds(c.median_ticks) * 1e9, 1),
                          Cell(scale.to_seconds(c.p99_ticks) * 1e9, 1)});
  }
  result.tables.push_back(std::move(table));
  result.notes.push_back(
      "each sample is bracketed by two ordered counter reads, so it includes one counter read; "
      "the first sample of each operation is discarded");
  return result;
}

}  // namespace jitterd
