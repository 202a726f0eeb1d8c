// SPDX-License-Identifier: Apache-2.0
#include "probes/kernel_cost_probe.h"

#include <algorithm>
#include <string_view>

#include "measure/op_cost.h"
#include "watch/sched_counters.h"

namespace jitterd {

std::optional<double> cpu_shared(const HostReader& host, std::chrono::nanoseconds spin) {
  const auto waited = [&]() -> std::optional<std::uint64_t> {
    const std::optional<std::string> text = host.read_proc("thread-self/schedstat");
    if (!text) return std::nullopt;
    const std::optional<SchedTimes> times = parse_thread_schedstat(*text);
    return times ? std::optional<std::uint64_t>(times->wait_ns) : std::nullopt;
  };
  const std::optional<std::uint64_t> before = waited();
  const auto start = std::chrono::steady_clock::now();
  auto now = start;
  while ((now = std::chrono::steady_clock::now()) - start < spin) {
  }
  const std::optional<std::uint64_t> after = waited();
  const double wall_ns = std::chrono::duration<double, std::nano>(now - start).count();
  if (!before || !after || *after < *before || wall_ns <= 0) return std::nullopt;
  return std::min(1.0, static_cast<double>(*after - *before) / wall_ns);
}

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
  std::vector<std::optional<double>> shared;
  // One borrow of the CPU per operation (a sampled CPU's sampler resumes in between).
  for (std::size_t op = 0; op < kernel_cost_ops().size(); ++op) {
    context.check_cancelled();
    context.run_on_cpu(cpu, [&] {
      // The operations that wait for another task to run on their CPU (the child).
      const std::string_view name = kernel_cost_ops()[op];
      const bool scheduled = name == "thread_create_join" || name == "fork_wait";
      shared.push_back(scheduled ? cpu_shared(context.host, kContentionSpin) : std::nullopt);
      costs.push_back(measure_kernel_cost(context.method, op, settings_.samples));
    });
  }
  const TickScale scale(context.frequency.hertz);
  ProbeResult result;
  ProbeTable table{
      "kernel operation costs on cpu " + std::to_string(cpu),
      {"op", "samples", "min_ticks", "median_ticks", "p99_ticks", "median_ns", "p99_ns", "cpu_shared"},
      {}};
  result.metrics = kernel_cost_metrics(costs, scale);
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const OpCost& c = costs[i];
    result.samples.push_back({{{"op", c.op}},
                              {{"median_ticks", 0.5}, {"p99_ticks", 0.99}, {"median_ns", 0.5}, {"p99_ns", 0.99}},
                              1e9 / context.frequency.hertz,
                              grouped_values(c.ticks)});
    table.rows.push_back({c.op, c.samples, c.min_ticks, c.median_ticks, c.p99_ticks,
                          Cell(scale.to_seconds(c.median_ticks) * 1e9, 1),
                          Cell(scale.to_seconds(c.p99_ticks) * 1e9, 1), shared[i] ? Cell(*shared[i], 3) : Cell()});
  }
  result.tables.push_back(std::move(table));
  result.notes.push_back(
      "each sample is bracketed by two ordered counter reads, so it includes one counter read; "
      "the first sample of each operation is discarded");
  result.notes.push_back(
      "cpu_shared: before thread_create_join and fork_wait, which wait for a task to run on the cpu, the share of "
      "a " +
      std::to_string(kContentionSpin.count()) + " ms spin there spent waiting for the cpu; above " +
      std::to_string(kCpuSharedAtMost).substr(0, 4) +
      " compare leaves them untested (their cost is then mostly the scheduler's wait)");
  return result;
}

}  // namespace jitterd
